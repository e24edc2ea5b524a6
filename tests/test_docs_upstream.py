"""docs/upstream.md's complete example runs as written, in its own interpreter, with a real
upstream MCP server of the official Python SDK, and prints what its comments say."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

from toolfoundry.config import parse_config

DOC = Path(__file__).resolve().parents[1] / "docs" / "upstream.md"


def test_the_complete_example_prints_what_it_says(tmp_path: Path) -> None:
    text = DOC.read_text(encoding="utf-8")
    [example] = re.findall(r"## A complete example\n.*?```python\n(.*?)```", text, re.S)
    promised = re.findall(r"^print\(.*\)  # (.*)$", example, re.M)
    assert len(promised) == 5
    out = subprocess.run(
        [sys.executable, "-c", example], capture_output=True, text=True, cwd=tmp_path, timeout=180
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == promised


def test_the_documented_configuration_loads() -> None:
    [toml] = re.findall(r"```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    github, tracker = parse_config(tomllib.loads(toml)).upstreams
    assert github.transport == "stdio"
    assert github.credentials[0].variable == "GITHUB_PERSONAL_ACCESS_TOKEN"
    assert tracker.credentials[0].header == "Authorization"
    assert tracker.deny == ("delete_project",)


def test_configuration_md_shows_every_key_of_serve_and_upstream() -> None:
    from toolfoundry.config import SERVE_KEYS
    from toolfoundry.upstream.settings import CREDENTIAL_KEYS, UPSTREAM_KEYS

    doc = DOC.parent / "configuration.md"
    [toml] = re.findall(r"```toml\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)
    shown = set(re.findall(r"^#?\s*(\w+) =", toml, re.M))
    shown |= set(re.findall(r"^\[\[\w+\.(\w+)\]\]", toml, re.M))
    missing = {*UPSTREAM_KEYS, *CREDENTIAL_KEYS, *SERVE_KEYS} - shown
    assert not missing, f"docs/configuration.md does not show {missing}"
    [notebook] = parse_config(tomllib.loads(toml)).upstreams
    assert notebook.deny == ("clear_notes",)
