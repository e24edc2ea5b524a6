"""A host call that runs another sandboxed call does it where its native stack has room.

wasmtime lets each store's wasm use ``max_wasm_stack`` (2 MiB) below the point where the host
entered it, per store. An inner call made from a host call (``tools.x(...)``) enters a new
store further down the same thread's stack, so a chain of depth d could need (d + 1) x 2 MiB
plus the host's frames: a chain whose every level recursed as deep as QuickJS allows died of
SIGSEGV at the 6th store on an 8 MiB thread, the process instead of the call ending with a
kind. So a thread holds at most two stores: on a thread with :data:`INLINE_STACK_BYTES` of
stack or more, the first inner level runs right there (the common case, a snippet calling
leaf tools, never leaves its thread); any other runs on a worker thread whose whole stack is
its own (:data:`STACK_BYTES`), which again runs one level inline, while the calling thread
waits. Workers are kept for reuse and end after :data:`IDLE_S` unused. A hand-off costs
~15 µs on an idle machine, but up to a millisecond under load, when the woken thread waits
for the GIL behind others: the reason the first level stays inline.
"""

from __future__ import annotations

import contextvars
import ctypes
import queue
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from toolfoundry.spec.limits import MIB

T = TypeVar("T")

# Two stores' wasm frames (WASM_STACK, 2 MiB each) plus the host's: the foundry's call path,
# wasmtime's entry and trap handling. Reserved address space; only touched pages are used.
STACK_BYTES = 8 * MIB
# A thread with this much stack runs one inner level inline (two stores, ~3 MiB at most
# measured, plus the host's frames); a smaller or unknown one hands every inner call over.
INLINE_STACK_BYTES = 6 * MIB
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


class _ThreadState(threading.local):
    inline = False  # a store already runs inline above this one on this thread
    stack_bytes: int | None = -1  # -1: not read yet; None: unknown


_state = _ThreadState()


def run_nested(fn: Callable[[], T]) -> T:
    """``fn()`` (a call that runs another store) inline when this thread has room for one
    more store, else on a worker thread of the process's :class:`NestedRunner`."""
    state = _state
    if state.stack_bytes == -1:
        state.stack_bytes = thread_stack_bytes()
    if state.inline or state.stack_bytes is None or state.stack_bytes < INLINE_STACK_BYTES:
        return _runner.run(fn)
    state.inline = True
    try:
        return fn()
    finally:
        state.inline = False


def thread_stack_bytes() -> int | None:
    """The size of the calling thread's stack (glibc's ``pthread_getattr_np``), or None where
    it cannot be read."""
    try:
        libc = ctypes.CDLL(None)
        libc.pthread_self.restype = ctypes.c_ulong
        attr = ctypes.create_string_buffer(256)  # pthread_attr_t, with room to spare
        if libc.pthread_getattr_np(ctypes.c_ulong(libc.pthread_self()), attr) != 0:
            return None
        try:
            base, size = ctypes.c_void_p(), ctypes.c_size_t()
            if libc.pthread_attr_getstack(attr, ctypes.byref(base), ctypes.byref(size)) != 0:
                return None
            return int(size.value)
        finally:
            libc.pthread_attr_destroy(attr)
    except (OSError, AttributeError):  # no glibc here
        return None
