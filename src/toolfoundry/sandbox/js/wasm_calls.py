"""Lean calls into wasmtime-py for the hot path.

``Func.__call__`` re-reads the function type on every call (~30 µs) and
``Instance.exports()`` wraps every export eagerly (~5 ms); both are avoided here by calling
wasmtime's C API through wasmtime-py's own ctypes bindings with types known in advance.
Pinned to wasmtime-py 50 (pyproject.toml).
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import wasmtime
from wasmtime import _bindings
from wasmtime import _ffi as ffi
from wasmtime._func import maybe_raise_last_exn

_func_call = _bindings._wasmtime_func_call  # the ctypes function itself, no wrapper frame

_KINDS = {
    "i32": ffi.WASMTIME_I32.value,
    "i64": ffi.WASMTIME_I64.value,
    "f64": ffi.WASMTIME_F64.value,
}


def export(store: wasmtime.Store, instance: wasmtime.Instance, name: str) -> Any:
    """Look up one export by name (no eager wrapping of the others)."""
    raw = name.encode()
    item = ffi.wasmtime_extern_t()
    found = ffi.wasmtime_instance_export_get(
        store._context(), ctypes.byref(instance._instance), raw, len(raw), ctypes.byref(item)
    )
    if not found:
        raise KeyError(f"the guest has no export {name!r}")
    kind = int(item.kind)
    if kind == ffi.WASMTIME_EXTERN_FUNC.value:
        return wasmtime.Func._from_raw(item.of.func)
    if kind == ffi.WASMTIME_EXTERN_MEMORY.value:
        return wasmtime.Memory._from_raw(item.of.memory)
    raise KeyError(f"export {name!r} is neither a function nor a memory")


class NumericCall:
    """A guest function with numeric parameters and at most one numeric result, called cheaply."""

    # Not reentrant: the value slots are allocated once. A guest serves one call at a time.

    def __init__(self, func: wasmtime.Func, params: tuple[str, ...], result: str | None) -> None:
        self._func_ref = ctypes.byref(func._func)
        self._func = func
        self._params = params
        self._result = result
        self._slots = (ffi.wasmtime_val_t * max(len(params), 1))()
        self._unions = [self._slots[i].of for i in range(len(params))]
        for i, p in enumerate(params):
            setattr(self._slots[i], "kind", _KINDS[p])  # noqa: B010 (ctypes field typed c_ubyte)
        self._results = (ffi.wasmtime_val_t * 1)()

    def __call__(self, store: wasmtime.Store, *args: int | float) -> Any:
        n = len(self._params)
        if len(args) != n:
            raise TypeError(f"expected {n} arguments, got {len(args)}")
        for union, field, value in zip(self._unions, self._params, args, strict=True):
            setattr(union, field, value)
        results = self._results
        nres = 0 if self._result is None else 1
        # what wasmtime-py's enter_wasm does, without a generator per call (~3 µs)
        trap = ctypes.POINTER(ffi.wasm_trap_t)()
        error = _func_call(
            store._context(), self._func_ref, self._slots, n, results, nres, ctypes.byref(trap)
        )
        if error:
            maybe_raise_last_exn()
            raise wasmtime.WasmtimeError._from_ptr(error)
        if trap:
            trapped = wasmtime.Trap._from_ptr(trap)
            maybe_raise_last_exn()
            raise trapped
        if self._result is None:
            return None
        return getattr(results[0].of, self._result)


def memory_base(store: Any, memory: wasmtime.Memory) -> int:
    """Address of linear memory byte 0 (changes when the memory grows)."""
    ptr = ffi.wasmtime_memory_data(store._context(), ctypes.byref(memory._memory))
    return ctypes.cast(ptr, ctypes.c_void_p).value or 0


def memory_size(store: Any, memory: wasmtime.Memory) -> int:
    """Current size of linear memory in bytes."""
    return int(ffi.wasmtime_memory_data_size(store._context(), ctypes.byref(memory._memory)))


RawValues = Any  # ctypes array of wasmtime_val_raw_t: the arguments, then the results
RawHost = Callable[[Any, RawValues], None]
_keepalive: list[Any] = []


def define_raw(
    linker: wasmtime.Linker,
    module: str,
    name: str,
    ty: wasmtime.FuncType,
    fn: RawHost,
) -> None:
    """Define a host function that receives the caller's context and the raw value slots.

    wasmtime-py's generic trampoline converts every value through Python objects (~100 µs per
    call with six arguments); this path reads and writes the slots directly. ``fn`` must not
    raise; if it does, the guest traps.
    """

    def callback(env: Any, caller: Any, values: Any, count: int) -> int:
        try:
            fn(ffi.wasmtime_caller_context(caller), values)
            return 0
        except BaseException as exc:
            message = f"host function {name} failed: {exc!r}".encode()
            trap = ffi.wasmtime_trap_new(message, len(message))
            return ctypes.cast(trap, ctypes.c_void_p).value or 0

    raw_callback = ffi.wasmtime_func_unchecked_callback_t(callback)
    no_finalizer = ctypes.CFUNCTYPE(None, ctypes.c_void_p)()  # a NULL function pointer
    _keepalive.extend((raw_callback, no_finalizer))
    mod, nm = module.encode(), name.encode()
    error = ffi.wasmtime_linker_define_func_unchecked(
        linker.ptr(), mod, len(mod), nm, len(nm), ty.ptr(), raw_callback, None, no_finalizer
    )
    if error:
        raise wasmtime.WasmtimeError._from_ptr(error)


def context_memory(context: Any, memory: wasmtime.Memory) -> tuple[int, int]:
    """(base address, size in bytes) of ``memory`` seen through a raw store context."""
    ptr = ffi.wasmtime_memory_data(context, ctypes.byref(memory._memory))
    size = ffi.wasmtime_memory_data_size(context, ctypes.byref(memory._memory))
    return ctypes.cast(ptr, ctypes.c_void_p).value or 0, int(size)
