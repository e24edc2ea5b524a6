"""What a tool's behaviour depends on beyond its own code: toolfoundry, the guest, wasmtime.

A tool that passed its suite when it was made can fail after any of the three changes (an
upgrade of toolfoundry's prelude or host functions, a rebuilt QuickJS guest or bundled library,
a new wasmtime). ``serve`` stores the identity with every review of the library and reviews
again at start when it differs (foundry/review_schedule.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from toolfoundry.sandbox.js.modules import BUILD_DIR

_PRELUDE = Path(__file__).resolve().parents[1] / "sandbox" / "js" / "prelude"
# the guest as this installation runs it: the engine, the web-API polyfills, the libraries'
# manifest (which holds each library's SHA-256) and the prelude run before every tool
_GUEST_FILES = ("quickjs.wasm", "polyfills.js", "libs/manifest.json")


@dataclass(frozen=True)
class RuntimeIdentity:
    """The three parts, each as a short string that changes when the part does.

    Attributes:
        toolfoundry: the installed release.
        guest: SHA-256 (16 hex digits) of the guest's files and the prelude.
        wasmtime: the installed release.
    """

    toolfoundry: str
    guest: str
    wasmtime: str

    @classmethod
    def current(cls) -> RuntimeIdentity:
        """This process's runtime (hashes about 12 MB of guest files: call it off a
        request path)."""
        return cls(_release("toolfoundry"), _guest_digest(), _release("wasmtime"))

    @property
    def fingerprint(self) -> str:
        """SHA-256 of the three parts."""
        text = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    def changes_from(self, before: dict[str, str]) -> list[str]:
        """What differs from a stored identity, one line each (``wasmtime 41.0.0 -> 42.0.0``)."""
        return [
            f"{part} {before.get(part, '?')} -> {now}"
            for part, now in asdict(self).items()
            if before.get(part) != now
        ]


def _release(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "unknown"


def _guest_digest() -> str:
    digest = hashlib.sha256()
    paths = [BUILD_DIR / name for name in _GUEST_FILES] + sorted(_PRELUDE.glob("*.js"))
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(b"missing")
    return digest.hexdigest()[:16]
