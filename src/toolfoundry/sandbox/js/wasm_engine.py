"""QuickJS-NG in WebAssembly under wasmtime: the default :class:`Engine`.

Every call gets a pristine instance of a module whose memory image is QuickJS right after its
set-up, the polyfills and the prelude (baked once per machine, see ``snapshot.py``). Instances
come from wasmtime's pooling allocator: a store's linear memory is a slot that keeps the image
mapped copy-on-write, and when the store is dropped wasmtime puts the slot back to the image
(the written pages are discarded). An instance whose call returned normally is made pristine
again and kept instead (:meth:`WasmEngine._reset`): the pages it wrote stay resident, so the
next call takes no page faults there. A small pool of ready instances is filled off the call
path. Time is bounded by epoch interruption (one timer
thread, ``CallTimer``, that sleeps until a running call's next need), memory by the store's
limiter; an instance that trapped or was interrupted is never used again.

The memory cap is what the tool may allocate: linear memory may grow to the snapshot's baseline
(the C stack, QuickJS, polyfills and prelude as initialised, measured per build) plus the cap.
The clock the guest reads lives in its memory; the timer advances it once a call has run a
millisecond (``GuestClock``).
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from pathlib import Path
from typing import Any

import wasmtime
from wasmtime import _bindings
from wasmtime import _ffi as ffi

from toolfoundry.base.json_gate import InvalidJson, encode_checked
from toolfoundry.sandbox.answer import read_answer
from toolfoundry.sandbox.js import wasm_calls
from toolfoundry.sandbox.js.engine import Limits
from toolfoundry.sandbox.js.guest_imports import call_state, make_linker
from toolfoundry.sandbox.js.host_calls import CallHost
from toolfoundry.sandbox.js.installation import (
    GUEST_WASM,
    SandboxUnavailable,
    preparing,
    unavailable,
)
from toolfoundry.sandbox.js.instances import CallTimer, Guest, GuestClock, InstancePool
from toolfoundry.sandbox.js.module_cache import cache_key, cached_module
from toolfoundry.sandbox.js.modules import polyfills_source
from toolfoundry.sandbox.js.page_scan import PageScan, PristineMemory
from toolfoundry.sandbox.js.snapshot import bake
from toolfoundry.sandbox.policy import SandboxPolicy
from toolfoundry.spec import CallResult, ErrorKind

PRELUDE_DIR = Path(__file__).resolve().parent / "prelude"
PAGE = 65536
SHADOW_STACK_TOP = 1024 * 1024  # zig links the 1 MiB C stack first: [0, 1 MiB)
JS_STACK_LIMIT = 640 * 1024  # QuickJS throws RangeError before the C stack runs out
WASM_STACK = 2 * 1024 * 1024  # native stack for wasm frames; well under any thread's stack
TICK_S = 0.001
TICK_NS = 1_000_000  # the guest clock's resolution: one tick
HEAP_SPARE = 1024 * 1024
# The pooling allocator's slots: stores alive at once (ready, running, nested, being freed).
SLOTS = 512
WASM32_MAX_MEMORY = 1 << 32
# At most this many written pages are copied back to reuse an instance (a small call writes
# ~60); an instance that wrote more is dropped and wasmtime resets its slot.
RESTORE_PAGES = 256
_DEFAULT_CAP = SandboxPolicy().memory_bytes
_set_epoch_deadline = _bindings._wasmtime_context_set_epoch_deadline  # no wrapper frame


class _OsSeeds:
    """Math.random seeds for each call, straight from the OS CSPRNG (``os.urandom``).

    Read 4 KiB at a time (one getrandom() per 512 calls: the syscall costs ~20 µs under load),
    and every seed is used once. No seed is derived from another, so a tool that recovers its
    own Math.random state learns nothing about any other call's (a process-wide Mersenne
    Twister, as before, could be recovered and predicted). Math.random within one call stays
    QuickJS's xorshift, not a CSPRNG; crypto.getRandomValues asks the host for os.urandom.
    """

    CHUNK = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._bytes = b""
        self._at = 0

    def take(self) -> int:
        """A fresh non-zero 63-bit seed."""
        with self._lock:
            if self._at + 8 > len(self._bytes):
                self._bytes, self._at = os.urandom(self.CHUNK), 0
            word = self._bytes[self._at : self._at + 8]
            self._at += 8
        return (int.from_bytes(word, "little") >> 1) | 1


_seeds = _OsSeeds()


def prelude_source() -> str:
    """The prelude: its parts (``prelude/*.js``, in name order) inside one closure.

    The parts share that closure (captured intrinsics, the host hook); the last one returns
    the driver's hooks ``{invoke, fail, tick}``, the script's completion value.
    """
    parts = "".join(p.read_text(encoding="utf-8") for p in sorted(PRELUDE_DIR.glob("*.js")))
    return f'(() => {{\n  "use strict";\n{parts}}})();\n'


class GuestMissing(SandboxUnavailable):
    """The guest has not been built; the message says how to get it (installation.fix)."""


class WasmEngine:
    """The QuickJS-NG guest under wasmtime; one per process is enough (thread-safe)."""

    def __init__(self, wasm_path: Path = GUEST_WASM, pool_size: int = 2) -> None:
        if not wasm_path.exists():
            raise GuestMissing(str(unavailable(f"the QuickJS guest ({wasm_path}) is missing")))
        config = wasmtime.Config()
        config.epoch_interruption = True
        config.max_wasm_stack = WASM_STACK
        # Linear memory stays where it was mapped (a pooled slot never moves anyway), so an
        # address taken at the call's start stays valid (instances.GuestClock).
        config.memory_may_move = False
        _pooling(config)
        self._engine = wasmtime.Engine(config)
        self._linker = make_linker(self._engine)
        wasm = wasm_path.read_bytes()
        prelude = prelude_source().encode("utf-8")
        polyfills = (polyfills_source() or "").encode("utf-8")
        key = cache_key(wasm, polyfills, prelude, f"{JS_STACK_LIMIT}/{HEAP_SPARE}".encode())
        self.snapshot_key = key  # what else is cached for this guest is keyed by it too

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
        self._clock = int(wasm_calls.NumericCall(probe._export("tf_clock"), (), "i32")(probe.store))
        heap_free = wasm_calls.NumericCall(probe._export("tf_heap_free"), (), "i32")
        # the snapshot's free heap (HEAP_SPARE and what set-up freed) is the tool's to use
        in_use = probe.size() - (int(heap_free(probe.store)) & 0xFFFFFFFF)
        self.baseline_bytes = -(-in_use // PAGE) * PAGE
        self._timer = CallTimer(self._engine, TICK_S)
        self._default_cap = self.baseline_bytes + _DEFAULT_CAP
        self._pool = InstancePool(self.fresh, pool_size)
        # The probe only read static addresses: if it wrote no page, its memory is the image,
        # kept (never run again) as the pristine bytes used instances are put back to.
        self._pristine: PristineMemory | None = None
        self._pristine_owner: Guest | None = None
        scan = PageScan()
        if scan.available:  # else every call gets a new instance
            pristine = PristineMemory(probe.base(), probe.size(), scan, RESTORE_PAGES)
            if not pristine.untouched():
                probe = Guest(self._engine, self._pre)
                pristine = PristineMemory(probe.base(), probe.size(), scan, RESTORE_PAGES)
            if pristine.untouched():
                self._pristine, self._pristine_owner = pristine, probe

    def _initialise(self, pre: Any) -> tuple[bytes, int]:
        """Run QuickJS's set-up, the polyfills and the prelude; return the memory image."""
        guest = Guest(self._engine, pre)
        wasm_calls.NumericCall(guest._export("_initialize"), (), None)(guest.store)
        if guest.init(JS_STACK_LIMIT) != 0:
            raise RuntimeError("QuickJS failed to initialise")
        scripts = [(polyfills_source(), 0), (prelude_source(), 1)]
        for source, keep in scripts:
            if source is None:
                continue
            data = source.encode("utf-8")
            ptr = guest.put(data + b"\0")
            err = guest.eval_script(ptr, len(data), keep)
            guest.free(ptr)
            if err:
                raise RuntimeError(f"prelude failed: {ctypes.string_at(guest.base() + err)!r}")
        # Grow the heap once now, so calls seldom grow memory (a syscall-heavy step).
        guest.free(guest.alloc(HEAP_SPARE))
        size = guest.size()
        return guest.read(SHADOW_STACK_TOP, size - SHADOW_STACK_TOP), size // PAGE

    def fresh(self) -> Guest:
        """A new instance of the baked module: initialised QuickJS, no code run, its store set
        up for a call under the default memory cap."""
        guest = Guest(self._engine, self._pre, self._default_cap)
        guest.times.clock = GuestClock(guest.base() + self._clock, TICK_NS)
        return guest

    def take(self) -> Guest:
        """A pristine instance, from the pool when one is ready."""
        return self._pool.take()

    def run(self, module_code: str, args: Any, limits: Limits, host: CallHost) -> CallResult:
        """Run one module in a pristine instance (see :class:`Engine`).

        The instance is used again only when its memory is put back to the pristine bytes
        (:meth:`_reset`); otherwise it is dropped, on the pool thread.
        """
        guest = self.take()
        try:
            return self.run_in(guest, module_code, args, limits, host)
        finally:
            if self._reset(guest):
                self._pool.put_back(guest)
            else:
                self._pool.discard([guest])  # the list is emptied: freed on the pool thread
            del guest

    def _reset(self, guest: Guest) -> bool:
        """Make a used instance pristine again, as a fresh one is; False when it cannot be.

        Only after a call that returned from the guest normally: a trap or an interruption
        may leave the C stack pointer (the module's one mutable global) mid-call; tables are
        never written. Linear memory is then put back page by page (``PristineMemory``); a
        grown memory is refused there.
        """
        if self._pristine is None or not guest.clean:
            return False
        return self._pristine.restore(guest.base(), guest.size())

    def release(self, holder: list[Guest]) -> None:
        """Hand back a used guest, given as ``[guest]``: the pool frees it and refills itself.

        The list is emptied, so once the caller drops any other reference, the store is freed
        on the pool thread rather than on the caller's.
        """
        self._pool.discard(holder)

    def run_in(
        self, guest: Guest, module_code: str, args: Any, limits: Limits, host: CallHost
    ) -> CallResult:
        """Run one module in ``guest``; the caller discards ``guest`` afterwards.

        Reusing a guest for a second call keeps the first call's state: only benchmarks do it.
        """
        started = time.monotonic()
        guest.clean = False  # until the guest returns normally
        try:
            # the JSON gate (depth, finite numbers, valid Unicode, JSON types), one serialization
            args_json = encode_checked(args)
        except InvalidJson as exc:
            problems = [p.problem() for p in exc.problems]
            message = f"args are not JSON the sandbox takes: {exc}"
            return CallResult.failure(ErrorKind.INVALID_ARGUMENTS, message, problems=problems)
        cap = self.memory_limit(limits)
        if guest.memory_cap != cap:  # the pool's guests come with the default cap
            guest.limit_memory(cap)
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
        seed = _seeds.take()
        # any move of the epoch asks this store's callback, which ends the call only once its
        # own deadline has passed; the timer moves it when a running call's deadline comes
        _set_epoch_deadline(guest.store._context(), 1)
        times = guest.times
        times.deadline, times.passed, times.started = limits.deadline, False, started
        if times.clock is None:
            times.clock = GuestClock(guest.base() + self._clock, TICK_NS)
        times.clock.start()
        self._timer.begin(times)
        outer = getattr(call_state, "state", None)  # a host op may itself run a script
        call_state.state = (host, guest)
        try:
            packed = guest.run(
                guest.store, code_ptr, len(code_b), args_ptr, len(args_b), seed, budget_ms
            )
            guest.clean = True
        except wasmtime.Trap as trap:
            return self._trapped(host, trap, guest, limits)
        except wasmtime.WasmtimeError as exc:
            if times.passed:
                return self._fail(host, ErrorKind.TIMEOUT, "the script ran past its time budget")
            return self._fail(host, ErrorKind.RUNTIME_ERROR, f"the engine failed: {exc}")
        finally:
            self._timer.end(times)
            call_state.state = outer
        packed &= (1 << 64) - 1
        ptr, length = packed >> 32, packed & 0xFFFFFFFF
        if length > limits.output_bytes:
            return self._fail(
                host,
                ErrorKind.OUTPUT_TOO_LARGE,
                f"the result is {length} bytes of JSON; the limit is {limits.output_bytes}",
            )
        if ptr + length > guest.size():  # a pointer the guest made up: never read past memory
            message = f"the guest's answer ({length} bytes at {ptr}) lies outside its memory"
            return self._fail(host, ErrorKind.INVALID_OUTPUT, message)
        answer = read_answer(guest.read(ptr, length))  # through the JSON gate
        if answer.refused is not None:
            return answer.refusal(host.logs)
        if answer.kind is None:
            return CallResult.success(answer.value, logs=host.logs)
        kind, message = self._decided_kind(guest, host, answer.kind, answer.message)
        return self._fail(host, kind, message)

    @staticmethod
    def _decided_kind(
        guest: Guest, host: CallHost, suggested: str, message: str
    ) -> tuple[ErrorKind, str]:
        """The kind of a failed call, from facts the host saw, never from the guest's answer.

        The guest's answer only suggests a kind (a script can forge any error object and
        override the built-ins the prelude uses). ``memory_limit`` needs memory.grow to have
        been refused in this call (the store's cap; counted by the guest's allocator, which no
        script can write), ``timeout`` a timer past the budget (the C shim's end state) or a
        host answer that the budget was spent, and any other kind a host answer of that kind
        during this call (``CallHost.refused_kinds``: a fetch it refused). An uncaught
        ``ToolError`` keeps the kind an inner call failed with (``CallHost.tool_kinds``: the
        host answered it), so a cycle ends as ``depth_limit`` all the way out. Everything
        else a script throws is ``runtime_error``.
        """
        guest.store.set_epoch_deadline(1 << 40)  # the facts are read after the call's budget
        if suggested in host.tool_kinds and suggested in _KINDS:
            return ErrorKind(suggested), message
        if (
            suggested == ErrorKind.MEMORY_LIMIT
            or message == "uncaught null"
            or message.startswith("InternalError:")
        ):
            # Out of memory while reporting running out, QuickJS throws null or an InternalError
            # with another message ("Invalid error message"): the refused grow is the fact.
            if _guest_fact(guest, "tf_grow_refused") > 0:
                return (
                    ErrorKind.MEMORY_LIMIT,
                    "out of memory" if message == "uncaught null" else message,
                )
            return ErrorKind.RUNTIME_ERROR, message
        if suggested == ErrorKind.TIMEOUT:
            if _guest_fact(guest, "tf_ended_by") == 2 or "timeout" in host.refused_kinds:
                return ErrorKind.TIMEOUT, message
            return ErrorKind.RUNTIME_ERROR, message
        if suggested in host.refused_kinds and suggested in _HOST_ANSWER_KINDS:
            return ErrorKind(suggested), message
        return ErrorKind.RUNTIME_ERROR, message

    def memory_limit(self, limits: Limits) -> int:
        """How far the guest's linear memory may grow: the baseline plus the tool's cap."""
        return self.baseline_bytes + limits.memory_bytes

    def _near_cap(self, guest: Guest, limits: Limits) -> bool:
        return guest.size() + 8 * 1024 * 1024 >= self.memory_limit(limits)

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


# kinds a host answer may carry into a call's result (host_calls.py and the fetch policy)
# a failing store (host/storage.py) is the server's fault: the call says so, not runtime_error
_HOST_ANSWER_KINDS = frozenset(
    {ErrorKind.CAPABILITY_DENIED.value, ErrorKind.TIMEOUT.value, ErrorKind.UNAVAILABLE.value}
)
_KINDS = frozenset(k.value for k in ErrorKind)


def _guest_fact(guest: Guest, export: str) -> int:
    """A number the guest's C code keeps for the host (``guest.c``: grow refusals, end state)."""
    return int(wasm_calls.NumericCall(guest._export(export), (), "i32")(guest.store)) & 0xFFFFFFFF


_default: WasmEngine | None = None
_default_lock = threading.Lock()


def default_engine() -> WasmEngine:
    """The process-wide engine, created on first use."""
    global _default
    engine = _default
    if engine is not None:  # made once, never replaced: no lock on every call
        return engine
    with _default_lock:
        if _default is None:
            with preparing():  # SandboxUnavailable when a file is missing or damaged
                _default = WasmEngine()
        return _default


def _pooling(config: wasmtime.Config) -> None:
    """Instances from wasmtime's pooling allocator (wasmtime-py 50 exposes it only through its
    C bindings): memory slots that keep the snapshot's image mapped between stores and put it
    back on release (see the module's docstring). ``SLOTS`` bounds the stores alive at once."""
    pool = ffi.wasmtime_pooling_allocation_config_new()
    try:
        for setter in (
            ffi.wasmtime_pooling_allocation_config_total_core_instances_set,
            ffi.wasmtime_pooling_allocation_config_total_memories_set,
            ffi.wasmtime_pooling_allocation_config_total_tables_set,
            ffi.wasmtime_pooling_allocation_config_max_unused_warm_slots_set,
        ):
            setter(pool, SLOTS)
        ffi.wasmtime_pooling_allocation_config_max_memory_size_set(pool, WASM32_MAX_MEMORY)
        # keep_resident stays 0: a dropped store's written pages are discarded, so a new
        # instance owns no page and page_scan.PristineMemory sees only what its calls wrote
        ffi.wasmtime_pooling_allocation_strategy_set(config.ptr(), pool)
    finally:
        ffi.wasmtime_pooling_allocation_config_delete(pool)
