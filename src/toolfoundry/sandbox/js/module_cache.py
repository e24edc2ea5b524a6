"""Compiled guest modules cached on disk, keyed by the wasm's hash and the wasmtime version.

Compiling the guest takes about 0.6 s; deserialising a cached compilation takes milliseconds.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from importlib.metadata import version
from pathlib import Path

import wasmtime


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/toolfoundry/wasm`` (or ``~/.cache/...``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolfoundry" / "wasm"


def load_module(engine: wasmtime.Engine, wasm_path: Path) -> wasmtime.Module:
    """Deserialise a cached compilation of ``wasm_path``, or compile it and cache the result.

    The key includes the engine settings that change generated code (epoch interruption and
    stack size are fixed by the caller), so a stale or foreign entry is never loaded.
    """
    wasm = wasm_path.read_bytes()
    key = hashlib.sha256(wasm + f"wasmtime-{version('wasmtime')}-epoch".encode()).hexdigest()
    cached = cache_dir() / f"{key[:32]}.cwasm"
    if cached.exists():
        try:
            return wasmtime.Module.deserialize_file(engine, str(cached))
        except wasmtime.WasmtimeError:
            cached.unlink(missing_ok=True)
    module = wasmtime.Module(engine, wasm)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cached.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(module.serialize())
        os.replace(tmp, cached)
    except OSError:
        pass  # a read-only cache only costs compile time
    return module
