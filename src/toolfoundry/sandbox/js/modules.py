"""What a tool may import: only the bundled npm libraries listed in ``_build/libs/manifest.json``.

The guest asks the host for every specifier; anything that is not exactly a bundled library's
name (relative paths, ``node:*``, URLs, ``qjs:*``, ``..`` tricks) is refused with a message that
names the libraries that can be imported. Sources load lazily, once per process.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

BUILD_DIR = Path(__file__).resolve().parent / "_build"
LIBS_DIR = BUILD_DIR / "libs"
MANIFEST = LIBS_DIR / "manifest.json"
POLYFILLS = BUILD_DIR / "polyfills.js"


class LibraryCatalog:
    """The bundled libraries, read from a manifest, with their sources cached per process."""

    def __init__(self, manifest: Path = MANIFEST) -> None:
        self.manifest = manifest
        self._lock = threading.Lock()
        self._files: dict[str, Path] | None = None
        self._sources: dict[str, str] = {}
        self._bytecode: dict[str, bytes] = {}

    def names(self) -> list[str]:
        """Names a tool may import, sorted."""
        return sorted(self._entries())

    def _entries(self) -> dict[str, Path]:
        if self._files is None:
            files: dict[str, Path] = {}
            if self.manifest.exists():
                data = json.loads(self.manifest.read_text(encoding="utf-8"))
                for name, entry in dict(data.get("libs", {})).items():
                    file = self.manifest.parent / str(entry["file"])
                    # the manifest is trusted, but a file must stay inside libs/
                    if file.resolve().parent == self.manifest.parent.resolve():
                        files[str(name)] = file
            self._files = files
        return self._files

    def source(self, specifier: str) -> str:
        """The ES module source for ``specifier``; raise ImportRefused if not bundled."""
        entries = self._entries()
        file = entries.get(specifier)
        if file is None:
            allowed = ", ".join(sorted(entries)) or "none are installed"
            shown = specifier if len(specifier) <= 200 else specifier[:200] + "..."
            raise ImportRefused(
                f'cannot import "{shown}": only bundled libraries can be imported '
                f"(by their npm name): {allowed}"
            )
        with self._lock:
            text = self._sources.get(specifier)
            if text is None:
                text = file.read_text(encoding="utf-8")
                self._sources[specifier] = text
        return text

    def bytecode(self, specifier: str) -> bytes | None:
        """Compiled bytecode cached for a bundled library, if a call has produced it."""
        return self._bytecode.get(specifier)

    def keep_bytecode(self, specifier: str, code: bytes) -> None:
        """Cache the guest's compilation of a library (first one wins, known names only)."""
        if specifier in self._entries() and 0 < len(code) <= MAX_BYTECODE:
            with self._lock:
                self._bytecode.setdefault(specifier, code)


MAX_BYTECODE = 16 * 1024 * 1024


class ImportRefused(Exception):
    """A specifier that is not a bundled library."""


def polyfills_source() -> str | None:
    """The polyfill bundle (URL, TextEncoder, ...) if it has been built."""
    return POLYFILLS.read_text(encoding="utf-8") if POLYFILLS.exists() else None


_catalog: LibraryCatalog | None = None


def default_catalog() -> LibraryCatalog:
    """The process-wide catalog of bundled libraries."""
    global _catalog
    if _catalog is None:
        _catalog = LibraryCatalog()
    return _catalog
