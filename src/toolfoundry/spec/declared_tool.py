"""A declared tool: its spec plus the code that runs it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from toolfoundry.spec.result import CallResult
from toolfoundry.spec.tool import ToolSpec


@runtime_checkable
class DeclaredTool(Protocol):
    """Anything that has a ToolSpec and can be called with JSON arguments.

    Calls never raise for bad input or a failing tool: they return a CallResult whose
    error kind says what went wrong.
    """

    @property
    def spec(self) -> ToolSpec: ...

    def call(self, arguments: Mapping[str, Any]) -> CallResult: ...

    async def acall(self, arguments: Mapping[str, Any]) -> CallResult: ...
