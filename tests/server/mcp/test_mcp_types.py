"""Code mode's types over MCP, through the official client against the real server in process:
the resource ``toolfoundry://types/tools.d.ts``, each ``search_tools`` hit's and ``show_tool``'s
``signature``, and ``run_js``'s description, which teaches ``tools`` in the same few lines
whatever the number of tools, and whose every claim a snippet checks both ways: it runs
through ``run_js``, and it compiles against the resource with the real TypeScript compiler."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from tests.catalog.tsc import typecheck
from tests.shared_drafts import word_count_draft

from toolfoundry import Foundry
from toolfoundry.catalog import render
from toolfoundry.registry import NewVersion, VersionStatus
from toolfoundry.server.mcp.resources import TYPES_URI
from toolfoundry.server.mcp.server import build_mcp_server

from .test_mcp_support import by_name, relaxed_foundry, structured

SHOUT: dict[str, Any] = {
    "name": "shout-text",
    "description": "Upper-case a text, with an optional suffix.",
    "parameters": {
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "suffix": {"type": "string", "enum": ["!", "?"], "default": "!"},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
    "returns": {"type": "string"},
    "code": "export const handler = ({ text, suffix = '!' }) => text.toUpperCase() + suffix;",
    "tests": [{"input": {"text": "hi"}, "expected": "HI!"}],
}


def words_draft() -> dict[str, Any]:
    """word_count, declaring what it returns (its signature's result type)."""
    return {**word_count_draft(), "returns": {"type": "integer"}}


# Written the way run_js's description teaches, every claim used once.
SNIPPET = """\
export async function handler(args: { text: string }): Promise<unknown> {
  const words: number = await tools.word_count({ text: args.text });
  const loud: string = await tools["shout-text"]({ text: args.text, suffix: "?" });
  const first: number = await tools.call("word_count", { text: "a b" }, { version: 1 });
  let missing: string | null = null;
  try {
    await tools.call("word_count", { text: "x" }, { version: 99 });
  } catch (e) {
    if (!(e instanceof ToolError)) throw e;
    missing = `${e.kind} ${e.tool}: ${e.message.length > 0}`;
  }
  return { words, loud, first, missing };
}
"""


def as_javascript(snippet: str) -> str:
    """The snippet without its type annotations (what run_js runs)."""
    return (
        snippet.replace("(args: { text: string }): Promise<unknown>", "(args)")
        .replace("const words: number", "const words")
        .replace("const loud: string", "const loud")
        .replace("const first: number", "const first")
        .replace("let missing: string | null", "let missing")
    )


@pytest.fixture
def fd(tmp_path: Path) -> Iterator[Foundry]:
    yield from relaxed_foundry(tmp_path)


def read_text(result: types.ReadResourceResult) -> tuple[str, str | None]:
    block = result.contents[0]
    assert isinstance(block, types.TextResourceContents)
    return block.text, block.mime_type


def test_the_description_s_snippet_runs_and_type_checks(fd: Foundry, tmp_path: Path) -> None:
    assert fd.create_tool(words_draft()).status == "active"
    assert fd.create_tool(SHOUT).status == "active"

    async def scenario() -> None:
        async with Client(build_mcp_server(fd, poll_interval_s=0.05), mode="legacy") as client:
            listed = await client.list_resources(cache_mode="bypass")
            assert str(listed.resources[0].uri) == TYPES_URI
            text, mime = read_text(await client.read_resource(TYPES_URI))
            assert mime == "text/x-typescript"
            assert text == render("typescript", fd.active_specs())
            checked = typecheck(tmp_path / "good", {"tools.d.ts": text, "s.ts": SNIPPET})
            assert checked.ok, checked.output
            for wrong in ('suffix: "."', "tools.word_cont(", 'version: "1"'):
                right = {"tools.word_cont(": "tools.word_count(", 'version: "1"': "version: 1"}
                bad = SNIPPET.replace(right.get(wrong, 'suffix: "?"'), wrong, 1)
                assert bad != SNIPPET
                refused = typecheck(tmp_path / "bad", {"tools.d.ts": text, "s.ts": bad})
                assert not refused.ok, wrong
            ran = await client.call_tool(
                "run_js", {"code": as_javascript(SNIPPET), "args": {"text": "one two"}}
            )
            answer = structured(ran)
            assert answer["value"] == {
                "words": 2,
                "loud": "ONE TWO?",
                "first": 2,
                "missing": "not_found word_count: true",
            }, answer
            assert answer["run_id"]

    anyio.run(scenario)


def test_hits_and_show_tool_carry_the_signature(fd: Foundry, tmp_path: Path) -> None:
    assert fd.create_tool(words_draft()).status == "active"
    assert fd.create_tool(SHOUT).status == "active"

    async def scenario() -> None:
        async with Client(build_mcp_server(fd, poll_interval_s=0.05), mode="legacy") as client:
            found = await client.call_tool("search_tools", {"query": "count words text", "k": 5})
            hits = structured(found)["result"]
            assert hits
            assert hits[0]["name"] == "word_count"
            for hit in hits:
                spec = next(s for s in fd.active_specs() if s.name == hit["name"])
                assert hit["signature"] == fd.signatures([spec.name])[spec.name]
            assert "\nword_count(args: {" in hits[0]["signature"]  # after its note: integer
            assert "): Promise<number>;" in hits[0]["signature"]
            shown = structured(await client.call_tool("show_tool", {"name": "shout-text"}))
            signature = shown["signature"]
            assert signature.startswith('"shout-text"(args: {')  # no notes: nothing before
            assert 'suffix?: "!" | "?";' in signature
            # the signature is the resource's member for that tool
            text, _ = read_text(await client.read_resource(TYPES_URI))
            body = "\n".join("  " + line for line in signature.splitlines())
            assert body in text

    anyio.run(scenario)


def test_the_resource_follows_the_active_set(fd: Foundry) -> None:
    async def scenario() -> None:
        async with Client(build_mcp_server(fd, poll_interval_s=0.05), mode="legacy") as client:
            empty = await client.list_resources(cache_mode="bypass")
            assert [str(r.uri) for r in empty.resources] == [TYPES_URI]
            text, _ = read_text(await client.read_resource(TYPES_URI))
            assert "// 0 tools." in text
            await client.call_tool("create_tool", word_count_draft())
            text, _ = read_text(await client.read_resource(TYPES_URI))
            assert "word_count(args: {" in text
            fd.disable("word_count")
            text, _ = read_text(await client.read_resource(TYPES_URI))
            assert "word_count(args" not in text

    anyio.run(scenario)


def test_run_js_description_is_the_same_whatever_the_number_of_tools(fd: Foundry) -> None:
    async def description() -> str:
        async with Client(build_mcp_server(fd, poll_interval_s=0.05), mode="legacy") as client:
            listed = await client.list_tools()
            text = by_name(listed)["run_js"].description
            assert text is not None
            return text

    before = anyio.run(description)
    for i in range(30):
        draft = copy.deepcopy(word_count_draft())
        fd.registry.add_version(
            NewVersion(
                name=f"count_{i}",
                code=draft["code"],
                description=f"Count words, variant {i}.",
                parameters=draft["parameters"],
                status=VersionStatus.ACTIVE,
            )
        )
    after = anyio.run(description)
    assert after == before
    for taught in (
        "tools.NAME(args)",
        "tools.call(name, args, { version })",
        'tools["my-tool"](args)',
        "ToolError",
        "not_active",
        "signature",
        TYPES_URI,
        "run_id",
        "from_run",
        "approved for (network, storage)",  # what the tools it calls may do
    ):
        assert taught in before, taught
    # the snippet's own code has no network, the tools it calls may: never said as one
    assert "no network" not in before
    assert len(before) < 1200
