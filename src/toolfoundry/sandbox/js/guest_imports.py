"""The guest's imports: our two host hooks and the four WASI functions its libc needs.

There is no clock import: the guest reads the time from its own memory (``guest/clock.c``,
``instances.GuestClock``), so ``Date.now()`` never crosses into the host.

Host hooks find the running call through :data:`call_state` (one call per thread at a time).
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any

import wasmtime

from toolfoundry.sandbox.js import wasm_calls

# .state is (CallHost, Guest) while a call runs on this thread; .pending a long answer
call_state = threading.local()


def _host_call(context: Any, values: Any) -> None:
    """tf.host_call(op, op_len, in, in_len, out, out_cap) -> answer length, or -1."""
    op_ptr, op_len, in_ptr, in_len = (values[i].i32 for i in range(4))
    out_ptr, out_cap = values[4].i32, values[5].i32
    values[0].i32 = -1
    state = getattr(call_state, "state", None)
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
        call_state.pending = out
    values[0].i32 = len(out)


def _host_take(context: Any, values: Any) -> None:
    """tf.host_take(out): copy the answer too large for the scratch buffer."""
    out_ptr = values[0].i32
    out: bytes = getattr(call_state, "pending", b"")
    call_state.pending = b""
    state = getattr(call_state, "state", None)
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


def make_linker(engine: wasmtime.Engine) -> wasmtime.Linker:
    i32, i64 = wasmtime.ValType.i32(), wasmtime.ValType.i64()
    ft = wasmtime.FuncType
    linker = wasmtime.Linker(engine)
    wasm_calls.define_raw(linker, "tf", "host_call", ft([i32] * 6, [i32]), _host_call)
    wasm_calls.define_raw(linker, "tf", "host_take", ft([i32], []), _host_take)
    wasi = "wasi_snapshot_preview1"
    linker.define_func(wasi, "fd_write", ft([i32] * 4, [i32]), _wasi_fd_write, access_caller=True)
    linker.define_func(wasi, "fd_close", ft([i32], [i32]), lambda fd: 8)
    linker.define_func(wasi, "fd_fdstat_get", ft([i32, i32], [i32]), lambda fd, p: 8)
    linker.define_func(wasi, "fd_seek", ft([i32, i64, i32, i32], [i32]), lambda *a: 70)
    return linker
