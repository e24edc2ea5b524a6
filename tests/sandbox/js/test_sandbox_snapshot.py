"""The snapshot baker: a memory image becomes a module's initial memory."""

from __future__ import annotations

import pytest
import wasmtime

from toolfoundry.sandbox.js.snapshot import bake

WAT = """(module
  (memory (export "memory") 1)
  (global $g (mut i32) (i32.const 7))
  (func (export "peek") (param i32) (result i32) (i32.load8_u (local.get 0)))
  (func (export "g") (result i32) (global.get $g))
  (data (i32.const 16) "old data"))"""


def instantiate(wasm: bytes) -> tuple[wasmtime.Store, wasmtime.Instance]:
    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    return store, wasmtime.Instance(store, wasmtime.Module(engine, wasm), [])


def test_baked_module_starts_with_the_image() -> None:
    wasm = wasmtime.wat2wasm(WAT)
    image = bytearray(3 * 65536 - 1024)
    image[0:5] = b"hello"
    image[70000:70003] = b"abc"  # past a long run of zeros: a second segment
    baked = bake(bytes(wasm), bytes(image), 1024, 3)
    store, instance = instantiate(baked)
    exports = instance.exports(store)
    memory = exports["memory"]
    assert isinstance(memory, wasmtime.Memory)
    assert memory.size(store) == 3
    peek = exports["peek"]
    assert isinstance(peek, wasmtime.Func)
    assert bytes(peek(store, 1024 + i) for i in range(5)) == b"hello"
    assert bytes(peek(store, 1024 + 70000 + i) for i in range(3)) == b"abc"
    assert peek(store, 16) == 0  # the old data segments are gone
    g = exports["g"]
    assert isinstance(g, wasmtime.Func)
    assert g(store) == 7  # other sections untouched


def test_bake_refuses_what_it_cannot_handle() -> None:
    with pytest.raises(ValueError):
        bake(b"not wasm", b"", 0, 1)
    bounded = wasmtime.wat2wasm('(module (memory 1 2) (data (i32.const 0) "x"))')
    with pytest.raises(ValueError):
        bake(bytes(bounded), b"y", 0, 1)


def test_guest_imports_only_our_hooks_and_minimal_wasi() -> None:
    from toolfoundry.sandbox.js.installation import GUEST_WASM

    module = wasmtime.Module.from_file(wasmtime.Engine(), str(GUEST_WASM))
    imports = {(i.module, i.name) for i in module.imports}
    wasi = "wasi_snapshot_preview1"
    assert imports == {
        ("tf", "host_call"),
        ("tf", "host_take"),
        (wasi, "fd_write"),
        (wasi, "fd_close"),
        (wasi, "fd_seek"),
        (wasi, "fd_fdstat_get"),
    }  # no clock: the guest reads the time from its own memory (guest/clock.c)
