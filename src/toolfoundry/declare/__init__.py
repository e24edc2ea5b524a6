"""Code -> ToolSpec: typed Python functions (with docstrings) and argparse parsers."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what __getattr__ below returns, for type checkers (tests keep both equal)
    from toolfoundry.declare.argparse_parser import ArgparseCommand, from_argparse
    from toolfoundry.declare.errors import DeclarationError
    from toolfoundry.declare.function import FunctionTool, from_function, tool

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


__all__ = [
    "ArgparseCommand",
    "DeclarationError",
    "FunctionTool",
    "from_argparse",
    "from_function",
    "tool",
]
