"""The official MCP client against ``toolfoundry serve`` as a real subprocess, over stdio and
over Streamable HTTP: list, call, create through MCP, list_changed (own and other processes'
changes), isError on bad arguments, protocol error on unknown tools."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters
from mcp.client.subscriptions import ToolsListChanged
from mcp.shared.exceptions import MCPError
from tests.factories import McpSessionFactory

from toolfoundry import Foundry
from toolfoundry.spec.names import META_TOOL_NAMES

from .test_mcp_support import (
    Notifications,
    by_name,
    env,
    http_session,
    relaxed_config,
    serve_http,
    text_of,
)

META = list(META_TOOL_NAMES)

SHOUT = {
    "name": "shout",
    "description": "Upper-case a text and count its characters",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "the text"}},
        "required": ["text"],
        "additionalProperties": False,
    },
    "returns": {
        "type": "object",
        "properties": {"text": {"type": "string"}, "length": {"type": "integer"}},
        "required": ["text", "length"],
    },
    "code": (
        "export function handler({ text }) {\n"
        "  console.log('shouting ' + text.length);\n"
        "  return { text: text.toUpperCase(), length: text.length };\n"
        "}\n"
    ),
    "tests": [{"input": {"text": "hi"}, "expected": {"text": "HI", "length": 2}}],
}

WEATHER = {
    "name": "weather",
    "description": "Current temperature for a city",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "code": (
        "export async function handler({ city }) {\n"
        "  const r = await fetch('https://api.example.com/w?city=' + city);\n"
        "  return (await r.json()).temp;\n"
        "}\n"
    ),
    "capabilities": {"network": ["api.example.com"]},
    "fixtures": [{"url": "https://api.example.com/w?city=Oslo", "body": '{"temp": -3}'}],
    "tests": [{"input": {"city": "Oslo"}, "expected": -3}],
}

ADD = {
    "name": "add",
    "description": "Add two numbers",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
    "code": "export const handler = ({ a, b }) => a + b;\n",
    "tests": [{"input": {"a": 1, "b": 2}, "expected": 3}],
}


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A registry with one active pure tool and one network tool waiting for approval."""
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url, config=relaxed_config(tmp_path)) as fd:
        shout = fd.create_tool(SHOUT)
        assert shout.status == "active", shout.to_dict()
        weather = fd.create_tool(WEATHER)
        assert weather.status == "pending_approval", weather.to_dict()
    return url


@pytest.fixture
def http_server(db: str, tmp_path: Path) -> Iterator[int]:
    with serve_http(db, tmp_path) as port:
        yield port


async def check_listing(session: ClientSession) -> None:
    tools = by_name(await session.list_tools())
    assert sorted(tools) == sorted([*META, "shout"])  # weather is pending: not listed
    shout = tools["shout"]
    assert shout.input_schema == SHOUT["parameters"]
    assert shout.output_schema == SHOUT["returns"]
    assert shout.description == SHOUT["description"]
    assert shout.annotations is not None
    assert shout.annotations.read_only_hint is True
    assert shout.annotations.open_world_hint is False
    create = tools["create_tool"]
    assert create.annotations is not None
    assert create.annotations.read_only_hint is False
    # the draft's one contract (forge/draft_json.py): parameters is optional, as everywhere
    # code and tests, or from_run in their place: the forge says which is missing
    assert create.input_schema["required"] == ["name", "description"]
    default = create.input_schema["properties"]["parameters"]["default"]
    assert default == {"type": "object", "properties": {}}
    assert tools["search_tools"].annotations.read_only_hint is True  # type: ignore[union-attr]


async def check_calls(session: ClientSession) -> None:
    ok = await session.call_tool("shout", {"text": "hello"})
    assert isinstance(ok, types.CallToolResult)
    assert ok.is_error is False
    assert ok.structured_content == {"text": "HELLO", "length": 5}
    assert text_of(ok) == '{"text": "HELLO", "length": 5}'
    assert ok.meta is not None
    assert ok.meta["toolfoundry/logs"] == ["shouting 5"]

    bad = await session.call_tool("shout", {"text": 3, "loud": True})
    assert isinstance(bad, types.CallToolResult)
    assert bad.is_error is True
    assert text_of(bad).startswith("invalid_arguments:")
    assert "$.text" in text_of(bad)
    error = bad.structured_content["error"]
    assert error["kind"] == "invalid_arguments"
    assert {p["path"] for p in error["problems"]} >= {"$.text"}

    pending = await session.call_tool("weather", {"city": "Oslo"})
    assert isinstance(pending, types.CallToolResult)
    assert pending.is_error is True
    assert text_of(pending) == (  # a model is told that a person, not it, must approve
        "not_active: 'weather' version 1 is pending_approval: a person must approve it before "
        "it runs (toolfoundry approvals approve weather@1, or the review page)"
    )

    with pytest.raises(MCPError) as refused:
        await session.call_tool("no_such_tool", {})
    assert refused.value.error.code == types.INVALID_PARAMS
    assert "no_such_tool" in refused.value.error.message

    searched = await session.call_tool("search_tools", {"query": "upper case text"})
    assert isinstance(searched, types.CallToolResult)
    assert not searched.is_error
    hits = searched.structured_content["result"]
    assert hits[0]["name"] == "shout"


async def check_create_and_use(session: ClientSession, notes: Notifications) -> None:
    seen = notes.list_changed
    created = await session.call_tool("create_tool", ADD)
    assert isinstance(created, types.CallToolResult)
    assert not created.is_error
    assert created.structured_content["status"] == "active", text_of(created)
    await notes.wait_list_changed(seen)
    assert "add" in by_name(await session.list_tools())
    summed = await session.call_tool("add", {"a": 2, "b": 40})
    assert isinstance(summed, types.CallToolResult)
    assert not summed.is_error
    assert summed.structured_content == {"result": 42}
    assert text_of(summed) == "42"

    refused = await session.call_tool("create_tool", {**ADD, "name": "add2", "code": "nope("})
    assert isinstance(refused, types.CallToolResult)
    assert not refused.is_error
    assert refused.structured_content["status"] == "rejected"


async def check_other_process(session: ClientSession, notes: Notifications, url: str) -> None:
    seen = notes.list_changed
    approved = await anyio.run_process(
        [sys.executable, "-m", "toolfoundry", "approvals", "approve", "weather", "--db", url],
        env=env(),
        check=False,
    )
    assert approved.returncode == 0, approved.stderr
    await notes.wait_list_changed(seen)
    weather = by_name(await session.list_tools())["weather"]
    assert weather.annotations is not None
    assert weather.annotations.open_world_hint is True
    assert weather.annotations.read_only_hint is False
    assert weather.output_schema is None

    seen = notes.list_changed
    with Foundry.open(url) as fd:
        fd.disable("shout")
    await notes.wait_list_changed(seen)
    assert "shout" not in by_name(await session.list_tools())
    disabled = await session.call_tool("shout", {"text": "x"})
    assert isinstance(disabled, types.CallToolResult)
    assert disabled.is_error
    assert text_of(disabled).startswith("not_active:")


def test_stdio_end_to_end(db: str, tmp_path: Path, mcp_session: McpSessionFactory) -> None:
    async def scenario() -> None:
        async with mcp_session(db, tmp_path) as (session, notes):
            caps = session.server_capabilities
            assert caps is not None
            assert caps.tools is not None
            assert caps.tools.list_changed
            await check_listing(session)
            await check_calls(session)
            await check_create_and_use(session, notes)
            await check_other_process(session, notes, db)

    anyio.run(scenario)


def test_http_end_to_end(db: str, http_server: int) -> None:
    async def scenario() -> None:
        async with http_session(http_server) as (session, notes):
            caps = session.server_capabilities
            assert caps is not None
            assert caps.tools is not None
            assert caps.tools.list_changed
            await check_listing(session)
            await check_calls(session)
            await check_create_and_use(session, notes)
            await check_other_process(session, notes, db)

    anyio.run(scenario)


@pytest.mark.slow
def test_http_two_clients_both_notified(db: str, http_server: int) -> None:
    async def scenario() -> None:
        async with (
            http_session(http_server) as (first, first_notes),
            http_session(http_server) as (second, second_notes),
        ):
            await first.list_tools()
            await second.list_tools()
            created = await first.call_tool("create_tool", ADD)
            assert isinstance(created, types.CallToolResult)
            assert not created.is_error
            await first_notes.wait_list_changed(0)
            await second_notes.wait_list_changed(0)
            assert "add" in by_name(await second.list_tools())

    anyio.run(scenario)


def test_http_api_approval_reaches_mcp_clients(db: str, http_server: int) -> None:
    """The page/API and MCP are one process: approving through /api notifies MCP clients."""
    base = f"http://127.0.0.1:{http_server}"

    async def scenario() -> None:
        async with http_session(http_server) as (session, notes), httpx2.AsyncClient() as http:
            listed = await http.get(f"{base}/api/tools")
            assert listed.status_code == 200
            assert {row["name"] for row in listed.json()} == {"shout", "weather"}
            approved = await http.post(
                f"{base}/api/tools/weather/versions/1/approve", json={"by": "alice"}
            )
            assert approved.status_code == 200, approved.text
            await notes.wait_list_changed(0)
            assert "weather" in by_name(await session.list_tools())
            page = await http.get(f"{base}/ui/")
            assert page.status_code == 200
            assert "weather" in page.text

    anyio.run(scenario)


@pytest.mark.parametrize("transport", ["stdio", pytest.param("http", marks=pytest.mark.slow)])
def test_modern_protocol_client_listens_for_changes(
    db: str, tmp_path: Path, transport: str
) -> None:
    """The SDK's high-level Client negotiates 2026-07-28 (no handshake): list_changed then
    arrives on the ``subscriptions/listen`` stream it opens."""

    async def scenario(server: StdioServerParameters | str) -> None:
        async with Client(server) as client:
            assert client.session.protocol_version == "2026-07-28"
            assert "shout" in by_name(await client.list_tools())
            async with client.listen(tools_list_changed=True) as events:
                created = await client.call_tool("create_tool", ADD)
                assert created.structured_content["status"] == "active", text_of(created)
                with anyio.fail_after(10):
                    event = await events.__anext__()
                assert isinstance(event, ToolsListChanged)
            summed = await client.call_tool("add", {"a": 1, "b": 2})
            assert summed.structured_content == {"result": 3}

    if transport == "stdio":
        args = ["-m", "toolfoundry", "serve", "--db", db, "--poll", "0.2"]
        params = StdioServerParameters(
            command=sys.executable, args=args, env=env(), cwd=str(tmp_path)
        )
        anyio.run(scenario, params)
        return
    with serve_http(db, tmp_path) as port:
        anyio.run(scenario, f"http://127.0.0.1:{port}/mcp")
