"""Guest instances and the two threads that serve them: the epoch ticker and the pool.

The ticker also advances the clock each running guest reads (``GuestClock``), so reading the
time inside the guest never crosses into the host.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import wasmtime

from toolfoundry.sandbox.js import wasm_calls


class GuestClock:
    """The time one running guest reads: ``tf_clock`` in its memory (``guest/clock.c``).

    Two 64-bit words: the wall clock at the call's start and the time elapsed since, both in
    whole multiples of ``resolution_ns``. Only this object writes them: :meth:`start`, before
    the guest runs, then the ticker thread (:meth:`advance`) while the call runs, so the
    elapsed time never goes back. Made with the instance, off the call path. The engine keeps
    linear memory from moving (``memory_may_move`` off), so the address stays valid until the
    store is dropped, which happens only after the ticker has let go of the clock
    (:meth:`EpochTicker.leave`).
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


class EpochTicker:
    """Advances the engine's epoch, and the clocks of running guests, every tick while calls
    run, and for a while after.

    Staying awake ``linger_s`` after the last call spares each call of a busy period the
    thread wake-up (and the GIL hand-off it costs).
    """

    def __init__(self, engine: wasmtime.Engine, tick_s: float, linger_s: float = 1.0) -> None:
        self._engine = engine
        self.tick_s = tick_s
        self.linger_s = linger_s
        self._active = 0
        self._clocks: list[GuestClock] = []
        self._idle = True
        self._last = 0.0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def enter(self, clock: GuestClock | None = None) -> None:
        """A call starts; the ticker advances ``clock`` until the matching :meth:`leave`."""
        with self._cond:
            self._active += 1
            if clock is not None:
                self._clocks.append(clock)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="tf-epoch", daemon=True)
                self._thread.start()
            if self._idle:
                self._cond.notify()

    def leave(self, clock: GuestClock | None = None) -> None:
        """A call ended: once this returns, ``clock`` is never written again."""
        with self._cond:
            self._active -= 1
            if clock is not None:
                self._clocks.remove(clock)
            self._last = time.monotonic()

    def _loop(self) -> None:
        # Epochs follow the wall clock, not the number of wake-ups: a late wake-up (GIL, load)
        # catches up at once, so a deadline in ticks is a deadline in time.
        origin, done = time.monotonic(), 0
        while True:
            with self._cond:
                if self._active == 0 and time.monotonic() - self._last > self.linger_s:
                    self._idle = True
                    while self._active == 0:
                        self._cond.wait()
                    self._idle = False
                    origin = time.monotonic() - done * self.tick_s
            time.sleep(self.tick_s)
            due = int((time.monotonic() - origin) / self.tick_s)
            for _ in range(due - done):
                self._engine.increment_epoch()
            done = max(done, due)
            with self._cond:
                for clock in self._clocks:
                    clock.advance()


class Guest:
    """One QuickJS instance in its own store."""

    __slots__ = (
        "alloc",
        "clock",
        "eval_script",
        "free",
        "init",
        "instance",
        "memory",
        "run",
        "store",
    )

    def __init__(self, engine: wasmtime.Engine, pre: Any) -> None:
        self.store = wasmtime.Store(engine)
        self.store.set_epoch_deadline(1 << 40)
        self.instance = pre.instantiate(self.store)
        get = self._export
        self.memory: wasmtime.Memory = get("memory")
        self.clock: GuestClock | None = None  # set by the engine, which knows where it lives
        self.alloc = wasm_calls.NumericCall(get("tf_alloc"), ("i32",), "i32")
        self.free = wasm_calls.NumericCall(get("tf_free"), ("i32",), None)
        self.init = wasm_calls.NumericCall(get("tf_init"), ("i32",), "i32")
        self.eval_script = wasm_calls.NumericCall(
            get("tf_eval_script"), ("i32", "i32", "i32"), "i32"
        )
        self.run = wasm_calls.NumericCall(
            get("tf_run"), ("i32", "i32", "i32", "i32", "i64", "f64"), "i64"
        )

    def _export(self, name: str) -> Any:
        return wasm_calls.export(self.store, self.instance, name)

    def base(self) -> int:
        return wasm_calls.memory_base(self.store, self.memory)

    def size(self) -> int:
        return wasm_calls.memory_size(self.store, self.memory)

    def put(self, data: bytes) -> int:
        """Copy bytes into guest-allocated memory; return the guest pointer."""
        ptr = int(self.alloc(self.store, max(len(data), 1)))
        if ptr == 0:
            raise MemoryError("guest allocation failed")
        ctypes.memmove(self.base() + ptr, data, len(data))
        return ptr

    def read(self, ptr: int, length: int) -> bytes:
        return ctypes.string_at(self.base() + ptr, length)


class InstancePool:
    """Ready guests, refilled by a background thread so a call only takes one.

    Used guests are handed back to be dropped by that thread too: freeing a store (unmapping
    its memory) costs about as much as making one.
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

    def discard(self, holder: list[Guest]) -> None:
        """Take the guest out of ``holder`` (so the caller keeps no reference), then free it
        and refill the pool, both on the pool thread."""
        if self._size > 0:
            with self._cond:
                self._used.append(holder.pop())
                if self._thread is None:
                    self._thread = threading.Thread(target=self._fill, name="tf-pool", daemon=True)
                    self._thread.start()
                self._cond.notify()

    def _fill(self) -> None:
        while True:
            with self._cond:
                while len(self._ready) >= self._size and not self._used:
                    self._cond.wait()
                used, self._used = self._used, []
            del used  # the stores are freed here, if the callers dropped their references
            time.sleep(0.0005)  # let the caller that woke us finish before competing for the GIL
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
