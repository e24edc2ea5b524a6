"""A located problem: what the JSON gate, the schema validator and argument checks report."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with the arguments, located by a JSON path such as ``$.items[2].id``."""

    path: str
    message: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "message": self.message}
