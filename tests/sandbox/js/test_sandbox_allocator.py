"""The guest allocator under random churn, built natively from its own source (slow).

``alloc_harness.c`` includes ``guest/alloc.c`` with linear memory played by a static arena and
checks every live block's contents and the heap's structure as it goes (see the harness).
The JavaScript-level tests (test_sandbox_memory.py) run the same allocator inside the guest.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from toolfoundry.sandbox.js.guest import build

HARNESS = Path(__file__).with_name("alloc_harness.c")


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("ziglang") is None, reason="ziglang not installed")
def test_allocator_survives_random_churn_and_fills_the_cap(tmp_path: Path) -> None:
    exe = tmp_path / "alloc_harness"
    compile_cmd = [sys.executable, "-m", "ziglang", "cc", "-target", "x86-linux-musl", "-O2"]
    compile_cmd += [f"-I{build.HERE}", "-o", str(exe), str(HARNESS)]
    subprocess.run(compile_cmd, check=True, timeout=300)
    out = subprocess.run([str(exe), "300000"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.startswith("ok "), out.stdout
