"""Code -> ToolSpec: typed Python functions (with docstrings) and argparse parsers."""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "tool": "toolfoundry.declare.function",
    "from_function": "toolfoundry.declare.function",
    "FunctionTool": "toolfoundry.declare.function",
    "DeclarationError": "toolfoundry.declare.errors",
    "from_argparse": "toolfoundry.declare.argparse_parser",
    "ArgparseCommand": "toolfoundry.declare.argparse_parser",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolfoundry.declare' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = sorted(_LAZY)
