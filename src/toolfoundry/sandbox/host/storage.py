"""localStorage on the host: quotas, the request handler, and the in-memory backend.

Scripts reach storage only through :class:`StorageHook`, which validates every request and
enforces the quotas before a backend sees it. Backends only store: :class:`MemoryStorage`
here (test runs, ``toolfoundry js run``), and the registry's database for registered tools
(``toolfoundry.registry.SqlStorage``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolfoundry.sandbox.host.protocols import StorageBackend


@dataclass(frozen=True)
class StorageQuota:
    """Per-namespace limits; exceeding one raises ``QuotaExceededError`` in the script.

    Attributes:
        max_keys: number of keys.
        max_key_bytes: UTF-8 size of one key.
        max_value_bytes: UTF-8 size of one value.
        max_total_bytes: UTF-8 size of all keys and values together.
    """

    max_keys: int = 1000
    max_key_bytes: int = 1024
    max_value_bytes: int = 256 * 1024
    max_total_bytes: int = 5 * 1024 * 1024


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


class StorageHook:
    """Answers the prelude's storage requests for one namespace, within its quota.

    A request is ``{"op": "get" | "set" | "remove" | "clear" | "key" | "length" | "keys", ...}``;
    the answer is ``{"value": ...}`` or ``{"error": {"kind": ..., "message": ...}}`` where kind
    ``quota`` becomes a ``QuotaExceededError`` in the script.
    """

    def __init__(self, backend: StorageBackend | None, namespace: str, quota: StorageQuota) -> None:
        self.backend = backend
        self.namespace = namespace
        self.quota = quota

    def handle(self, request: object) -> dict[str, Any]:
        """Validate and run one request; never raises for bad input."""
        if self.backend is None:
            return _error("capability_denied", "localStorage is not enabled for this tool")
        if not isinstance(request, Mapping):
            return _error("runtime_error", "storage: malformed request")
        op = request.get("op")
        key = request.get("key")
        ns = self.namespace
        backend = self.backend
        if op in ("get", "set", "remove") and not isinstance(key, str):
            return _error("runtime_error", "storage: key must be a string")
        if op == "get":
            assert isinstance(key, str)
            return {"value": backend.get_item(ns, key)}
        if op == "set":
            assert isinstance(key, str)
            value = request.get("value")
            if not isinstance(value, str):
                return _error("runtime_error", "storage: value must be a string")
            problem = self._over_quota(key, value)
            if problem:
                return _error("quota", problem)
            backend.set_item(ns, key, value)
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

    def _over_quota(self, key: str, value: str) -> str | None:
        q = self.quota
        key_bytes, value_bytes = _size(key), _size(value)
        if key_bytes > q.max_key_bytes:
            return f"key is {key_bytes} bytes; the limit is {q.max_key_bytes}"
        if value_bytes > q.max_value_bytes:
            return f"value is {value_bytes} bytes; the limit is {q.max_value_bytes}"
        assert self.backend is not None
        count, total = self.backend.usage(self.namespace)
        old = self.backend.get_item(self.namespace, key)
        if old is None:
            count += 1
            total += key_bytes + value_bytes
        else:
            total += value_bytes - _size(old)
        if count > q.max_keys:
            return f"{count} keys; the limit is {q.max_keys}"
        if total > q.max_total_bytes:
            return f"storage would hold {total} bytes; the limit is {q.max_total_bytes}"
        return None


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"kind": kind, "message": message}}


class MemoryStorage:
    """A StorageBackend in a dict: for tests and one-off runs (``toolfoundry js run``)."""

    def __init__(self) -> None:
        self._data: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def get_item(self, namespace: str, key: str) -> str | None:
        with self._lock:
            return self._data.get(namespace, {}).get(key)

    def set_item(self, namespace: str, key: str, value: str) -> None:
        with self._lock:
            self._data.setdefault(namespace, {})[key] = value

    def remove_item(self, namespace: str, key: str) -> None:
        with self._lock:
            self._data.get(namespace, {}).pop(key, None)

    def clear(self, namespace: str) -> None:
        with self._lock:
            self._data.pop(namespace, None)

    def keys(self, namespace: str) -> list[str]:
        with self._lock:
            return sorted(self._data.get(namespace, {}))

    def usage(self, namespace: str) -> tuple[int, int]:
        with self._lock:
            items = self._data.get(namespace, {})
            return len(items), sum(_size(k) + _size(v) for k, v in items.items())
