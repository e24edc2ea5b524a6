"""``serve --surface compact``: only the meta-tools are listed, within the token budget, at
10 000 tools, and the library is still reached (search_tools, call_tool) through the official
MCP client over stdio; the default surface still lists every tool."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import anyio
import pytest
from tests.factories import McpSessionFactory

from toolfoundry import Foundry
from toolfoundry.base.json_gate import encode
from toolfoundry.foundry.create_tool_text import GLOBALS_LINE
from toolfoundry.foundry.meta_tools import builtin_tools
from toolfoundry.server.mcp.server import build_mcp_server, meta_tool_entries
from toolfoundry.server.mcp.surface import COMPACT_TOKENS, HINT_DEFAULTS, compact_entries
from toolfoundry.spec.names import META_TOOL_NAMES

BENCH = Path(__file__).resolve().parents[3] / "bench"


def seed(url: str, count: int) -> None:
    """``count`` active tools in one transaction (bench/bench_registry.py's bulk insert)."""
    sys.path.insert(0, str(BENCH))
    try:
        from bench_registry import seed as bulk  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(BENCH))
    with Foundry.open(url) as fd:
        bulk(fd, count, random.Random(5))


def tokens(value: object) -> int:
    return len(encode(value)) // 4


def test_the_compact_surface_is_the_meta_tools_within_budget_at_10000_tools(
    tmp_path: Path, mcp_session: McpSessionFactory
) -> None:
    url = f"sqlite:///{tmp_path / 'big.db'}"
    seed(url, 10_000)

    bm25 = {"TOOLFOUNDRY_EMBEDDINGS": "off"}  # BM25 here: the listing is the point

    async def run() -> None:
        async with mcp_session(url, tmp_path, "--surface", "compact", environ=bm25) as (client, _):
            listed = await client.list_tools()
            assert listed.next_cursor is None
            assert [t.name for t in listed.tools] == list(META_TOOL_NAMES)
            shown = listed.model_dump(mode="json", by_alias=True, exclude_none=True)
            assert tokens(shown) < COMPACT_TOKENS, tokens(shown)
            # the library is one search away, and call_tool reaches any tool
            found = await client.call_tool("search_tools", {"query": "variant 1234", "k": 1})
            hit = found.structured_content["result"][0]
            assert hit["name"].endswith("_1234")
            assert "parameters" in hit
            arguments = {"text": "Hello World"}  # the seeded tools slugify their text
            called = await client.call_tool(
                "call_tool", {"name": hit["name"], "arguments": arguments}
            )
            assert not called.is_error, called.content
            assert called.structured_content == {"result": "hello-world"}
        async with mcp_session(url, tmp_path, environ=bm25) as (client, _):  # the default
            first = await client.list_tools()
            assert first.next_cursor is not None
            assert [t.name for t in first.tools[: len(META_TOOL_NAMES)]] == list(META_TOOL_NAMES)
            assert len(first.tools) > len(META_TOOL_NAMES)

    anyio.run(run)


def test_compact_entries_keep_what_a_model_needs(tmp_path: Path) -> None:
    full = meta_tool_entries({t.spec.name: t for t in builtin_tools()})
    compact = compact_entries(full)
    assert tokens({"tools": compact}) < COMPACT_TOKENS < tokens({"tools": full})
    for short, long in zip(compact, full, strict=True):
        kept = [x for x in long["description"].split("\n") if not x.startswith(GLOBALS_LINE)]
        assert short["description"] == "\n".join(kept)
        # the hints mean the same once MCP's defaults fill in those left out; no title
        told = {key: value for key, value in long["annotations"].items() if key != "title"}
        assert {**HINT_DEFAULTS, **short.get("annotations", {})} == {**HINT_DEFAULTS, **told}
        assert "outputSchema" not in short
        assert "title" not in short
        props, long_props = short["inputSchema"]["properties"], long["inputSchema"]["properties"]
        assert list(props) == list(long_props)
        assert short["inputSchema"].get("required") == long["inputSchema"].get("required")
        for name, schema in props.items():  # every parameter keeps a type and its first words
            assert "type" in schema, (short["name"], name)
            words = long_props[name].get("description")
            if words is not None:
                assert words.startswith(schema["description"].rstrip(".")), (name, words)
    create = next(e for e in compact if e["name"] == "create_tool")["description"]
    assert "Intl has locale data for" in create  # what the model cannot learn elsewhere
    assert GLOBALS_LINE not in create
    tests = next(e for e in compact if e["name"] == "create_tool")["inputSchema"]["properties"]
    assert tests["tests"]["type"] == "array"
    assert tests["tests"]["items"] == {"type": "object"}


def test_an_unknown_surface_is_refused(tmp_path: Path) -> None:
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd, pytest.raises(ValueError):
        build_mcp_server(fd, surface="tiny")
