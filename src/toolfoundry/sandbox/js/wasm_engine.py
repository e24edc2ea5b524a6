"""QuickJS-NG in WebAssembly under wasmtime: the default :class:`Engine`.

Every call gets a pristine instance: a fresh wasmtime store whose linear memory is restored
from a snapshot taken once per process right after QuickJS, the polyfills and the prelude were
initialised. A small pool prepares instances off the call path. Time is bounded by epoch
interruption (a ticker thread), memory by the store's limiter; any trap discards the instance.
"""

from __future__ import annotations

import ctypes
import json
import math
import mmap
import os
import random
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import wasmtime

from toolfoundry.sandbox.host.storage import StorageHook, StorageQuota
from toolfoundry.sandbox.js import wasm_calls
from toolfoundry.sandbox.js.engine import Limits
from toolfoundry.sandbox.js.host_calls import CallHost
from toolfoundry.sandbox.js.module_cache import cache_key, cached_bytes, cached_module
from toolfoundry.sandbox.js.modules import BUILD_DIR, LibraryCatalog, polyfills_source
from toolfoundry.sandbox.js.snapshot import bake
from toolfoundry.spec import CallResult, ErrorKind

GUEST_WASM = BUILD_DIR / "quickjs.wasm"
PRELUDE = Path(__file__).resolve().parent / "prelude.js"
PAGE = 65536
SHADOW_STACK_TOP = 1024 * 1024  # zig links the 1 MiB C stack first: [0, 1 MiB)
JS_STACK_LIMIT = 640 * 1024  # QuickJS throws RangeError before the C stack runs out
WASM_STACK = 2 * 1024 * 1024  # native stack for wasm frames; well under any thread's stack
TICK_S = 0.001
HEAP_SPARE = 1024 * 1024
_WARM_UP = "export async function handler(a) { console.log(a); return JSON.stringify(a) }"

_local = threading.local()
# Math.random seeds: one getrandom() per process, not per call (the syscall costs ~20 µs under
# load). Math.random is not a CSPRNG in any engine; crypto.getRandomValues uses os.urandom.
_seeds = random.Random(os.urandom(32))


class GuestMissing(RuntimeError):
    """The guest has not been built (run ``make setup`` or ``python -m ...guest.build``)."""


class _EpochTicker:
    """Advances the engine's epoch every tick while at least one call is running."""

    def __init__(self, engine: wasmtime.Engine, tick_s: float) -> None:
        self._engine = engine
        self.tick_s = tick_s
        self._active = 0
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None

    def enter(self) -> None:
        with self._cond:
            self._active += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="tf-epoch", daemon=True)
                self._thread.start()
            self._cond.notify()

    def leave(self) -> None:
        with self._cond:
            self._active -= 1

    def _loop(self) -> None:
        # Epochs follow the wall clock, not the number of wake-ups: a late wake-up (GIL, load)
        # catches up at once, so a deadline in ticks is a deadline in time.
        origin, done = time.monotonic(), 0
        while True:
            with self._cond:
                if self._active == 0:
                    while self._active == 0:
                        self._cond.wait()
                    origin = time.monotonic() - done * self.tick_s
            time.sleep(self.tick_s)
            due = int((time.monotonic() - origin) / self.tick_s)
            for _ in range(due - done):
                self._engine.increment_epoch()
            done = max(done, due)


class Guest:
    """One QuickJS instance in its own store."""

    __slots__ = ("alloc", "eval_script", "free", "init", "instance", "memory", "run", "store")

    def __init__(self, engine: wasmtime.Engine, pre: Any) -> None:
        self.store = wasmtime.Store(engine)
        self.store.set_epoch_deadline(1 << 40)
        self.instance = pre.instantiate(self.store)
        get = self._export
        self.memory: wasmtime.Memory = get("memory")
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


class _Pool:
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

    def discard(self, guest: Guest) -> None:
        """Drop ``guest`` and refill the pool, both on the pool thread."""
        if self._size > 0:
            with self._cond:
                self._used.append(guest)
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
            del used  # the stores are freed here, on this thread
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


def _host_call(context: Any, values: Any) -> None:
    """tf.host_call(op, op_len, in, in_len, out, out_cap) -> answer length, or -1."""
    op_ptr, op_len, in_ptr, in_len = (values[i].i32 for i in range(4))
    out_ptr, out_cap = values[4].i32, values[5].i32
    values[0].i32 = -1
    state = getattr(_local, "state", None)
    if state is None:
        return
    host, guest = state
    base, size = wasm_calls.context_memory(context, guest.memory)
    if not (0 <= op_ptr <= op_ptr + op_len <= size and 0 <= in_ptr <= in_ptr + in_len <= size):
        return
    op = ctypes.string_at(base + op_ptr, op_len).decode("utf-8", "replace")
    # host ops never call back into the guest, so `base` stays valid (memory cannot grow)
    out = host.answer(op, ctypes.string_at(base + in_ptr, in_len))
    if len(out) <= out_cap:
        if not 0 <= out_ptr <= out_ptr + out_cap <= size:
            return
        ctypes.memmove(base + out_ptr, out, len(out))
    else:
        _local.pending = out
    values[0].i32 = len(out)


def _host_take(context: Any, values: Any) -> None:
    """tf.host_take(out): copy the answer too large for the scratch buffer."""
    out_ptr = values[0].i32
    out: bytes = getattr(_local, "pending", b"")
    _local.pending = b""
    state = getattr(_local, "state", None)
    if state is None:
        return
    base, size = wasm_calls.context_memory(context, state[1].memory)
    if 0 <= out_ptr <= out_ptr + len(out) <= size:
        ctypes.memmove(base + out_ptr, out, len(out))


def _wasi_fd_write(caller: wasmtime.Caller, fd: int, iovs: int, n: int, written: int) -> int:
    mem = caller.get("memory")
    assert isinstance(mem, wasmtime.Memory)
    raw = mem.read(caller, iovs, iovs + 8 * n)
    total = sum(int.from_bytes(raw[i * 8 + 4 : i * 8 + 8], "little") for i in range(n))
    mem.write(caller, total.to_bytes(4, "little"), written)
    return 0  # the guest's stdio goes nowhere


def _wasi_clock(caller: wasmtime.Caller, clock_id: int, precision: int, out: int) -> int:
    now = time.time_ns() if clock_id == 0 else time.monotonic_ns()
    mem = caller.get("memory")
    assert isinstance(mem, wasmtime.Memory)
    mem.write(caller, now.to_bytes(8, "little"), out)
    return 0


def _linker(engine: wasmtime.Engine) -> wasmtime.Linker:
    i32, i64 = wasmtime.ValType.i32(), wasmtime.ValType.i64()
    ft = wasmtime.FuncType
    linker = wasmtime.Linker(engine)
    wasm_calls.define_raw(linker, "tf", "host_call", ft([i32] * 6, [i32]), _host_call)
    wasm_calls.define_raw(linker, "tf", "host_take", ft([i32], []), _host_take)
    wasi = "wasi_snapshot_preview1"
    linker.define_func(wasi, "fd_write", ft([i32] * 4, [i32]), _wasi_fd_write, access_caller=True)
    linker.define_func(wasi, "clock_time_get", ft([i32, i64, i32], [i32]), _wasi_clock, True)
    linker.define_func(wasi, "fd_close", ft([i32], [i32]), lambda fd: 8)
    linker.define_func(wasi, "fd_fdstat_get", ft([i32, i32], [i32]), lambda fd, p: 8)
    linker.define_func(wasi, "fd_seek", ft([i32, i64, i32, i32], [i32]), lambda *a: 70)
    return linker


class WasmEngine:
    """The QuickJS-NG guest under wasmtime; one per process is enough (thread-safe)."""

    def __init__(self, wasm_path: Path = GUEST_WASM, pool_size: int = 2) -> None:
        if not wasm_path.exists():
            raise GuestMissing(
                f"{wasm_path} is missing: build it with `make setup` or "
                "`python -m toolfoundry.sandbox.js.guest.build`"
            )
        config = wasmtime.Config()
        config.epoch_interruption = True
        config.max_wasm_stack = WASM_STACK
        self._engine = wasmtime.Engine(config)
        self._linker = _linker(self._engine)
        wasm = wasm_path.read_bytes()
        prelude = PRELUDE.read_bytes()
        polyfills = (polyfills_source() or "").encode("utf-8")
        key = cache_key(wasm, polyfills, prelude, f"{JS_STACK_LIMIT}/{HEAP_SPARE}".encode())

        def snapshot() -> bytes:
            base = cached_module(self._engine, cache_key(wasm), lambda: wasm)
            image, pages = self._initialise(self._linker.instantiate_pre(base))
            return bake(wasm, image, SHADOW_STACK_TOP, pages)

        self._pre = self._linker.instantiate_pre(cached_module(self._engine, key, snapshot))
        probe = Guest(self._engine, self._pre)  # static addresses are the same in every instance
        inbox = wasm_calls.NumericCall(probe._export("tf_inbox"), (), "i32")
        inbox_size = wasm_calls.NumericCall(probe._export("tf_inbox_size"), (), "i32")
        self._inbox = int(inbox(probe.store))
        self._inbox_size = int(inbox_size(probe.store))
        self._ticker = _EpochTicker(self._engine, TICK_S)
        learned = cached_bytes(key, "pages", lambda: json.dumps(self._learn_hot_pages()).encode())
        self._hot_pages: list[int] = [int(o) for o in json.loads(learned)]
        self._pool = _Pool(self.prepared, pool_size)

    def _initialise(self, pre: Any) -> tuple[bytes, int]:
        """Run QuickJS's set-up, the polyfills and the prelude; return the memory image."""
        guest = Guest(self._engine, pre)
        wasm_calls.NumericCall(guest._export("_initialize"), (), None)(guest.store)
        if guest.init(guest.store, JS_STACK_LIMIT) != 0:
            raise RuntimeError("QuickJS failed to initialise")
        scripts = [(polyfills_source(), 0), (PRELUDE.read_text(encoding="utf-8"), 1)]
        for source, keep in scripts:
            if source is None:
                continue
            data = source.encode("utf-8")
            ptr = guest.put(data + b"\0")
            err = int(guest.eval_script(guest.store, ptr, len(data), keep))
            guest.free(guest.store, ptr)
            if err:
                raise RuntimeError(f"prelude failed: {ctypes.string_at(guest.base() + err)!r}")
        # Grow the heap once now, so calls seldom grow memory (a syscall-heavy step).
        guest.free(guest.store, guest.alloc(guest.store, HEAP_SPARE))
        size = guest.size()
        return guest.read(SHADOW_STACK_TOP, size - SHADOW_STACK_TOP), size // PAGE

    def _learn_hot_pages(self) -> list[int]:
        """Offsets of the memory pages a small call writes (stack, allocator, GC state)."""
        reference = self.fresh()
        image = reference.read(0, reference.size())
        guest = self.fresh()
        host = CallHost(
            fetch=None,
            storage=StorageHook(None, "", StorageQuota()),
            libraries=LibraryCatalog(BUILD_DIR / "no-libs" / "manifest.json"),
            log_lines=10,
            log_bytes=1000,
            deadline=time.monotonic() + 10,
        )
        limits = Limits(deadline=time.monotonic() + 10, memory_bytes=1 << 30, output_bytes=1 << 20)
        self.run_in(guest, _WARM_UP, {"x": [1, "a"]}, limits, host)
        after = guest.read(0, len(image))
        step = mmap.PAGESIZE
        return [o for o in range(0, len(image), step) if after[o : o + step] != image[o : o + step]]

    def prepared(self) -> Guest:
        """A fresh instance whose usually-written pages are already copied (the pool's job).

        Writing each byte back unchanged takes the copy-on-write faults here, off the call path;
        the instance stays byte-for-byte pristine.
        """
        guest = self.fresh()
        base = guest.base()
        for offset in self._hot_pages:
            cell = ctypes.c_ubyte.from_address(base + offset)
            cell.value = cell.value
        return guest

    def fresh(self) -> Guest:
        """A new instance of the baked module: initialised QuickJS, no code run."""
        return Guest(self._engine, self._pre)

    def take(self) -> Guest:
        """A pristine instance, from the pool when one is ready."""
        return self._pool.take()

    def run(self, module_code: str, args: Any, limits: Limits, host: CallHost) -> CallResult:
        """Run one module in a pristine instance (see :class:`Engine`)."""
        guest = self.take()
        try:
            return self.run_in(guest, module_code, args, limits, host)
        finally:
            self.release(guest)

    def release(self, guest: Guest) -> None:
        """Hand back a used guest: it is freed, and the pool refilled, off the call path."""
        self._pool.discard(guest)

    def run_in(
        self, guest: Guest, module_code: str, args: Any, limits: Limits, host: CallHost
    ) -> CallResult:
        """Run one module in ``guest``; the caller discards ``guest`` afterwards.

        Reusing a guest for a second call keeps the first call's state: only benchmarks do it.
        """
        started = time.monotonic()
        try:
            args_json = json.dumps(args, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as exc:
            return CallResult.failure(ErrorKind.INVALID_ARGUMENTS, f"args are not JSON: {exc}")
        guest.store.set_limits(memory_size=limits.memory_bytes)
        try:
            code_b = module_code.encode("utf-8", "surrogatepass")
            args_b = args_json.encode("utf-8", "surrogatepass")
            # QuickJS reads sources NUL-terminated
            data = code_b + b"\0" + args_b
            if len(data) <= self._inbox_size:
                code_ptr = self._inbox
                ctypes.memmove(guest.base() + code_ptr, data, len(data))
            else:
                code_ptr = guest.put(data)
            args_ptr = code_ptr + len(code_b) + 1
        except (MemoryError, wasmtime.Trap, wasmtime.WasmtimeError):
            return self._fail(host, ErrorKind.MEMORY_LIMIT, "the module does not fit in memory")
        remaining = limits.deadline - time.monotonic()
        if remaining <= 0:
            return self._fail(host, ErrorKind.TIMEOUT, "the time budget was spent before start")
        budget_ms = (limits.deadline - started) * 1000.0
        seed = _seeds.getrandbits(63) | 1
        guest.store.set_epoch_deadline(math.ceil(remaining / TICK_S) + 1)
        outer = getattr(_local, "state", None)  # a host op may itself run a script
        _local.state = (host, guest)
        self._ticker.enter()
        try:
            packed = guest.run(
                guest.store, code_ptr, len(code_b), args_ptr, len(args_b), seed, budget_ms
            )
        except wasmtime.Trap as trap:
            return self._trapped(host, trap, guest, limits)
        except wasmtime.WasmtimeError as exc:
            return self._fail(host, ErrorKind.RUNTIME_ERROR, f"the engine failed: {exc}")
        finally:
            self._ticker.leave()
            _local.state = outer
        packed &= (1 << 64) - 1
        ptr, length = packed >> 32, packed & 0xFFFFFFFF
        if length > limits.output_bytes:
            return self._fail(
                host,
                ErrorKind.OUTPUT_TOO_LARGE,
                f"the result is {length} bytes of JSON; the limit is {limits.output_bytes}",
            )
        answer = json.loads(guest.read(ptr, length).decode("utf-8", "surrogatepass"))
        if answer.get("ok"):
            return CallResult.success(answer.get("value"), logs=host.logs)
        kind = answer.get("kind")
        message = str(answer.get("message", ""))
        if kind not in ErrorKind.__members__.values():
            kind = ErrorKind.RUNTIME_ERROR
        if (
            kind == ErrorKind.RUNTIME_ERROR
            and message == "uncaught null"
            and self._near_cap(guest, limits)
        ):
            # QuickJS throws null when it runs out of memory while reporting running out
            kind, message = ErrorKind.MEMORY_LIMIT, "out of memory"
        return self._fail(host, ErrorKind(kind), message)

    @staticmethod
    def _near_cap(guest: Guest, limits: Limits) -> bool:
        return guest.size() + 8 * 1024 * 1024 >= limits.memory_bytes

    def _trapped(
        self, host: CallHost, trap: wasmtime.Trap, guest: Guest, limits: Limits
    ) -> CallResult:
        code = trap.trap_code
        if code is wasmtime.TrapCode.INTERRUPT:
            return self._fail(host, ErrorKind.TIMEOUT, "the script ran past its time budget")
        if self._near_cap(guest, limits):
            message = f"the script hit the memory cap ({limits.memory_bytes} bytes)"
            return self._fail(host, ErrorKind.MEMORY_LIMIT, message)
        if code in (wasmtime.TrapCode.STACK_OVERFLOW, wasmtime.TrapCode.MEMORY_OUT_OF_BOUNDS):
            return self._fail(host, ErrorKind.RUNTIME_ERROR, "stack overflow: recursion too deep")
        return self._fail(host, ErrorKind.RUNTIME_ERROR, f"the script crashed the engine: {code}")

    @staticmethod
    def _fail(host: CallHost, kind: ErrorKind, message: str) -> CallResult:
        return CallResult.failure(kind, message, logs=host.logs)


_default: WasmEngine | None = None
_default_lock = threading.Lock()


def default_engine() -> WasmEngine:
    """The process-wide engine, created on first use."""
    global _default
    with _default_lock:
        if _default is None:
            _default = WasmEngine()
        return _default
