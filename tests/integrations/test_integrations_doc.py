"""Every example in docs/integrations.md runs as written, each in its own interpreter (as a
user's script would: the telemetry example sets the global tracer provider)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
SECTIONS = re.findall(r"^## (.+?)\n(.*?)(?=^## |\Z)", DOC.read_text(encoding="utf-8"), re.S | re.M)
EXAMPLES = {
    title: blocks[0]
    for title, body in SECTIONS
    if (blocks := re.findall(r"```python\n(.*?)```", body, re.S))
}
# What each example prints that shows it did its job.
EXPECTED = {
    "Pydantic AI": ["3 words", "weather is ready active"],
    "OpenAI Agents SDK": ["3 words", "invalid_arguments", "{'invalid_arguments': 1}"],
    "LangChain and LangGraph": ["3", "error", "3 words; the weather tool is ready active"],
    "smolagents": ["3 words", "True", "{'invalid_arguments': 1}"],
    "Traces and metrics (OpenTelemetry)": [
        '"name": "create_tool word_count"',
        '"name": "execute_tool word_count"',
        '"gen_ai.tool.call.id": "call_1"',
        '"error.type": "invalid_arguments"',
    ],
}


def test_every_framework_and_the_traces_have_an_example() -> None:
    assert set(EXAMPLES) == set(EXPECTED)


@pytest.mark.parametrize("title", sorted(EXPECTED))
def test_the_example_runs(title: str, tmp_path: Path) -> None:
    pytest.importorskip(
        {
            "Pydantic AI": "pydantic_ai",
            "OpenAI Agents SDK": "agents",
            "LangChain and LangGraph": "langchain.agents",
            "smolagents": "smolagents",
            "Traces and metrics (OpenTelemetry)": "opentelemetry.sdk",
        }[title]
    )
    out = subprocess.run(
        [sys.executable, "-c", EXAMPLES[title]],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    for line in EXPECTED[title]:
        assert line in out.stdout, out.stdout
