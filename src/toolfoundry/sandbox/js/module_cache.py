"""Compiled guest modules cached on disk, keyed by their inputs and the wasmtime version.

Compiling the guest takes about 0.6 s; deserialising a cached compilation takes milliseconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import wasmtime


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/toolfoundry/wasm`` (or ``~/.cache/...``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolfoundry" / "wasm"


def _runtime_identity() -> str:
    # the native library's size and mtime stand for its version (importlib.metadata costs
    # ~100 ms to import); a mismatch that slips through is caught by deserialize()
    lib_dir = Path(wasmtime.__file__).parent
    libs = sorted(p for p in lib_dir.rglob("*") if p.suffix in (".so", ".dylib", ".dll"))
    return ";".join(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in libs)


def cache_key(*parts: bytes) -> str:
    """A key over ``parts`` plus the wasmtime runtime and the engine settings we use."""
    h = hashlib.sha256(f"{_runtime_identity()}-epoch-stack2m-fixedmem".encode())
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:40]


def cached_module(
    engine: wasmtime.Engine, key: str, produce: Callable[[], bytes]
) -> wasmtime.Module:
    """Deserialise the compilation cached under ``key``, or compile ``produce()`` and cache it."""
    cached = cache_dir() / f"{key}.cwasm"
    if cached.exists():
        try:
            module = wasmtime.Module.deserialize_file(engine, str(cached))
        except wasmtime.WasmtimeError:
            cached.unlink(missing_ok=True)
        else:
            _touch(cached)
            return module
    module = wasmtime.Module(engine, produce())
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cached.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(module.serialize())
        os.replace(tmp, cached)
        prune()
    except OSError:
        pass  # a read-only cache only costs compile time
    return module


KEEP = 8  # compiled modules kept: enough for a few checkouts or versions side by side


def _touch(path: Path) -> None:
    with contextlib.suppress(OSError):
        os.utime(path)


def prune(keep: int = KEEP) -> None:
    """Remove all but the ``keep`` most recently used modules (and their derived files)."""
    modules = sorted(cache_dir().glob("*.cwasm"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in modules[keep:]:
        for path in cache_dir().glob(old.stem + ".*"):
            path.unlink(missing_ok=True)


def cached_bytes(key: str, suffix: str, produce: Callable[[], bytes]) -> bytes:
    """Small derived data cached next to the modules (e.g. the hot-page list of a snapshot)."""
    cached = cache_dir() / f"{key}.{suffix}"
    try:
        return cached.read_bytes()
    except OSError:
        pass
    data = produce()
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cached.parent, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, cached)
    except OSError:
        pass
    return data
