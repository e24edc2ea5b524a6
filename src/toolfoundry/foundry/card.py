"""Everything a model needs to read before it improves a tool: ``show_tool``'s answer.

One version's description, schemas (and their TypeScript signature, for code mode), code and
capabilities, the suite it was gated by (earlier versions' tests included, as the review packet
shows them), and how the tool has fared in use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolfoundry.foundry.review import gating_suite, tool_links

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry


def tool_card(fd: Foundry, name: str, version: int | None = None) -> dict[str, Any]:
    """The version (the current one by default) with its gating suite, usage and last error.

    Raises:
        RegistryError: ``not_found``.
    """
    from toolfoundry.catalog.typescript import declaration

    v = fd.show(name, version)
    last = fd.registry.last_failures(name).get(name)
    return {
        **v.summary(),
        "language": v.language,
        "description": v.description,
        "parameters": v.parameters,
        "returns": v.returns,
        # what tools.NAME takes and gives in code mode, as TypeScript (catalog/typescript.py)
        "signature": declaration(v.spec).signature,
        "code": v.code,
        "fixtures": v.fixtures,  # canned HTTP answers every test of this version sees
        "suite": gating_suite(v),
        # code mode: the tools it calls (tested against which version) and those calling it
        **tool_links(fd, v),
        "usage": fd.usage(name).to_dict(),  # of the tool, whichever version answered
        "last_error": None if last is None else {"kind": last.kind, "at": last.at.isoformat()},
    }
