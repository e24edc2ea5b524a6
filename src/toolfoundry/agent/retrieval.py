"""Which tools a model is offered on a turn.

A small library is offered whole. A large one (more than ``top_k`` active tools) is cut to
the ``top_k`` tools that full-text search ranks best for the task, plus the tools this run
has already met: created, called, or found through ``search_tools``. The meta-tools are
always offered, and a registry tool never shadows one of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from toolfoundry.spec import ToolSpec

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry


def offered_tools(
    foundry: Foundry,
    task: str,
    *,
    top_k: int | None,
    always: Sequence[ToolSpec],
    pinned: Iterable[str] = (),
) -> list[ToolSpec]:
    """The registry tools to offer for ``task``, then ``always`` (meta-tools, declared tools).

    Args:
        foundry: the foundry whose active tools are candidates.
        task: the run's task, used as the search query.
        top_k: the most registry tools offered by relevance; None offers every active tool.
        always: specs offered on every turn, after the registry's.
        pinned: registry tools offered whatever their rank (met earlier in the run).
    """
    reserved = {s.name for s in always}
    active = [s for s in foundry.active_specs() if s.name not in reserved]
    if top_k is not None and len(active) > top_k:
        # a whole task (with its data) is no search query: rank, but keep every match
        wanted = [hit.name for hit in foundry.search(task, k=top_k, floor=0.0)]
        wanted_set = set(wanted) | set(pinned)
        active = [s for s in active if s.name in wanted_set]
    return [*active, *always]
