"""One least-recently-used cache bounded by entries and by bytes, for every process-wide cache.

A long-running server sees inputs without end (drafts, schemas, versions); a cache keyed by
them must not grow with them. Each user gives a ``cost`` (the bytes an entry holds, the key
included: a 1 MB schema text kept as a key is 1 MB), and the cache drops its least recently
used entries while it holds more than ``max_entries`` or ``max_bytes``. An entry costing more
than ``max_bytes`` on its own is not kept at all. Thread-safe.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class SizedLRU(Generic[K, V]):
    """Least recently used, at most ``max_entries`` entries and ``max_bytes`` of ``cost``.

    Args:
        max_entries: entries kept at most.
        max_bytes: the sum of ``cost(key, value)`` kept at most.
        cost: what one entry holds, in bytes (an estimate is fine; it should not undercount).
    """

    def __init__(self, max_entries: int, max_bytes: int, cost: Callable[[K, V], int]) -> None:
        self.max_entries, self.max_bytes, self._cost = max_entries, max_bytes, cost
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            item = self._items.get(key)
            if item is None:
                return None
            self._items.move_to_end(key)
            return item[0]

    def put(self, key: K, value: V) -> V:
        """Keep ``value`` for ``key`` (replacing an older one) and return it."""
        size = self._cost(key, value)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            if size <= self.max_bytes:
                self._items[key] = (value, size)
                self._bytes += size
            while len(self._items) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped
        return value

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The kept value, or ``make()`` kept and returned (two threads may both make it)."""
        found = self.get(key)
        return found if found is not None else self.put(key, make())

    def pop(self, key: K) -> V | None:
        """Forget ``key``; its value, if one was kept."""
        with self._lock:
            item = self._items.pop(key, None)
            if item is None:
                return None
            self._bytes -= item[1]
            return item[0]

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def size(self) -> int:
        """The bytes held, by the entries' cost."""
        return self._bytes


def text_cost(*texts: str | bytes | None, overhead: int = 256) -> int:
    """A cost for entries whose size is mostly their texts: the texts' lengths plus
    ``overhead`` (the objects around them). A str counts one byte a character, what CPython
    stores for ASCII text (other text takes 2 or 4)."""
    return overhead + sum(len(t) for t in texts if t is not None)
