"""The seam of code mode: a script's ``tools.NAME(args)`` answered by whoever keeps the tools.

The sandbox knows nothing of a registry. A call whose policy has a :class:`ToolsProvider`
gets one :class:`ToolsHandler` for its duration (``provider.handler(deadline=..., caller=...)``),
and every ``tools`` call the script makes becomes one :class:`ToolRequest` to it. The foundry
implements the provider (``foundry/inner_calls.py``: each request is a real call of the callee,
with the callee's own capabilities); the forge's test runner implements it over a test's
fixtures and the real callees.

    class Echo:                                   # a provider answering every call itself
        def handler(self, *, deadline, caller):
            return EchoHandler()

    class EchoHandler:
        def call(self, request):
            return CallResult.success({"tool": request.name, "args": request.args})

        def close(self):
            pass

A handler never raises: a failed inner call is a failed :class:`CallResult` (its kind is what
the script's ``ToolError`` carries). The sandbox checks the request's shape and the JSON gate
before the handler sees it, refuses requests once the script has answered, and calls
:meth:`ToolsHandler.close` when the call ends.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from toolfoundry.spec import CallResult


@dataclass(frozen=True)
class ToolRequest:
    """One inner call a script made.

    Attributes:
        name: the tool's name, as the script wrote it (not checked against any pattern here).
        args: the arguments, a JSON object that passed the JSON gate.
        version: the version asked for (``tools.call(name, args, { version })``), or None
            for the current active one.
    """

    name: str
    args: dict[str, Any]
    version: int | None = None


class ToolsHandler(Protocol):
    """Answers the ``tools`` calls of one sandboxed call."""

    def call(self, request: ToolRequest) -> CallResult:
        """Make one inner call; never raises. Runs on a thread of its own native stack
        (``sandbox/js/nesting.py``), so it may itself run a sandboxed call."""
        ...

    def close(self) -> None:
        """The call has ended: refuse every later request."""
        ...


class ToolsProvider(Protocol):
    """Makes the :class:`ToolsHandler` of one call."""

    def handler(self, *, deadline: float, caller: str | None) -> ToolsHandler:
        """``deadline`` is the ``time.monotonic()`` instant the calling script must end by
        (an inner call must end by it too); ``caller`` is the policy's ``tool`` (None for a
        one-off script)."""
        ...
