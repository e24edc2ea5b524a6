"""The one tool order every projection uses, so output never depends on input order."""

from __future__ import annotations

from collections.abc import Iterable

from toolfoundry.spec import ToolSpec

UNGROUPED = ""


def ordered(specs: Iterable[ToolSpec]) -> list[ToolSpec]:
    """Specs sorted by group (ungrouped first), then name; duplicate names are refused.

    Raises:
        ValueError: two specs share a name (a catalogue lists each tool once).
    """
    result = sorted(specs, key=lambda s: (s.group or UNGROUPED, s.name))
    seen: set[str] = set()
    for spec in result:
        if spec.name in seen:
            raise ValueError(f"tool {spec.name!r} appears twice in the catalogue")
        seen.add(spec.name)
    return result
