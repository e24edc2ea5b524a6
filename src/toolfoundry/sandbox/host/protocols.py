"""The seams between the sandbox engine and its host capabilities.

The engine knows only these protocols; fetch, storage and their backends plug in behind them.
Host handlers never raise into the engine: they return a JSON-ready answer, errors included.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

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
    registry; the foundry hands one to the other.
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
