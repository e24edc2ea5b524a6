"""toolfoundry: let an LLM agent make its own tools safely, and keep them.

Heavy parts (the registry, the sandbox) load on first use, so importing the package is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolfoundry.base.lazy import lazy_names as _lazy_names
from toolfoundry.spec import (
    CallError,
    CallResult,
    Capabilities,
    ErrorKind,
    Level,
    Param,
    StepResult,
    StepStatus,
    ToolSpec,
)

if TYPE_CHECKING:  # what __getattr__ below returns, for type checkers (tests keep both equal)
    from toolfoundry.declare import from_argparse, from_function, tool
    from toolfoundry.foundry import Foundry
    from toolfoundry.sandbox import run_js

_LAZY = {
    "tool": "toolfoundry.declare",
    "from_function": "toolfoundry.declare",
    "from_argparse": "toolfoundry.declare",
    "Foundry": "toolfoundry.foundry",
    "run_js": "toolfoundry.sandbox",
}
__getattr__ = _lazy_names(__name__, _LAZY)


__all__ = [
    "CallError",
    "CallResult",
    "Capabilities",
    "ErrorKind",
    "Foundry",
    "Level",
    "Param",
    "StepResult",
    "StepStatus",
    "ToolSpec",
    "from_argparse",
    "from_function",
    "run_js",
    "tool",
]
