"""``toolfoundry tools verify`` over many tools says where it is: on a terminal, a progress line
on stderr (tools done of all, failed so far) under each tool's line; piped, only the lines."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolfoundry import Foundry


def tool(i: int) -> dict[str, object]:
    return {
        "name": f"double_{i}",
        "description": f"Double a number (copy {i}).",
        "parameters": {"type": "object", "properties": {"n": {"type": "number"}}},
        "code": "export const handler = ({ n }) => n * 2;",
        "tests": [{"input": {"n": i}, "expected": 2 * i}],
        # copies on purpose (a suite to verify), each distinct from the first by its word
        **({"distinct_from": {"name": "double_0", "why": f"copy {i}"}} if i else {}),
    }


@pytest.fixture
def registry(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url) as fd:
        for i in range(4):
            assert fd.create_tool(tool(i)).status == "active"
    return url


def test_a_terminal_sees_the_progress_line(registry: str, tmp_path: Path) -> None:
    main, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolfoundry", "tools", "verify", "--db", registry],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=env,
        cwd=tmp_path,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(main, 4096)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    assert proc.wait(timeout=300) == 0
    os.close(main)
    shown = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode(errors="replace"))
    assert re.search(r"verifying .*?4/4 0 failed", shown), shown
    assert "PASSED      double_3 v1" in shown
    assert "4 tool(s) verified: 4 passed" in shown or "passed" in shown.splitlines()[-1]


def test_piped_output_has_no_progress_line(registry: str, tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "toolfoundry", "tools", "verify", "--db", registry],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "verifying" not in out.stderr
    assert [line.split()[0] for line in out.stdout.splitlines()[:4]] == ["PASSED"] * 4
