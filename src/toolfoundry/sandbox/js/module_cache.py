"""Compiled guest modules cached on disk, keyed by their inputs' content and the wasmtime release.

Compiling the guest takes about 0.6 s; deserialising a cached compilation takes milliseconds.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import wasmtime


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/toolfoundry/wasm`` (or ``~/.cache/...``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolfoundry" / "wasm"


def _runtime_identity() -> str:
    """The wasmtime release and the machine it compiles for: what compiled code depends on.

    Content, never file paths or times: a second virtualenv, a copied or touched install of
    the same wasmtime finds the same key, so the guest is compiled once per machine, not once
    per environment. The release is read from the installed distribution's ``*.dist-info``
    folder name beside the package (``importlib.metadata`` costs ~100 ms to import); without
    one, the native library's SHA-256 stands for it. A compilation that slips through anyway
    (another build of the same release) is refused by ``deserialize`` and made again.
    """
    package = Path(wasmtime.__file__).resolve().parent
    release = _release_beside(package)
    if release is None:
        digest = hashlib.sha256()
        for lib in sorted(p for p in package.rglob("*") if p.suffix in NATIVE_SUFFIXES):
            digest.update(lib.read_bytes())
        release = f"sha256:{digest.hexdigest()}"
    # a home shared by machines of two architectures keeps one compilation for each
    machine = (
        os.uname().machine if hasattr(os, "uname") else os.environ.get("PROCESSOR_ARCHITECTURE")
    )
    return f"wasmtime-{release}-{sys.platform}-{machine}"


NATIVE_SUFFIXES = (".so", ".dylib", ".dll")


def _release_beside(package: Path) -> str | None:
    """``50.0.1`` from ``wasmtime-50.0.1.dist-info`` next to the package, when exactly one."""
    try:
        names = [
            entry.name
            for entry in os.scandir(package.parent)
            if entry.name.startswith("wasmtime-") and entry.name.endswith(".dist-info")
        ]
    except OSError:
        return None
    if len(names) != 1:
        return None  # none (a source tree), or leftovers of an upgrade: say it by content
    return names[0].removeprefix("wasmtime-").removesuffix(".dist-info")


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
