"""Code -> ToolSpec: typed Python functions (with docstrings) and argparse parsers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolfoundry.base.lazy import lazy_names

if TYPE_CHECKING:  # what __getattr__ below returns, for type checkers (tests keep both equal)
    from toolfoundry.declare.argparse.parser import ArgparseCommand, from_argparse
    from toolfoundry.declare.errors import DeclarationError
    from toolfoundry.declare.function import FunctionTool, from_function, tool

_LAZY = {
    "tool": "toolfoundry.declare.function",
    "from_function": "toolfoundry.declare.function",
    "FunctionTool": "toolfoundry.declare.function",
    "DeclarationError": "toolfoundry.declare.errors",
    "from_argparse": "toolfoundry.declare.argparse.parser",
    "ArgparseCommand": "toolfoundry.declare.argparse.parser",
}
__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "ArgparseCommand",
    "DeclarationError",
    "FunctionTool",
    "from_argparse",
    "from_function",
    "tool",
]
