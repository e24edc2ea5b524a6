"""localStorage's limits and the one rule every backend applies to a write.

The quota is enforced by each backend's own write, with the check and the write as one atomic
step under the namespace's lock (a lock, a ``BEGIN IMMEDIATE`` transaction, a PostgreSQL
advisory lock). A check made above the backend (read the usage, decide, then write) let twelve
concurrent calls of one tool store 6.8 MB against 5 MiB: each read the usage before the
others wrote. The rule lives here, below both the sandbox and the registry, so the in-memory
backend and the registry's SQL one apply the same words.

What a backend may store: text without U+0000 (NUL), in keys and values alike. PostgreSQL's
``text`` cannot hold a NUL (the driver refused it, and the call ended in a trap that quoted
the driver), so one behaviour on every backend means refusing it on every backend, with the
same message, before anything is read or stored: a tool stores binary data as base64 or hex.
Lone surrogates never get this far: the JSON gate refuses them in the request.

A store that fails (its database: a full disk, a server that does not answer) is no refusal:
a backend raises :class:`StorageUnavailable`, and the script sees the kind ``unavailable`` in
the sandbox's words, never the driver's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

NUL = "\x00"
_NO_NUL = "may not contain U+0000 (NUL): no store keeps it; encode binary data (base64, hex)"


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


class StorageUnavailable(Exception):
    """A backend could not read or write its store; its message is the cause, for the
    operator's log only (the sandbox answers the script in words of its own)."""


@dataclass(frozen=True)
class StorageRefusal:
    """Why a localStorage write was not made (nothing was stored).

    Attributes:
        kind: ``quota`` (a limit of :class:`StorageQuota`: ``QuotaExceededError`` in the
            script) or ``invalid`` (text no backend stores: a ``TypeError``).
        message: what was refused and why, for the script and its caller.
    """

    kind: Literal["quota", "invalid"]
    message: str


def text_bytes(text: str) -> int:
    """The UTF-8 size of a key or value, as every quota counts it."""
    return len(text.encode("utf-8", "surrogatepass"))


def key_refusal(key: str) -> StorageRefusal | None:
    """Why no value can be read, written or removed under ``key``, or None."""
    if NUL in key:
        return StorageRefusal("invalid", f"localStorage: a key {_NO_NUL}")
    return None


def entry_refusal(key: str, value: str, quota: StorageQuota) -> StorageRefusal | None:
    """Why ``key: value`` may not be stored whatever the namespace holds, or None."""
    refusal = key_refusal(key)
    if refusal is not None:
        return refusal
    if NUL in value:
        return StorageRefusal("invalid", f"localStorage: a value {_NO_NUL}")
    key_size, value_size = text_bytes(key), text_bytes(value)
    if key_size > quota.max_key_bytes:
        return StorageRefusal(
            "quota", f"key is {key_size} bytes; the limit is {quota.max_key_bytes}"
        )
    if value_size > quota.max_value_bytes:
        return StorageRefusal(
            "quota", f"value is {value_size} bytes; the limit is {quota.max_value_bytes}"
        )
    return None


def usage_refusal(
    quota: StorageQuota,
    usage: tuple[int, int],
    key: str,
    value: str,
    old_value_bytes: int | None,
) -> StorageRefusal | None:
    """Why writing ``key: value`` would take the namespace over ``quota``, or None.

    Args:
        quota: the namespace's limits.
        usage: (keys, bytes of keys and values) the namespace holds now, read under the same
            lock as the write that follows.
        key: the key written.
        value: the value written.
        old_value_bytes: the UTF-8 size of the value ``key`` holds now, None when it is new.
    """
    count, total = usage
    if old_value_bytes is None:
        count += 1
        total += text_bytes(key) + text_bytes(value)
    else:
        total += text_bytes(value) - old_value_bytes
    if count > quota.max_keys:
        return StorageRefusal("quota", f"{count} keys; the limit is {quota.max_keys}")
    if total > quota.max_total_bytes:
        return StorageRefusal(
            "quota", f"storage would hold {total} bytes; the limit is {quota.max_total_bytes}"
        )
    return None
