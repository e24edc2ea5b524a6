"""The first run on a machine prepares the module cache by itself, and says so when slow; another
install of the same files on that machine finds it (the cache is keyed by content)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import wasmtime

import toolfoundry
from toolfoundry.sandbox import run_js
from toolfoundry.sandbox.js import installation, wasm_engine
from toolfoundry.sandbox.js.module_cache import cache_dir


def test_an_empty_cache_is_filled_by_the_first_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(wasm_engine, "_default", None)  # a new process, as far as the engine knows
    monkeypatch.setattr(installation, "NOTICE_AFTER_S", 0.0)  # compiling always takes a moment
    assert not cache_dir().exists()
    result = run_js("export default new TextEncoder().encode('é').length")
    assert result.value == 2
    assert list(cache_dir().glob("*.cwasm"))  # the compiled, snapshotted guest
    err = capsys.readouterr().err.splitlines()
    assert err[0] == (
        "toolfoundry: preparing the sandbox for this machine (once; cached afterwards)..."
    )
    assert err[1].startswith("toolfoundry: sandbox ready (")
    # the next process loads what the first one made, and makes nothing new
    made = sorted(cache_dir().iterdir())
    monkeypatch.setattr(wasm_engine, "_default", None)
    assert run_js("export default 1").value == 1
    assert sorted(cache_dir().iterdir()) == made


COLD_SCRIPT = r"""
import json, sys
from toolfoundry import Foundry
from toolfoundry.sandbox.js import installation

installation.NOTICE_AFTER_S = 0.0  # say how long the preparation took, however short
fd = Foundry.open(f"sqlite:///{sys.argv[1]}")
made = fd.create_tool({
    "name": "word_count",
    "description": "Count the words of a text.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
    "code": "export function handler({ text }) { return text.split(' ').length }",
    "tests": [{"input": {"text": "a b"}, "expected": 2}],
})
print(json.dumps({"status": made.status, "tests": [t.to_dict() for t in made.test_results]}))
"""

WARM_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])  # the copy, ahead of the virtualenv's own packages
import wasmtime
import toolfoundry.sandbox as sandbox
from toolfoundry.sandbox.js import run as sandbox_run
from toolfoundry.sandbox import run_js

compiled, libraries = [], []
module_init = wasmtime.Module.__init__
def counting_module(self, *args, **kwargs):
    compiled.append(1)
    module_init(self, *args, **kwargs)
wasmtime.Module.__init__ = counting_module
library_compile = sandbox_run._compile_library
def counting_library(specifier):
    libraries.append(specifier)
    library_compile(specifier)
sandbox_run._compile_library = counting_library
result = run_js('import D from "decimal.js"; export default new D(1).plus(2).toString()')
print(json.dumps({
    "value": result.value,
    "wasmtime": wasmtime.__file__,
    "toolfoundry": sandbox.__file__,
    "compiled": len(compiled),
    "libraries": libraries,
}))
"""


def _last_json(args: list[str], env: dict[str, str]) -> tuple[dict[str, Any], str]:
    out = subprocess.run(
        [sys.executable, "-c", *args], capture_output=True, text=True, env=env, timeout=600
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


def _copy_touched(source: Path, target: Path) -> None:
    """A copy whose every file is newer than the original's (another install of the same)."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
    later = time.time() + 3600
    for path in target.rglob("*"):
        os.utime(path, (later, later))


def test_a_second_install_of_the_same_files_does_not_compile_the_sandbox_again(
    tmp_path: Path,
) -> None:
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    cache = tmp_path / "cache" / "toolfoundry" / "wasm"
    # a cold machine: the first process compiles the guest and the libraries, and says how long
    made, err = _last_json([COLD_SCRIPT, str(tmp_path / "registry.db")], env)
    assert made["status"] == "active"
    ready = re.search(r"toolfoundry: sandbox ready \(([\d.]+) s\)", err)
    assert ready is not None, err
    # the compile is the process's, not the tool's: the test's time is its call's alone
    assert made["tests"][0]["duration_ms"] < float(ready.group(1)) * 1000
    kept = sorted(p.name for p in cache.iterdir())

    # another virtualenv: the same wasmtime release and the same toolfoundry, elsewhere, newer
    site = tmp_path / "site"
    package = Path(wasmtime.__file__).resolve().parent
    for name in [package.name, *(p.name for p in package.parent.glob("wasmtime-*.dist-info"))]:
        _copy_touched(package.parent / name, site / name)
    _copy_touched(Path(toolfoundry.__file__).resolve().parent, site / "toolfoundry")
    warm, err = _last_json([WARM_SCRIPT, str(site)], env)
    assert warm["wasmtime"].startswith(str(site))
    assert warm["toolfoundry"].startswith(str(site))
    assert warm["value"] == "3"
    assert warm["compiled"] == 0  # the compiled guest was found by content
    assert warm["libraries"] == []  # and so was the libraries' bytecode
    assert sorted(p.name for p in cache.iterdir()) == kept
    assert "preparing the sandbox" not in err
