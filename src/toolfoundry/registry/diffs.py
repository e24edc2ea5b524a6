"""What changed between two versions of a tool, as one unified diff."""

from __future__ import annotations

import difflib
import json
from typing import Any

from toolfoundry.registry.records import ToolVersion


def version_diff(old: ToolVersion, new: ToolVersion) -> str:
    """Unified diff from ``old`` to ``new``: code, description, parameters, capabilities."""
    name = new.name
    a, b = f"{name}@{old.version}", f"{name}@{new.version}"
    parts = [
        _udiff(old.code, new.code, f"{a}/code.js", f"{b}/code.js"),
        _udiff(old.description, new.description, f"{a}/description", f"{b}/description"),
        _udiff(
            _pretty(old.parameters),
            _pretty(new.parameters),
            f"{a}/parameters.json",
            f"{b}/parameters.json",
        ),
        _udiff(
            _pretty(old.capabilities.to_dict()),
            _pretty(new.capabilities.to_dict()),
            f"{a}/capabilities.json",
            f"{b}/capabilities.json",
        ),
    ]
    return "".join(p for p in parts if p)


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _udiff(a: str, b: str, from_name: str, to_name: str) -> str:
    lines = difflib.unified_diff(
        a.splitlines(keepends=True), b.splitlines(keepends=True), from_name, to_name
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
