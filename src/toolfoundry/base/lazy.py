"""Names a package offers but loads on first use: a module ``__getattr__`` (PEP 562).

A package lists ``_LAZY = {name: module}`` beside an ``if TYPE_CHECKING:`` import of the same
names (tests/test_public_api.py keeps the two equal), then ``__getattr__ = lazy_names(__name__,
_LAZY)``: importing the package stays cheap, and each name costs its module only when used.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package`` that imports ``table[name]`` for ``name``.

    The name is then kept in the package, so later uses (a ``from package import name``
    on a call path) find it without going through the import system again.
    """

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
