"""Tools that use tools from a shell: ``toolfoundry tools show`` says what a tool calls (tested
against which version, and the callee now) and what calls it; once the callee is disabled,
``toolfoundry tools verify`` fails the tool that calls it, naming the callee."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from tests.shared_drafts import word_count_draft

from toolfoundry import Foundry

TOTAL = {
    "name": "total_words",
    "description": "Count the words of several texts together.",
    "parameters": {
        "type": "object",
        "properties": {"texts": {"type": "array", "items": {"type": "string"}}},
    },
    "code": "export default async ({ texts }) => {\n"
    "  const counts = await Promise.all(texts.map((text) => tools.word_count({ text })));\n"
    "  return counts.reduce((a, b) => a + b, 0);\n"
    "};",
    "tests": [{"name": "two texts", "input": {"texts": ["a b", "c"]}, "expected": 3}],
}


def toolfoundry(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolfoundry", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture
def registry(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url) as fd:
        assert fd.create_tool(word_count_draft()).status == "active"
        assert fd.create_tool(TOTAL).status == "active"
    return url


def test_tools_show_says_what_a_tool_uses_and_what_uses_it(registry: str, tmp_path: Path) -> None:
    shown = toolfoundry("tools", "show", "total_words", "--db", registry, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "uses word_count (tested against v1; now v1 active)" in shown.stdout
    callee = toolfoundry("tools", "show", "word_count", "--db", registry, cwd=tmp_path)
    assert "used by total_words v1 (active, current; tested against v1)" in callee.stdout
    # what a reviewer reads: who an approval lets reach the tool
    review = toolfoundry("approvals", "show", "word_count@1", "--db", registry, cwd=tmp_path)
    assert "  used by total_words v1 (active, current; tested against v1)" in review.stdout
    as_json = toolfoundry("tools", "show", "word_count", "--db", registry, "--json", cwd=tmp_path)
    data = json.loads(as_json.stdout)
    assert data["uses"] == []
    assert data["used_by"] == [
        {
            "name": "total_words",
            "version": 1,
            "status": "active",
            "current": True,
            "tested_against": 1,
        }
    ]


def test_verify_fails_a_tool_whose_callee_is_disabled(registry: str, tmp_path: Path) -> None:
    disabled = toolfoundry("tools", "disable", "word_count", "--db", registry, cwd=tmp_path)
    assert disabled.returncode == 0, disabled.stderr
    verified = toolfoundry("tools", "verify", "--db", registry, "--json", cwd=tmp_path)
    assert verified.returncode != 0
    report = json.loads(verified.stdout)
    [tool] = [t for t in report["tools"] if t["name"] == "total_words"]
    assert tool["outcome"] == "failed"
    assert tool["callees"][0]["path"] == "tools.word_count"
    assert "'word_count', which is disabled (v1)" in tool["callees"][0]["message"]
    text = toolfoundry("tools", "verify", "total_words", "--db", registry, cwd=tmp_path)
    assert "tools.word_count: calls 'word_count', which is disabled" in text.stdout
    called = toolfoundry(
        "call", "total_words", "--args", '{"texts": ["a"]}', "--db", registry, cwd=tmp_path
    )
    assert called.returncode != 0
    assert "dependency_unavailable" in called.stdout + called.stderr
