"""A copy of the sandbox's built files that a test may damage, used in place of the real ones."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from toolfoundry.sandbox.js import installation, wasm_engine


@pytest.fixture
def sandbox_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], Path]:
    """Returns a function that makes this process use a fresh copy of ``_build/`` (returned,
    for the test to damage); the process-wide engine is dropped so the next call checks it."""

    def use_copy() -> Path:
        root = tmp_path / "_build"
        shutil.copytree(installation.installed().root, root)
        monkeypatch.setattr(installation, "_installed", installation.SandboxFiles(root))
        monkeypatch.setattr(wasm_engine, "_default", None)
        return root

    return use_copy
