"""Duplicates caught by behaviour, over MCP (official client, stdio): a draft whose tests an
active tool already passes is refused with ``duplicate_of`` naming it and how to call it, the
store unchanged; with ``distinct_from`` it goes through, and the review page and the HTTP API
show reviewers the reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
from starlette.testclient import TestClient
from tests.server.mcp.test_mcp_support import stdio_session
from tests.server.test_server_web_support import compose

from toolfoundry import Foundry

SLUGIFY = {
    "name": "slugify",
    "description": "Turn a title into a URL slug.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "code": (
        "export function handler({ text }) {\n"
        "  return text.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');\n"
        "}\n"
    ),
    "tests": [{"input": {"text": "Hello World"}, "expected": "hello-world"}],
}
# written again by a model that did not look: other code, other words, the same behaviour
AGAIN = {
    **SLUGIFY,
    "name": "title_to_slug",
    "description": "Make a URL path segment out of a heading.",
    "code": (
        "export function handler({ text }) {\n"
        "  return text.trim().toLowerCase().split(/[^a-z0-9]+/).filter(Boolean).join('-');\n"
        "}\n"
    ),
    "tests": [
        {"input": {"text": "Hello World"}, "expected": "hello-world"},
        {"input": {"text": "  Big  News! "}, "expected": "big-news"},
    ],
}


def test_a_behavioural_duplicate_is_refused_unless_it_says_why(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"

    async def over_mcp() -> None:
        async with stdio_session(url, tmp_path) as (session, _):
            made = await session.call_tool("create_tool", SLUGIFY)
            assert made.structured_content["status"] == "active"
            again = await session.call_tool("create_tool", AGAIN)
            result: dict[str, Any] = again.structured_content
            assert result["status"] == "rejected"
            assert result["duplicate_of"] == "slugify"
            assert result["step"]["blockers"] == ["duplicate"]
            (finding,) = [f for f in result["findings"] if f["rule"] == "behavioural_duplicate"]
            assert finding["severity"] == "error"
            assert finding["path"] == "$.tests"
            assert "call_tool with name 'slugify'" in finding["message"]
            assert '"required":["text"]' in finding["message"]  # its parameters
            assert "distinct_from" in finding["message"]
            listed = await session.list_tools()
            assert "title_to_slug" not in [t.name for t in listed.tools]  # nothing stored
            why = "keeps the letters of every script, not only a-z"
            said = await session.call_tool(
                "create_tool", {**AGAIN, "distinct_from": {"name": "slugify", "why": why}}
            )
            kept: dict[str, Any] = said.structured_content
            assert kept["status"] == "active", kept
            assert kept["duplicate_of"] == "slugify"
            assert [f["severity"] for f in kept["findings"]] == ["warning"]

    anyio.run(over_mcp)
    with Foundry.open(url) as fd, TestClient(compose(fd), base_url="http://127.0.0.1") as c:
        review = c.get("/api/tools/title_to_slug/versions/1")
        assert review.json()["distinct_from"] == {
            "name": "slugify",
            "why": "keeps the letters of every script, not only a-z",
        }
        page = c.get("/ui/tools/title_to_slug/v/1").text
        assert 'id="distinct-from"' in page
        assert "not only a-z" in page


def test_a_distinct_from_naming_another_tool_does_not_let_a_duplicate_through(
    tmp_path: Path,
) -> None:
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd:
        assert fd.create_tool(SLUGIFY).status == "active"
        other = {"name": "word_count", "why": "it is not that one"}
        result = fd.create_tool({**AGAIN, "distinct_from": other})
        assert result.status == "rejected"
        assert result.duplicate_of == "slugify"
