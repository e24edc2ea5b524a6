"""The first run on a machine prepares the module cache by itself, and says so when slow."""

from __future__ import annotations

from pathlib import Path

import pytest

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
