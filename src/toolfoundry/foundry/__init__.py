"""The orchestration: the only layer that sees the forge, the registry and the sandbox together.

- ``facade``: the public :class:`Foundry` (open, create, call, review, versions, search)
- ``create``: a draft through the forge into a registered version
- ``call``: a call through validation and the sandbox into usage
- ``review``: what a human reviewer is shown about a version
- ``meta_tools``: the foundry's own tools (create_tool, search_tools, ...) as declarations
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from toolfoundry.foundry.facade import Decision, Foundry

if TYPE_CHECKING:  # what __getattr__ below returns, for type checkers (tests keep both equal)
    from toolfoundry.foundry.create import CreateResult

# The create path loads the forge; opening a foundry to call or list tools does not need it.
_LAZY = {"CreateResult": "toolfoundry.foundry.create"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolfoundry.foundry' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = ["CreateResult", "Decision", "Foundry"]
