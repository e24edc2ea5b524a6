"""Every Python example in README.md runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(code, str(README), "exec"), {"__name__": "readme"})


def test_the_first_screen_has_the_two_commands_a_python_example_and_the_mcp_line() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert lines[2:6] == [
        "```sh",
        next(line for line in lines if line.startswith("make demo")),
        next(line for line in lines if line.startswith("make test")),
        "```",
    ]
    first = "\n".join(lines[:40])
    example = re.search(r"```python\n(.*?)```", first, re.S)  # complete within the screen
    assert example is not None
    assert example.group(1) == BLOCKS[0]  # and it is the first example, which runs (above)
    assert "Foundry.open" in example.group(1)
    assert "fd.call(" in example.group(1)
    assert "\ntoolfoundry mcp install claude-desktop" in first
