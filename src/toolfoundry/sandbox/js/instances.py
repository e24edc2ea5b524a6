"""Guest instances, the pool that prepares them, and the one timer that serves running calls.

A call's time limit is wasmtime's epoch interruption. :class:`CallTimer` is one thread that
sleeps until the next thing a running call needs: its clock's next millisecond (only once the
call has run that long) or its deadline. At a deadline it bumps the engine's epoch once; each
store's epoch callback (:func:`_on_epoch`) ends its own call only if its own deadline has
passed. A call that ends within its first millisecond costs the timer nothing: no wake-up,
no lock held by another thread.

The timer also advances the clock each running guest reads (``GuestClock``), so reading the
time inside the guest never crosses into the host.
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import wasmtime
from wasmtime import _bindings
from wasmtime import _ffi as ffi

from toolfoundry.sandbox.js import wasm_calls


class GuestClock:
    """The time one running guest reads: ``tf_clock`` in its memory (``guest/clock.c``).

    Two 64-bit words: the wall clock at the call's start and the time elapsed since, both in
    whole multiples of ``resolution_ns``. Only this object writes them: :meth:`start`, before
    the guest runs, then the timer thread (:meth:`advance`) while the call runs, so the
    elapsed time never goes back. Made with the instance, off the call path. The engine keeps
    linear memory from moving (``memory_may_move`` off), so the address stays valid until the
    store is dropped, which happens only after the timer has let go of the call
    (:meth:`CallTimer.end`).
    """

    __slots__ = ("_start_ns", "_words", "resolution_ns")

    def __init__(self, address: int, resolution_ns: int) -> None:
        self.resolution_ns = resolution_ns
        self._start_ns = 0
        self._words = (ctypes.c_uint64 * 2).from_address(address)

    def start(self) -> None:
        """The call starts now: set the wall clock and zero the elapsed time."""
        self._start_ns = time.monotonic_ns()
        wall_ns = time.time_ns()
        self._words[0] = wall_ns - wall_ns % self.resolution_ns
        self._words[1] = 0

    def advance(self) -> None:
        """Set the elapsed time to now, cut down to the resolution."""
        elapsed = time.monotonic_ns() - self._start_ns
        self._words[1] = elapsed - elapsed % self.resolution_ns


class CallTimes:
    """One store's running call as the timer and the epoch callback see it."""

    __slots__ = ("clock", "deadline", "generation", "passed", "started")

    def __init__(self) -> None:
        self.deadline = float("inf")  # time.monotonic() by which the call must end
        self.passed = False  # set by the epoch callback when it ended the call
        self.started = 0.0
        self.clock: GuestClock | None = None
        self.generation = 0  # a new one per call: the timer's older entries are stale


# store key -> its call's times, read by the epoch callback (the C API hands the key back)
_times: dict[int, CallTimes] = {}
_keys = itertools.count(1)
_EpochCallback = _bindings._wasmtime_store_epoch_deadline_callback.argtypes[1]
_Finalizer = _bindings._wasmtime_store_epoch_deadline_callback.argtypes[3]
_CONTINUE = 0  # WASMTIME_UPDATE_DEADLINE_CONTINUE
_DEADLINE_MESSAGE = b"the call ran past its deadline"


def _on_epoch(_context: Any, data: int | None, delta: Any, kind: Any) -> int:
    """The epoch moved (some call's deadline came): end this store's call if its own deadline
    has passed, else let it run until the next move."""
    times = _times.get(data or 0)
    if times is not None and time.monotonic() >= times.deadline:
        times.passed = True
        error = ffi.wasmtime_error_new(_DEADLINE_MESSAGE)
        return ctypes.cast(error, ctypes.c_void_p).value or 0
    delta[0] = 1
    kind[0] = _CONTINUE
    return 0


def _forget(data: int | None) -> None:
    _times.pop(data or 0, None)


_on_epoch_c = _EpochCallback(_on_epoch)
_forget_c = _Finalizer(_forget)


class CallTimer:
    """One thread that sleeps until a running call's next clock millisecond or deadline.

    :meth:`begin` schedules the call's first event one tick after its start (or at its
    deadline, if sooner) and wakes the thread only if that is now the earliest event;
    :meth:`end` makes the call's entries stale without waking anyone. The thread writes a
    guest's clock only under the lock :meth:`end` takes, so once ``end`` returns the store may
    be dropped.
    """

    def __init__(self, engine: wasmtime.Engine, tick_s: float) -> None:
        self._engine = engine
        self.tick_s = tick_s
        self._heap: list[tuple[float, int, int, CallTimes]] = []
        self._seq = itertools.count()
        self._cond = threading.Condition(threading.Lock())  # a plain lock: cheaper than RLock
        self._wakes_at = float("inf")
        self._thread: threading.Thread | None = None

    def begin(self, times: CallTimes) -> None:
        """The call of ``times`` starts: tick its clock and end it at its deadline."""
        with self._cond:
            times.generation += 1
            self._push(times, times.started)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="tf-timer", daemon=True)
                self._thread.start()
            if self._heap[0][0] < self._wakes_at:
                self._cond.notify()

    def end(self, times: CallTimes) -> None:
        """The call ended: once this returns, its clock is never written again."""
        with self._cond:
            times.generation += 1
            times.deadline = float("inf")

    def _push(self, times: CallTimes, now: float) -> None:
        ticks = int((now - times.started) / self.tick_s) + 1
        when = min(times.started + ticks * self.tick_s, times.deadline)
        if when <= now:  # the deadline has passed: keep the clock going until the call ends
            when = times.started + ticks * self.tick_s
        heapq.heappush(self._heap, (when, next(self._seq), times.generation, times))

    def _loop(self) -> None:
        while True:
            with self._cond:
                due = False
                while not due:
                    now = time.monotonic()
                    while self._heap and self._heap[0][0] <= now:
                        _, _, generation, times = heapq.heappop(self._heap)
                        if generation != times.generation:
                            continue  # that call has ended
                        if times.clock is not None:
                            times.clock.advance()
                        due = due or now >= times.deadline
                        self._push(times, now)
                    if due:
                        break
                    self._wakes_at = self._heap[0][0] if self._heap else float("inf")
                    self._cond.wait(None if not self._heap else self._wakes_at - now)
                self._wakes_at = float("inf")
            self._engine.increment_epoch()


class Guest:
    """One QuickJS instance in its own store.

    The store is set up once, when the instance is made (off the call path, in the pool): its
    memory cap (``memory_cap``, what :meth:`limit_memory` last set) and the epoch callback
    that ends its call at its deadline (``times``, which also holds the guest's clock).
    """

    __slots__ = ("_base", "clean", "instance", "memory", "memory_cap", "run", "store", "times")

    def __init__(self, engine: wasmtime.Engine, pre: Any, memory_cap: int | None = None) -> None:
        self.store = wasmtime.Store(engine)
        self.store.set_epoch_deadline(1 << 40)
        self.times = CallTimes()
        key = next(_keys)
        _times[key] = self.times
        ffi.wasmtime_store_epoch_deadline_callback(
            self.store.ptr(), _on_epoch_c, ctypes.c_void_p(key), _forget_c
        )
        self.memory_cap = 0
        # True while no call ran, or the last one returned from the guest normally (no trap,
        # no interruption): only then may its memory be put back and the instance reused
        self.clean = True
        if memory_cap is not None:
            self.limit_memory(memory_cap)
        self.instance = pre.instantiate(self.store)
        self.memory: wasmtime.Memory = self._export("memory")
        self._base = wasm_calls.memory_base(self.store, self.memory)
        self.run = wasm_calls.NumericCall(
            self._export("tf_run"), ("i32", "i32", "i32", "i32", "i64", "f64"), "i64"
        )

    # The guest's other entry points, made when used: a call needs only tf_run.
    def alloc(self, size: int) -> int:
        return int(self.numeric("tf_alloc", ("i32",), "i32")(self.store, size)) & 0xFFFFFFFF

    def free(self, ptr: int) -> None:
        self.numeric("tf_free", ("i32",), None)(self.store, ptr)

    def init(self, js_stack_limit: int) -> int:
        return int(self.numeric("tf_init", ("i32",), "i32")(self.store, js_stack_limit))

    def eval_script(self, ptr: int, length: int, keep: int) -> int:
        call = self.numeric("tf_eval_script", ("i32", "i32", "i32"), "i32")
        return int(call(self.store, ptr, length, keep))

    def numeric(self, name: str, params: tuple[str, ...], result: str | None) -> Any:
        """The export ``name``, a function of numbers, ready to call."""
        return wasm_calls.NumericCall(self._export(name), params, result)

    def limit_memory(self, cap: int) -> None:
        """Let linear memory grow to ``cap`` bytes and no further (``memory.grow`` fails)."""
        self.store.set_limits(memory_size=cap)
        self.memory_cap = cap

    def _export(self, name: str) -> Any:
        return wasm_calls.export(self.store, self.instance, name)

    def base(self) -> int:
        """Where linear memory starts: fixed for the store's life (memory never moves)."""
        return self._base

    def size(self) -> int:
        return wasm_calls.memory_size(self.store, self.memory)

    def put(self, data: bytes) -> int:
        """Copy bytes into guest-allocated memory; return the guest pointer."""
        ptr = self.alloc(max(len(data), 1))
        if ptr == 0:
            raise MemoryError("guest allocation failed")
        ctypes.memmove(self.base() + ptr, data, len(data))
        return ptr

    def read(self, ptr: int, length: int) -> bytes:
        return ctypes.string_at(self.base() + ptr, length)


class InstancePool:
    """Ready guests: put back after a call (made pristine again), or made by a background
    thread when one was dropped, so a call only takes one.

    Dropped guests are freed by that thread too, off the call path.
    """

    def __init__(self, make: Callable[[], Guest], size: int) -> None:
        self._make = make
        self._size = size
        self._ready: deque[Guest] = deque()
        self._used: list[Guest] = []
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def take(self) -> Guest:
        # No wake-up here: refilling during the call would compete with it for the GIL.
        # The refill starts when the call hands its guest back (discard).
        with self._cond:
            guest = self._ready.popleft() if self._ready else None
        return guest if guest is not None else self._make()

    def put_back(self, guest: Guest) -> None:
        """Keep a guest whose memory is pristine again, first in line (its pages are warm);
        when that makes one too many, the last in line (made fresh, its pages cold) goes to
        be freed on the pool thread."""
        with self._cond:
            self._ready.appendleft(guest)
            if len(self._ready) <= max(self._size, 1):
                return
            self._used.append(self._ready.pop())
            self._start()
            self._cond.notify()

    def discard(self, holder: list[Guest]) -> None:
        """Take the guest out of ``holder`` (so the caller keeps no reference), then free it
        and refill the pool, both on the pool thread."""
        if self._size > 0:
            with self._cond:
                self._used.append(holder.pop())
                self._start()
                self._cond.notify()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._fill, name="tf-pool", daemon=True)
            self._thread.start()

    def _fill(self) -> None:
        while True:
            with self._cond:
                while len(self._ready) >= self._size and not self._used:
                    self._cond.wait()
                used, self._used = self._used, []
            del used  # the stores are freed here, if the callers dropped their references
            with self._cond:
                if len(self._ready) >= self._size:
                    continue
            try:
                guest = self._make()
            except Exception:  # e.g. out of address space: calls then make their own
                time.sleep(0.1)
                continue
            with self._cond:
                self._ready.append(guest)
