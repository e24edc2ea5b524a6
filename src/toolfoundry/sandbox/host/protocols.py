"""The seams between the sandbox engine and its host capabilities.

The engine knows only these protocols; fetch, storage, code mode's ``tools`` and their
backends plug in behind them. Host handlers never raise into the engine: they return a
JSON-ready answer (or a :class:`~toolfoundry.spec.CallResult`), errors included.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from toolfoundry.spec import CallResult
from toolfoundry.spec.local_storage import StorageQuota, StorageRefusal


class FetchHandler(Protocol):
    """Answers one fetch request from a script, within one call.

    ``request`` is ``{"url": str, "method": str, "headers": [[name, value], ...],
    "body": str | None}`` (body base64-encoded). The answer is either ``{"status": int,
    "statusText": str, "headers": [[name, value], ...], "body": str (base64), "url": str}`` or
    ``{"error": {"kind": "capability_denied" | "timeout" | "runtime_error", "message": str}}``.
    """

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]: ...


class FetchProvider(Protocol):
    """Makes a FetchHandler for one call: a real network policy, or test fixtures."""

    @property
    def max_requests(self) -> int:
        """The requests one call may make, each counted whether answered or refused
        (``[fetch] max_requests``: ``spec.limits.FETCH_REQUESTS`` by default)."""
        ...

    def handler(self, *, deadline: float, tool: str | None) -> FetchHandler:
        """``deadline`` is a ``time.monotonic()`` instant the call must not outlive."""
        ...


class StorageBackend(Protocol):
    """Server-side store behind ``localStorage``: string keys and values per namespace.

    The backend enforces the quota in its own write: :meth:`set_item` checks and writes as one
    atomic step under the namespace's lock, held across every thread and process that shares
    the store, so concurrent writers never take a namespace over its quota (the rule itself is
    ``spec/local_storage.py``'s, the same for every backend). Backends match by shape: the
    registry's ``SqlStorage`` imports nothing of the sandbox, and the sandbox nothing of the
    registry; the foundry hands one to the other. A store that fails under any method raises
    ``spec.local_storage.StorageUnavailable``, nothing else.
    """

    def get_item(self, namespace: str, key: str) -> str | None: ...

    def set_item(
        self, namespace: str, key: str, value: str, quota: StorageQuota
    ) -> StorageRefusal | None:
        """Store ``value`` under ``key`` unless ``quota`` refuses it (then nothing changes).

        Returns:
            None when stored, else why not.
        """
        ...

    def remove_item(self, namespace: str, key: str) -> None: ...

    def clear(self, namespace: str) -> None: ...

    def keys(self, namespace: str) -> list[str]:
        """Keys in a stable order (so ``localStorage.key(i)`` is stable)."""
        ...

    def usage(self, namespace: str) -> tuple[int, int]:
        """(number of keys, total bytes of keys and values in UTF-8)."""
        ...


# ---- code mode: a script's `tools.NAME(args)` -----------------------------------------------
# The sandbox knows nothing of a registry. A call whose policy has a ToolsProvider gets one
# ToolsHandler for its duration, and every `tools` call the script makes becomes one
# ToolRequest to it. The foundry implements the provider (foundry/inner_calls.py: each request
# is a real call of the callee, with the callee's own capabilities); the forge's test runner
# implements it over a test's fixtures and the real callees. The sandbox checks a request's
# shape and the JSON gate before the handler sees it, gates the answer's value, refuses
# requests once the script has answered, and closes the handler when the call ends:
#
#     class Echo:                                  # a provider answering every call itself
#         def handler(self, *, deadline, caller):
#             return self
#         def call(self, request):
#             return CallResult.success({"tool": request.name, "args": request.args})
#         def close(self):
#             pass


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
        """Make one inner call; never raises (a failed call is a failed CallResult, whose
        kind the script's ``ToolError`` carries). Runs on a thread with a native stack of its
        own (``sandbox/js/nesting.py``), so it may itself run a sandboxed call."""
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
