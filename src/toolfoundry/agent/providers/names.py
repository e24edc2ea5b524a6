"""Tool names as one vendor accepts them, with the way back to the registry's names.

Registry names already follow the portable pattern of ``toolfoundry.spec.names``; the map
still guards each request (declared tools, workflows and future vendors may be stricter)
and keeps two different tools from ever sharing a wire name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence

from toolfoundry.spec import ToolSpec

_DISALLOWED = re.compile(r"[^a-zA-Z0-9_-]")


class ToolNames:
    """Wire names for one request's tools and the reverse map.

    Args:
        names: the tools' own names.
        max_length: the vendor's longest accepted name.
    """

    def __init__(self, names: Iterable[str], *, max_length: int = 64) -> None:
        self._wire: dict[str, str] = {}
        self._back: dict[str, str] = {}
        for name in names:
            wire = _sanitise(name, max_length)
            if wire in self._back and self._back[wire] != name:
                digest = hashlib.sha256(name.encode()).hexdigest()[:8]
                wire = f"{wire[: max_length - 9]}_{digest}"
            self._wire[name] = wire
            self._back[wire] = name

    def wire(self, name: str) -> str:
        """The name sent to the vendor for ``name``."""
        return self._wire.get(name) or _sanitise(name, 64)

    def tool(self, wire_name: str) -> str:
        """The tool a name from the vendor stands for (unknown names come back unchanged)."""
        return self._back.get(wire_name, wire_name)

    def specs(self, specs: Sequence[ToolSpec]) -> list[ToolSpec]:
        """The specs renamed to their wire names (everything else untouched)."""
        return [
            s if self.wire(s.name) == s.name else s.replace(name=self.wire(s.name)) for s in specs
        ]


def _sanitise(name: str, max_length: int) -> str:
    cleaned = _DISALLOWED.sub("_", name) or "_"
    if not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "_" + cleaned
    return cleaned[:max_length]
