"""What a tool may import: only the bundled npm libraries listed in ``_build/libs/manifest.json``.

The guest asks the host for every specifier; anything that is not exactly a bundled library's
name or one of the other forms the manifest lists for it (``dayjs/esm``,
``dayjs/plugin/utc.js``) is refused (relative paths, ``node:*``, URLs, ``qjs:*``, ``..`` tricks)
with a message that names the libraries that can be imported. A form is served as a re-export
of its library, so both names give the same module instance. Sources load lazily, once per
process.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable
from pathlib import Path

from toolfoundry.sandbox.js.intl_parts import IntlParts

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
        self._aliases: dict[str, tuple[str, str | None]] = {}  # form -> (library, export)
        self._intl: IntlParts | None = None
        self._sources: dict[str, str] = {}
        self._bytecode: dict[str, bytes] = {}

    def names(self) -> list[str]:
        """Names of the bundled libraries and their subpaths, sorted (not the other forms)."""
        return sorted(self._entries())

    def importable(self) -> frozenset[str]:
        """Every specifier a tool may import: the names and the other forms of each."""
        return frozenset(self._entries()) | frozenset(self._aliases)

    def resolve(self, specifier: str) -> str | None:
        """The bundled library ``specifier`` names (itself, or the target of a form), or None."""
        entries = self._entries()
        if specifier in entries:
            return specifier
        alias = self._aliases.get(specifier)
        return alias[0] if alias is not None else None

    def _entries(self) -> dict[str, Path]:
        if self._files is None:
            files: dict[str, Path] = {}
            aliases: dict[str, tuple[str, str | None]] = {}
            if self.manifest.exists():
                data = json.loads(self.manifest.read_text(encoding="utf-8"))
                for name, entry in dict(data.get("libs", {})).items():
                    file = self.manifest.parent / str(entry["file"])
                    if _inside(file, self.manifest.parent):
                        files[str(name)] = file
                for form, target in dict(data.get("aliases", {})).items():
                    module, name = _target(target)
                    if module in files and str(form) not in files:
                        aliases[str(form)] = (module, name)
                self._intl = IntlParts(self.manifest.parent, dict(data.get("intl", {})))
            self._aliases = aliases
            self._files = files
        return self._files

    def source(self, specifier: str) -> str:
        """The ES module source for ``specifier``; raise ImportRefused if not bundled."""
        entries = self._entries()
        target = self.resolve(specifier)
        alias = self._aliases.get(specifier)
        if target is None:
            allowed = packages(entries) or "none are installed"
            raise ImportRefused(
                specifier, f"only bundled libraries can be imported (by their npm name): {allowed}"
            )
        if alias is not None:
            # a re-export, so that `dayjs` and `dayjs/esm` are one module with one state
            quoted = json.dumps(target)
            name = alias[1]
            if name is not None:  # `lodash/get`: the one function, as default and by name
                return f"export {{ {name} as default, {name} }} from {quoted};\n"
            return f"export * from {quoted};\nexport {{ default }} from {quoted};\n"
        with self._lock:
            text = self._sources.get(specifier)
            if text is None:
                text = entries[specifier].read_text(encoding="utf-8")
                self._sources[specifier] = text
        return text

    def intl(self, name: str) -> str | None:
        """A part of ``Intl`` (code or data) the prelude's loader asks for, or None."""
        self._entries()
        return self._intl.text(name) if self._intl is not None else None

    def identity(self) -> bytes:
        """What the libraries' compiled bytecode depends on: the manifest, which pins each
        file's version and SHA-256 (content, never paths or times, so another installation of
        the same files shares the bytecode). A file altered after the manifest was written
        never reaches a compile: ``installation.require`` checks each against its SHA-256
        before the process's first call, and calls the sandbox unavailable otherwise."""
        return self.manifest.read_bytes() if self.manifest.exists() else b""

    def cached_bytecode(self) -> dict[str, bytes]:
        """Every library's cached bytecode, by name (what ``library_cache`` writes to disk)."""
        with self._lock:
            return dict(self._bytecode)

    def bytecode(self, specifier: str) -> bytes | None:
        """Compiled bytecode cached for a bundled library, if a call has produced it."""
        return self._bytecode.get(specifier)

    def wants_bytecode(self, specifier: str) -> bool:
        """Whether a trusted compile of ``specifier`` would add to the bytecode cache.

        Only a library's own bundle is cached: a form's re-export is tiny, and QuickJS-NG 0.17
        cannot read back the bytecode of a module that imports another one.
        """
        return specifier in self._entries() and specifier not in self._bytecode

    def keep_bytecode(self, specifier: str, code: bytes) -> None:
        """Cache the guest's compilation of a library (first one wins, bundles only)."""
        if specifier in self._entries() and 0 < len(code) <= MAX_BYTECODE:
            with self._lock:
                self._bytecode.setdefault(specifier, code)


MAX_BYTECODE = 16 * 1024 * 1024


def _inside(file: Path, libs: Path) -> bool:
    """The manifest is trusted, but a file must stay inside libs/: a plain file name there,
    not a link (a name check and one lstat: resolving every path cost ~17 ms per process)."""
    name = file.name
    return file.parent == libs and name not in ("", ".", "..") and not file.is_symlink()


_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def _target(target: object) -> tuple[str, str | None]:
    """A manifest alias's target: ``"lib"``, or ``{"module": "lib", "export": "name"}``.

    An export name that is not an identifier names no library (it is never spliced in).
    """
    if isinstance(target, dict):
        name = str(target.get("export", ""))
        return (str(target.get("module", "")), name) if _IDENTIFIER.fullmatch(name) else ("", None)
    return str(target), None


def package_of(specifier: str) -> str:
    """The npm package a specifier imports from: ``dayjs/plugin/utc`` -> ``dayjs``, and
    ``@scope/pkg/sub`` -> ``@scope/pkg``."""
    parts = specifier.split("/")
    return "/".join(parts[:2]) if specifier.startswith("@") else parts[0]


def packages(specifiers: Iterable[str]) -> str:
    """The package names among importable specifiers, for messages (subpaths and forms left out)."""
    every = set(specifiers)
    names = sorted(n for n in every if package_of(n) == n)
    shown = ", ".join(names)
    return f"{shown}, and their subpaths" if len(names) < len(every) else shown


class ImportRefused(Exception):
    """A specifier that is not a bundled library, and why (``str()`` is the whole message)."""

    def __init__(self, specifier: str, why: str) -> None:
        self.shown = specifier if len(specifier) <= 200 else specifier[:200] + "..."
        super().__init__(self.because(why))

    def because(self, why: str) -> str:
        """The message with another reason (host_calls: the global to use instead)."""
        return f'cannot import "{self.shown}": {why}'


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
