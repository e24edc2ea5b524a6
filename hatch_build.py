"""Hatch build hook: every wheel and sdist carries the built sandbox, checked, or the build fails.

The sandbox's built files (``src/toolfoundry/sandbox/js/_build/``: the QuickJS-NG guest, the
web-API polyfills, the bundled npm libraries and their manifest) are gitignored, so a build from
a fresh clone would silently leave them out. Before a wheel or sdist is written this hook

1. calls the guest's own build entry point (``sandbox/js/guest/build.py:build``), which
   returns at once when ``quickjs.wasm`` matches its recorded inputs and builds it otherwise
   (that needs ``ziglang``: ``make setup`` installs it);
2. checks every file ``jsbuild/checksums.json`` records (whatever the jsbuild manifest lists)
   and, when one is missing or differs and Node.js is there, runs ``node jsbuild/build.mjs
   --install`` and checks again;
3. for a wheel, adds ``_build/artifacts.json``: the SHA-256 of every file it ships there, which
   the installed package checks before its first call
   (``toolfoundry.sandbox.js.installation``).

Anything still missing stops the build with what is missing and how to make it. Editable
installs are left alone: they read the tree, which ``make setup`` fills after installing.

The sdist carries the built files themselves (they are platform-independent) next to their
sources (``jsbuild/``, ``guest/``), so a wheel built from it needs neither Node.js nor zig: the
same checks pass on the same bytes, and the same wheel comes out.

This file runs in the build's isolated environment, where none of toolfoundry's dependencies
are installed, so it imports nothing from the package; the guest build script is loaded by path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

BUILD_DIR = Path("src/toolfoundry/sandbox/js/_build")
GUEST_BUILD = Path("src/toolfoundry/sandbox/js/guest/build.py")
JSBUILD = Path("jsbuild")
# toolfoundry.sandbox.js.installation.RECORD_NAME (a test keeps the two equal)
RECORD_NAME = "artifacts.json"
WHEEL_BUILD_DIR = "toolfoundry/sandbox/js/_build"


class SandboxMissing(Exception):
    """The sandbox's built files are missing or wrong, and this machine cannot make them."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ensure_guest(root: Path) -> Path:
    """The built guest, up to date with its inputs (built here when it is not).

    Raises:
        SandboxMissing: it is missing or stale and cannot be built here.
    """
    path = root / GUEST_BUILD
    spec = importlib.util.spec_from_file_location("_toolfoundry_guest_build", path)
    if spec is None or spec.loader is None:
        raise SandboxMissing(f"{path} cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        built = Path(module.build())
    except (OSError, subprocess.CalledProcessError, SystemExit) as exc:
        why = (
            f"`{' '.join(map(str, exc.cmd[1:4]))} ...` failed (exit {exc.returncode})"
            if isinstance(exc, subprocess.CalledProcessError)
            else str(exc)
        )
        raise SandboxMissing(
            f"the QuickJS guest is not built (or is stale) and cannot be built here: {why}. "
            "Build it first: `make setup` in the checkout (or `pip install ziglang` and "
            "`python -m toolfoundry.sandbox.js.guest.build`)."
        ) from exc
    if not built.is_file():
        raise SandboxMissing(f"the guest build reported {built}, which does not exist")
    return built


def library_problems(root: Path) -> list[str]:
    """Files ``jsbuild/checksums.json`` records that are missing or differ, plus libraries the
    manifest lists without a recorded checksum (empty when everything matches)."""
    recorded = json.loads((root / JSBUILD / "checksums.json").read_text(encoding="utf-8"))
    files: dict[str, str] = recorded.get("files", {})
    if not files:
        return ["jsbuild/checksums.json records no file"]
    out = root / BUILD_DIR
    problems = []
    for rel, digest in sorted(files.items()):
        path = out / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
        elif _sha256(path) != digest:
            problems.append(f"{rel}: differs from jsbuild/checksums.json")
    manifest = out / "libs" / "manifest.json"
    if manifest.is_file():
        libs = json.loads(manifest.read_text(encoding="utf-8")).get("libs", {})
        for name, entry in sorted(libs.items()):
            if f"libs/{entry['file']}" not in files:
                problems.append(f"{name}: listed in the manifest, not in jsbuild/checksums.json")
    return problems


def ensure_libraries(root: Path, log: Any = print) -> list[str]:
    """The library and polyfill files, checked (rebuilt with Node.js first when possible).

    Returns:
        Their paths relative to ``_build/``.

    Raises:
        SandboxMissing: a file is missing or differs and Node.js cannot rebuild it here.
    """
    problems = library_problems(root)
    node = shutil.which("node")
    if problems and node and shutil.which("npm"):
        log(f"toolfoundry build: rebuilding the bundled libraries ({problems[0]}, ...)")
        script = str(root / JSBUILD / "build.mjs")
        done = subprocess.run([node, script, "--install"], cwd=root, check=False)
        problems = library_problems(root) if done.returncode == 0 else problems
    if problems:
        shown = "; ".join(problems[:5]) + (f" (and {len(problems) - 5} more)" * (len(problems) > 5))
        raise SandboxMissing(
            f"the sandbox's bundled libraries are not built: {shown}. Build them first: "
            "`make setup` (or `node jsbuild/build.mjs --install`, which needs Node.js and npm)."
        )
    recorded = json.loads((root / JSBUILD / "checksums.json").read_text(encoding="utf-8"))
    return sorted(recorded["files"])


def artifact_record(root: Path) -> dict[str, Any]:
    """``{"files": {path under _build/: sha256}}`` for every file there."""
    out = root / BUILD_DIR
    files = {
        path.relative_to(out).as_posix(): _sha256(path)
        for path in sorted(out.rglob("*"))
        if path.is_file() and path.name != RECORD_NAME
    }
    return {"files": files}


def ensure_sandbox(root: Path, log: Any = print) -> dict[str, Any]:
    """Build or check the guest and the libraries; return the record of ``_build/``.

    Raises:
        SandboxMissing: see :func:`ensure_guest` and :func:`ensure_libraries`.
    """
    guest = ensure_guest(root)
    shipped = ensure_libraries(root, log)
    record = artifact_record(root)
    log(
        f"toolfoundry build: sandbox checked: {guest.name} ({guest.stat().st_size} bytes) and "
        f"{len(shipped)} library/polyfill files; {len(record['files'])} files in _build/"
    )
    return record


class SandboxBuildHook(BuildHookInterface):  # type: ignore[misc]
    """Puts the checked sandbox into wheels and sdists (see the module docstring)."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name == "wheel" and version == "editable":
            return
        root = Path(self.root)
        try:
            record = ensure_sandbox(root, self.app.display_info)
        except SandboxMissing as exc:
            self.app.abort(f"toolfoundry build: {exc}")
            raise  # abort exits; this keeps the failure loud if it ever returns
        if self.target_name != "wheel":
            return
        self._tmp = tempfile.TemporaryDirectory()
        path = Path(self._tmp.name) / RECORD_NAME
        path.write_text(json.dumps(record, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        build_data["force_include"][str(path)] = f"{WHEEL_BUILD_DIR}/{RECORD_NAME}"

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None:
            tmp.cleanup()
