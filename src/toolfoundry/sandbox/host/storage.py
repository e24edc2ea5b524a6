"""localStorage on the host: the request handler and the in-memory backend.

Scripts reach storage only through :class:`StorageHook`, which validates every request and
hands each write to the backend with the namespace's quota; the backend checks and writes in
one atomic step (``spec/local_storage.py``). Backends: :class:`MemoryStorage` here (test runs,
``toolfoundry js run``), and the registry's database for registered tools
(``toolfoundry.registry.SqlStorage``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from toolfoundry.sandbox.host.protocols import StorageBackend
from toolfoundry.spec.local_storage import (
    StorageQuota,
    StorageRefusal,
    StorageUnavailable,
    entry_refusal,
    key_refusal,
    text_bytes,
    usage_refusal,
)

__all__ = ["MemoryStorage", "StorageHook", "StorageQuota"]

log = logging.getLogger(__name__)
# What a script (and the call's caller) is told when the store fails: not the tool's fault.
UNAVAILABLE_MESSAGE = (
    "localStorage is unavailable: its store could not be read or written (the server's "
    "fault, not the tool's); retry later"
)


class StorageHook:
    """Answers the prelude's storage requests for one namespace, within its quota.

    A request is ``{"op": "get" | "set" | "remove" | "clear" | "key" | "length" | "keys", ...}``;
    the answer is ``{"value": ...}`` or ``{"error": {"kind": ..., "message": ...}}`` where kind
    ``quota`` becomes a ``QuotaExceededError`` in the script, and ``runtime_error`` (a key or
    value with a NUL, which no backend stores) a ``TypeError``, as does ``unavailable`` (the
    backend's store failed: :data:`UNAVAILABLE_MESSAGE`; uncaught, the call ends with that
    kind; the cause goes to this module's log, never to the script).
    """

    def __init__(self, backend: StorageBackend | None, namespace: str, quota: StorageQuota) -> None:
        self.backend = backend
        self.namespace = namespace
        self.quota = quota

    def handle(self, request: object) -> dict[str, Any]:
        """Validate and run one request; never raises for bad input or a failing store."""
        if self.backend is None:
            return _error("capability_denied", "localStorage is not enabled for this tool")
        if not isinstance(request, Mapping):
            return _error("runtime_error", "storage: malformed request")
        try:
            return self._run(request, self.backend)
        except StorageUnavailable as exc:
            log.warning("localStorage of %s: the store failed: %s", self.namespace, exc)
            return _error("unavailable", UNAVAILABLE_MESSAGE)

    def _run(self, request: Mapping[str, Any], backend: StorageBackend) -> dict[str, Any]:
        op = request.get("op")
        key = request.get("key")
        ns = self.namespace
        if op in ("get", "set", "remove"):
            if not isinstance(key, str):
                return _error("runtime_error", "storage: key must be a string")
            refusal = key_refusal(key)
            if refusal is not None:
                return _refused(refusal)
        if op == "get":
            assert isinstance(key, str)
            return {"value": backend.get_item(ns, key)}
        if op == "set":
            assert isinstance(key, str)
            value = request.get("value")
            if not isinstance(value, str):
                return _error("runtime_error", "storage: value must be a string")
            refusal = backend.set_item(ns, key, value, self.quota)
            if refusal is not None:
                return _refused(refusal)
            return {"value": None}
        if op == "remove":
            assert isinstance(key, str)
            backend.remove_item(ns, key)
            return {"value": None}
        if op == "clear":
            backend.clear(ns)
            return {"value": None}
        if op == "length":
            return {"value": backend.usage(ns)[0]}
        if op == "keys":
            return {"value": backend.keys(ns)}
        if op == "key":
            index = request.get("index")
            if not isinstance(index, int) or isinstance(index, bool) or index < 0:
                return {"value": None}
            keys = backend.keys(ns)
            return {"value": keys[index] if index < len(keys) else None}
        return _error("runtime_error", f"storage: unknown operation {op!r}")


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"kind": kind, "message": message}}


def _refused(refusal: StorageRefusal) -> dict[str, Any]:
    # "quota" is the prelude's QuotaExceededError; text no store keeps is the script's error
    return _error("quota" if refusal.kind == "quota" else "runtime_error", refusal.message)


class MemoryStorage:
    """A StorageBackend in a dict: for tests and one-off runs (``toolfoundry js run``).

    One lock guards every namespace; a write checks the quota and stores under it.
    """

    def __init__(self) -> None:
        self._data: dict[str, dict[str, str]] = {}
        self._bytes: dict[str, int] = {}  # per namespace: UTF-8 bytes of its keys and values
        self._lock = threading.Lock()

    def get_item(self, namespace: str, key: str) -> str | None:
        with self._lock:
            return self._data.get(namespace, {}).get(key)

    def set_item(
        self, namespace: str, key: str, value: str, quota: StorageQuota
    ) -> StorageRefusal | None:
        refusal = entry_refusal(key, value, quota)
        if refusal is not None:
            return refusal
        with self._lock:
            items = self._data.get(namespace, {})
            total = self._bytes.get(namespace, 0)
            old = items.get(key)
            old_bytes = None if old is None else text_bytes(old)
            refusal = usage_refusal(quota, (len(items), total), key, value, old_bytes)
            if refusal is not None:
                return refusal
            self._data.setdefault(namespace, {})[key] = value
            grown = text_bytes(value) + (text_bytes(key) if old_bytes is None else -old_bytes)
            self._bytes[namespace] = total + grown
        return None

    def remove_item(self, namespace: str, key: str) -> None:
        with self._lock:
            old = self._data.get(namespace, {}).pop(key, None)
            if old is not None:
                self._bytes[namespace] -= text_bytes(key) + text_bytes(old)

    def clear(self, namespace: str) -> None:
        with self._lock:
            self._data.pop(namespace, None)
            self._bytes.pop(namespace, None)

    def keys(self, namespace: str) -> list[str]:
        with self._lock:
            return sorted(self._data.get(namespace, {}))

    def usage(self, namespace: str) -> tuple[int, int]:
        with self._lock:
            return len(self._data.get(namespace, {})), self._bytes.get(namespace, 0)
