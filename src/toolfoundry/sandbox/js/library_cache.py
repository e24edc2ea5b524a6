"""The bundled libraries' bytecode kept on disk, next to the compiled guest it was made by.

Compiling all bundled libraries in the guest takes 0.3-1 s, and every process did it on its
first JavaScript call (``run.prepare_libraries``: the library cache is full before any
tool runs, so no import's time tells what earlier calls imported). The bytecode depends only
on the guest (QuickJS and its settings: the snapshot's cache key) and on the libraries'
files, so the first process on a machine writes it here and later ones read it back whole,
before their first call, which keeps that property.

The file lives in the same cache as the compiled guest (``module_cache.cache_dir``), whose
native code wasmtime runs without further checks; bytecode only ever runs inside the guest.
A file that does not parse, was made for other library files, or names a library the
catalog does not have is ignored (entry by entry for the last), and the libraries are
compiled as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import tempfile
from collections.abc import Mapping
from pathlib import Path

from toolfoundry.sandbox.js.module_cache import cache_dir

MAGIC = b"toolfoundry-library-bytecode-1\n"
_DIGEST = 32  # sha256 of the libraries' identity (LibraryCatalog.identity)
_ENTRY = struct.Struct("<II")  # name length, bytecode length
MAX_FILE_BYTES = 256 * 1024 * 1024


def path_for(snapshot_key: str) -> Path:
    """Where the bytecode made by the guest of ``snapshot_key`` is kept (pruned with it)."""
    return cache_dir() / f"{snapshot_key}.libs"


def encode(identity: bytes, entries: Mapping[str, bytes]) -> bytes:
    """The file's bytes: magic, the identity's digest, then each (name, bytecode), sorted."""
    parts = [MAGIC, hashlib.sha256(identity).digest()]
    for name in sorted(entries):
        raw = name.encode("utf-8")
        parts += [_ENTRY.pack(len(raw), len(entries[name])), raw, entries[name]]
    return b"".join(parts)


def decode(data: bytes, identity: bytes) -> dict[str, bytes]:
    """The entries of a file made for ``identity``; ``{}`` for any other file, or a damaged one."""
    head = len(MAGIC) + _DIGEST
    if data[: len(MAGIC)] != MAGIC or data[len(MAGIC) : head] != hashlib.sha256(identity).digest():
        return {}
    entries: dict[str, bytes] = {}
    pos = head
    while pos < len(data):
        if pos + _ENTRY.size > len(data):
            return {}
        name_len, code_len = _ENTRY.unpack_from(data, pos)
        pos += _ENTRY.size
        end = pos + name_len + code_len
        if end > len(data):
            return {}
        try:
            name = data[pos : pos + name_len].decode("utf-8")
        except UnicodeDecodeError:
            return {}
        entries[name] = data[pos + name_len : end]
        pos = end
    return entries


def load(snapshot_key: str, identity: bytes) -> dict[str, bytes]:
    """The bytecode kept for this guest and these library files (``{}`` when there is none)."""
    path = path_for(snapshot_key)
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return {}
        data = path.read_bytes()
    except OSError:
        return {}
    return decode(data, identity)


def store(snapshot_key: str, identity: bytes, entries: Mapping[str, bytes]) -> None:
    """Write the file atomically; a read-only or full cache only costs the next process time."""
    path = path_for(snapshot_key)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(encode(identity, entries))
            os.replace(tmp, path)
        except OSError:
            Path(tmp).unlink(missing_ok=True)
            raise
