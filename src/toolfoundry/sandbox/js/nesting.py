"""A host call that runs another sandboxed call does it on a native stack of its own.

wasmtime lets each store's wasm use ``max_wasm_stack`` (2 MiB) below the point where the host
entered it, per store. An inner call made from a host call (``tools.x(...)``) enters a new
store further down the same thread's stack, so a chain of depth d could need (d + 1) x 2 MiB
plus the host's frames: past the 8 MiB of a usual thread at depth 3, where the process would
die of SIGSEGV instead of the call ending with a kind. So every inner call runs on a worker
thread whose whole stack is its own (:data:`STACK_BYTES`), while the calling thread waits;
a chain holds one worker per level. Workers are kept for reuse (a hand-off costs ~15 µs) and
end after :data:`IDLE_S` unused.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from toolfoundry.spec.limits import MIB

T = TypeVar("T")

# The wasm frames (WASM_STACK, 2 MiB) plus the host's: the foundry's call path, wasmtime's
# entry and trap handling, the libraries. Reserved address space; only touched pages are used.
STACK_BYTES = 8 * MIB
IDLE_S = 30.0

_Job = tuple[Callable[[], Any], list[Any], threading.Lock]


class _Worker:
    __slots__ = ("inbox",)

    def __init__(self) -> None:
        self.inbox: queue.SimpleQueue[_Job] = queue.SimpleQueue()


class NestedRunner:
    """Runs callables on reusable worker threads with a fresh native stack each."""

    def __init__(self, stack_bytes: int = STACK_BYTES, idle_s: float = IDLE_S) -> None:
        self._stack_bytes = stack_bytes
        self._idle_s = idle_s
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()

    def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` on a worker thread (in a copy of the caller's context); its result or its
        exception, here."""
        context = contextvars.copy_context()
        box: list[Any] = []
        done = threading.Lock()
        done.acquire()
        self._worker().inbox.put((lambda: context.run(fn), box, done))
        done.acquire()
        ok, value = box
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]

    def _worker(self) -> _Worker:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        worker = _Worker()
        with _stack_size_lock:
            previous = threading.stack_size(self._stack_bytes)
            try:
                thread = threading.Thread(
                    target=self._serve, args=(worker,), name="tf-nested", daemon=True
                )
                thread.start()
            finally:
                threading.stack_size(previous)
        return worker

    def _serve(self, worker: _Worker) -> None:
        while True:
            try:
                fn, box, done = worker.inbox.get(timeout=self._idle_s)
            except queue.Empty:
                with self._lock:
                    if worker in self._idle:  # else it was just handed a job: keep serving
                        self._idle.remove(worker)
                        return
                continue
            try:
                box[:] = [True, fn()]
            except BaseException as exc:  # handed back to the caller, raised there
                box[:] = [False, exc]
            with self._lock:
                self._idle.append(worker)
            done.release()


_stack_size_lock = threading.Lock()
_runner = NestedRunner()


def run_nested(fn: Callable[[], T]) -> T:
    """``fn()`` on a native stack of its own (the process's :class:`NestedRunner`)."""
    return _runner.run(fn)
