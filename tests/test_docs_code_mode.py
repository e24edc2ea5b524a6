"""docs/code-mode.md's complete example runs as written, in its own interpreter, and prints
what its comments say."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "code-mode.md"


def test_the_complete_example_prints_what_it_says(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    [example] = re.findall(r"## A complete example\n.*?```python\n(.*?)```", text, re.S)
    promised = re.findall(r"^print\(.*\)  # (.*)$", example, re.M)
    assert len(promised) == 8
    out = subprocess.run(
        [sys.executable, "-c", example], capture_output=True, text=True, cwd=tmp_path, timeout=180
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == promised
