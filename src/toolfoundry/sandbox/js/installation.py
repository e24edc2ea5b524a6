"""The sandbox as installed: which built files it needs, whether they are intact, and the fix.

The QuickJS guest, the polyfills and the bundled libraries live in ``_build/``: built by
``make setup`` in a checkout, shipped in every wheel (``hatch_build.py`` checks them when the
wheel is built and adds ``artifacts.json``, every file's SHA-256). When one is missing or
altered, the sandbox is *unavailable*: a call fails with ``sandbox_unavailable`` and a forge
never judges a draft by it, because nothing the tool's code did caused it.

The first engine of a machine compiles the guest and bakes its snapshot into the module cache
(a second or two); :func:`preparing` says so on stderr when it takes longer than a moment.
"""

from __future__ import annotations

import hashlib
import json
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from toolfoundry.sandbox.js.modules import BUILD_DIR

GUEST_WASM = BUILD_DIR / "quickjs.wasm"
# Written into wheels by hatch_build.py (which cannot import this package: same name there).
RECORD_NAME = "artifacts.json"
NOTICE_AFTER_S = 1.0
_CHECKOUT = Path(__file__).resolve().parents[4]


class SandboxUnavailable(RuntimeError):
    """The sandbox cannot run: a built file is missing or damaged, or the guest fails to load.

    The message is one line: what is wrong, then the fix.
    """


def source_checkout() -> Path | None:
    """The repository this package runs from, when it is a source checkout (not a wheel)."""
    if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "jsbuild").is_dir():
        return _CHECKOUT
    return None


def fix() -> str:
    """What to do about an unavailable sandbox, for this kind of installation."""
    checkout = source_checkout()
    if checkout is not None:
        return f"run `make setup` in {checkout} (it builds the guest and the libraries)"
    return (
        "reinstall toolfoundry from its wheel or sdist, which carry the sandbox "
        "(pip install --force-reinstall --no-deps toolfoundry-VERSION-py3-none-any.whl)"
    )


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class SandboxFiles:
    """The built files of one ``_build/`` folder.

    Attributes:
        root: the folder (``sandbox/js/_build`` of the installed package by default).
    """

    root: Path = BUILD_DIR

    @property
    def guest(self) -> Path:
        """The QuickJS-NG guest module."""
        return self.root / GUEST_WASM.name

    def problems(self) -> list[str]:
        """What is missing or altered (empty when the sandbox's files are all there and intact).

        Checked: the guest, the polyfills, the library manifest and every library it lists
        (against the manifest's SHA-256), and, in a wheel, every file against ``artifacts.json``.
        """
        found: dict[Path, str] = {}
        for rel, what in (
            (GUEST_WASM.name, "the QuickJS guest"),
            ("polyfills.js", "the web-API polyfills (URL, TextEncoder, ...)"),
            ("libs/manifest.json", "the bundled libraries' manifest"),
        ):
            if not (self.root / rel).is_file():
                found[self.root / rel] = f"{what} ({self.root / rel}) is missing"
        for path, problem in [*self._library_problems(), *self._record_problems()]:
            found.setdefault(path, problem)  # a file both lists name is reported once
        return list(found.values())

    def _library_problems(self) -> list[tuple[Path, str]]:
        manifest = self.root / "libs" / "manifest.json"
        if not manifest.is_file():
            return []
        try:
            libs = dict(json.loads(manifest.read_text(encoding="utf-8"))["libs"])
            entries = {str(name): (str(e["file"]), str(e["sha256"])) for name, e in libs.items()}
        except (ValueError, KeyError, TypeError) as exc:
            return [(manifest, f"the libraries' manifest ({manifest}) is unreadable: {exc!r}")]
        found = []
        for name, (file, digest) in sorted(entries.items()):
            path = manifest.parent / file
            if not path.is_file():
                found.append((path, f"the bundled library {name} ({path}) is missing"))
            elif _sha256(path) != digest:
                found.append((path, f"the bundled library {name} ({path}) is damaged"))
        return found

    def _record_problems(self) -> list[tuple[Path, str]]:
        record = self.root / RECORD_NAME
        if not record.is_file():
            return []  # a checkout: the builds that made its files checked them
        try:
            data = json.loads(record.read_text(encoding="utf-8"))["files"]
            files = {str(rel): str(digest) for rel, digest in data.items()}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            return [(record, f"{record} is unreadable: {exc!r}")]
        found = []
        for rel, digest in sorted(files.items()):
            path = self.root / rel
            if not path.is_file():
                found.append((path, f"{path} is missing"))
            elif _sha256(path) != digest:
                found.append((path, f"{path} is damaged (its SHA-256 is not {RECORD_NAME}'s)"))
        return found


def unavailable(problem: str) -> SandboxUnavailable:
    """The error for ``problem``, with the fix appended."""
    return SandboxUnavailable(f"the sandbox cannot run: {problem}; fix: {fix()}")


def require(files: SandboxFiles | None = None) -> None:
    """Raise :class:`SandboxUnavailable` when a built file is missing or damaged.

    A check that passed is not hashed again in this process while no file of the folder
    changed (size and modification time): ``serve`` checks before it starts, and the first
    JavaScript call would otherwise hash the same 11 MB again.
    """
    files = files or installed()
    seen = _fingerprint(files.root)
    if seen in _verified:
        return
    problems = files.problems()
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise unavailable(problems[0] + more)
    _verified.add(seen)


_verified: set[tuple[Path, tuple[tuple[str, int, int], ...]]] = set()


def _fingerprint(root: Path) -> tuple[Path, tuple[tuple[str, int, int], ...]]:
    stats = []
    for path in root.rglob("*"):
        if path.is_file():
            st = path.stat()
            stats.append((str(path.relative_to(root)), st.st_size, st.st_mtime_ns))
    return root, tuple(sorted(stats))


_installed = SandboxFiles()


def installed() -> SandboxFiles:
    """The files of the sandbox this process uses."""
    return _installed


@contextmanager
def preparing() -> Iterator[None]:
    """Around the first engine set-up of a process: check the files, report slow preparation.

    The first set-up on a machine compiles the guest and bakes its snapshot into the on-disk
    module cache; when that takes longer than :data:`NOTICE_AFTER_S`, one line on stderr says
    what is happening, and a second one when it is done.

    Raises:
        SandboxUnavailable: a file is missing or damaged, or the guest fails to load.
    """
    require()
    started = time.monotonic()
    said = threading.Event()

    def notice() -> None:
        said.set()
        print(
            "toolfoundry: preparing the sandbox for this machine (once; cached afterwards)...",
            file=sys.stderr,
            flush=True,
        )

    timer = threading.Timer(NOTICE_AFTER_S, notice)
    timer.daemon = True
    timer.start()
    try:
        yield
    except SandboxUnavailable:
        raise
    except Exception as exc:  # wasmtime rejecting the module, the prelude failing to run
        raise unavailable(f"the QuickJS guest does not load: {type(exc).__name__}: {exc}") from exc
    finally:
        timer.cancel()
    if said.is_set():
        elapsed = time.monotonic() - started
        print(f"toolfoundry: sandbox ready ({elapsed:.1f} s)", file=sys.stderr, flush=True)
