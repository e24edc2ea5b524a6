"""hatch_build.py: wheels and sdists carry the checked sandbox, or the build fails loudly."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from toolfoundry.sandbox.js import installation

ROOT = Path(__file__).resolve().parents[2]


def load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hatch_build", ROOT / "hatch_build.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_hook_and_package_agree_on_the_record_and_the_folder() -> None:
    hook = load_hook()
    assert installation.RECORD_NAME == hook.RECORD_NAME
    assert installation.installed().root == ROOT / hook.BUILD_DIR
    assert installation.installed().root.as_posix().endswith(hook.WHEEL_BUILD_DIR)


def test_the_tree_s_sandbox_passes_and_the_record_covers_every_file() -> None:
    hook = load_hook()
    said: list[str] = []
    record = hook.ensure_sandbox(ROOT, said.append)
    build = ROOT / hook.BUILD_DIR
    on_disk = {p.relative_to(build).as_posix() for p in build.rglob("*") if p.is_file()}
    assert set(record["files"]) == on_disk - {hook.RECORD_NAME}
    manifest = json.loads((build / "libs" / "manifest.json").read_text())
    for entry in manifest["libs"].values():  # whatever the jsbuild manifest lists is shipped
        assert f"libs/{entry['file']}" in record["files"]
    assert {"quickjs.wasm", "polyfills.js", "libs/manifest.json"} <= set(record["files"])
    assert said
    assert "sandbox checked" in said[-1]


def copy_of_the_build_inputs(tmp_path: Path) -> Path:
    """What hatch_build.py reads, copied: jsbuild's record, the guest's sources, _build/."""
    hook = load_hook()
    root = tmp_path / "tree"
    shutil.copytree(ROOT / hook.BUILD_DIR, root / hook.BUILD_DIR)
    shutil.copytree(ROOT / hook.GUEST_BUILD.parent, root / hook.GUEST_BUILD.parent)
    (root / hook.JSBUILD).mkdir()
    shutil.copy(ROOT / hook.JSBUILD / "checksums.json", root / hook.JSBUILD / "checksums.json")
    return root


def test_a_missing_library_fails_with_what_and_how(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = load_hook()
    root = copy_of_the_build_inputs(tmp_path)
    (root / hook.BUILD_DIR / "libs" / "decimal_js.mjs").unlink()
    (root / hook.BUILD_DIR / "polyfills.js").write_text("/* stale */")
    monkeypatch.setenv("PATH", str(tmp_path))  # no node here: nothing can rebuild them
    with pytest.raises(hook.SandboxMissing) as failed:
        hook.ensure_sandbox(root, lambda _line: None)
    message = str(failed.value)
    assert "libs/decimal_js.mjs: missing" in message
    assert "polyfills.js: differs from jsbuild/checksums.json" in message
    assert "make setup" in message


@pytest.mark.skipif(shutil.which("uv", path=str(Path(sys.executable).parent)) is None, reason="uv")
def test_building_a_wheel_without_the_sandbox_fails_loudly(tmp_path: Path) -> None:
    """A fresh clone (tracked files only) built with no node and no zig: the real build fails."""
    tree = tmp_path / "clone"
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, tracked):
        source = ROOT / name.decode()
        if source.is_file():
            (tree / name.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, tree / name.decode())
    shutil.copy(ROOT / "hatch_build.py", tree / "hatch_build.py")
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    assert not (tree / "src/toolfoundry/sandbox/js/_build").exists()
    uv = str(Path(sys.executable).parent / "uv")
    env = {**os.environ, "PATH": str(Path(sys.executable).parent.parent / "no-node-here")}
    env.pop("VIRTUAL_ENV", None)
    built = subprocess.run(
        [uv, "build", "--wheel", "--out-dir", str(tmp_path / "dist"), str(tree)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode != 0
    assert "toolfoundry build: the QuickJS guest is not built" in built.stderr
    assert "make setup" in built.stderr
    assert not list(tmp_path.rglob("*.whl"))
