"""show_tool, call_tool, the tools' source and tests as resources, and failed run_js as an
error, through the official MCP client against the real server in process (the SDK's
in-memory transport: the same handlers, sessions and notifications as over stdio)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.subscriptions import ResourcesListChanged
from mcp.shared.exceptions import MCPError

from toolfoundry import Foundry
from toolfoundry.base.json_gate import decode
from toolfoundry.registry import AuditEvent
from toolfoundry.server.mcp.resources import TYPES_URI
from toolfoundry.server.mcp.server import build_mcp_server

from .test_mcp_support import Notifications, by_name, relaxed_foundry, structured, text_of

ADD: dict[str, Any] = {
    "name": "add",
    "description": "Add two numbers",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
    "code": "export function handler({ a, b }) {\n  return a + b;\n}\n",
    "tests": [{"name": "small", "input": {"a": 1, "b": 2}, "expected": 3}],
}
WEATHER: dict[str, Any] = {
    "name": "weather",
    "description": "Current temperature for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
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


def add_v2() -> dict[str, Any]:
    """``add`` v2: its own test T2, and v1's T1 still gates it."""
    draft = copy.deepcopy(ADD)
    draft["code"] = "export function handler({ a, b }) {\n  return Number(a) + Number(b);\n}\n"
    draft["tests"] = [{"name": "negative", "input": {"a": -1, "b": -2}, "expected": -3}]
    return draft


@pytest.fixture
def fd(tmp_path: Any) -> Iterator[Foundry]:
    yield from relaxed_foundry(tmp_path)


def error_of(result: Any) -> dict[str, Any]:
    assert isinstance(result, types.CallToolResult)
    assert result.is_error is True, text_of(result)
    error: dict[str, Any] = structured(result)["error"]
    return error


def test_call_tool_reaches_a_tool_created_after_the_list_was_read(fd: Foundry) -> None:
    """A client that cached its tool list (cache_tools_list=True) calls a new tool by name,
    with the same validation, usage and audit as a direct call."""

    async def scenario() -> None:
        server = build_mcp_server(fd, poll_interval_s=0.05)
        async with Client(server, mode="legacy") as client:
            cached = by_name(await client.list_tools())
            assert "add" not in cached
            created = structured(await client.call_tool("create_tool", ADD))
            assert created["status"] == "active"
            summed = await client.call_tool("call_tool", {"name": "add", "arguments": {"a": 2}})
            problems = error_of(summed)["problems"]
            assert error_of(summed)["kind"] == "invalid_arguments"
            assert {p["path"] for p in problems} == {"$"}  # the tool's own schema said so
            summed = await client.call_tool(
                "call_tool", {"name": "add", "arguments": {"a": 2, "b": 5}}
            )
            assert structured(summed) == {"result": 7}
            assert text_of(summed) == "7"
            pending = structured(await client.call_tool("create_tool", WEATHER))
            assert pending["status"] == "pending_approval"
            waiting = await client.call_tool(
                "call_tool", {"name": "weather", "arguments": {"city": "Oslo"}}
            )
            direct = await client.call_tool("weather", {"city": "Oslo"})
            assert error_of(waiting)["kind"] == error_of(direct)["kind"] == "not_active"

    anyio.run(scenario)
    usage = fd.usage("add")
    assert (usage.calls, usage.failures) == (2, {"invalid_arguments": 1})
    called = [e for e in fd.audit("add") if e.event is AuditEvent.CALLED]
    assert len(called) == 2


def test_call_tool_refuses_hostile_calls_with_structured_errors(fd: Foundry) -> None:
    async def scenario() -> None:
        server = build_mcp_server(fd, poll_interval_s=0.05)
        async with Client(server, mode="legacy") as client:
            await client.call_tool("create_tool", ADD)
            unknown = await client.call_tool("call_tool", {"name": "nope", "arguments": {}})
            assert error_of(unknown)["kind"] == "not_found"
            for meta in ("call_tool", "create_tool", "run_js"):
                named = {"name": meta, "arguments": {"code": "export default 1"}}
                refused = error_of(await client.call_tool("call_tool", named))
                assert refused["kind"] == "invalid_arguments"
                assert refused["problems"][0]["path"] == "$.name"
                assert "meta-tool" in refused["message"]
            for arguments in ([1, 2], "a=1", None, 3):
                args: dict[str, Any] = {"name": "add", "arguments": arguments}
                bad = error_of(await client.call_tool("call_tool", args))
                assert bad["kind"] == "invalid_arguments"
                assert bad["problems"][0]["path"] == "$.arguments"
            for name in ("\ud800add", "a" * 5000, "../add", "", 7):
                bad = error_of(await client.call_tool("call_tool", {"name": name, "arguments": {}}))
                assert bad["kind"] == "invalid_arguments", bad
            # the server still answers
            assert structured(
                await client.call_tool("call_tool", {"name": "add", "arguments": {"a": 1, "b": 1}})
            ) == {"result": 2}

    anyio.run(scenario)
    assert fd.usage("add").calls == 1  # refused calls never reached the tool


def test_an_unknown_tool_name_is_refused_with_the_names_it_is_close_to(fd: Foundry) -> None:
    """As the CLI says it (spec/names.py: did_you_mean), among every name the client may
    call: the registry's active tools and the meta-tools."""

    async def scenario() -> None:
        server = build_mcp_server(fd, poll_interval_s=0.05)
        async with Client(server, mode="legacy") as client:
            await client.call_tool("create_tool", ADD)
            for typed, meant in (("ad", "'add'"), ("search_tool", "'search_tools'")):
                with pytest.raises(MCPError) as refused:
                    await client.call_tool(typed, {})
                assert refused.value.error.code == types.INVALID_PARAMS
                message = refused.value.error.message  # the closest first
                assert message.startswith(f"unknown tool {typed!r}; did you mean {meant}")
            with pytest.raises(MCPError) as far:
                await client.call_tool("zzzz_qqqq", {})
            assert far.value.error.message == "unknown tool 'zzzz_qqqq'"  # nothing close

    anyio.run(scenario)


def test_show_tool_returns_the_code_and_every_test_the_version_was_gated_by(fd: Foundry) -> None:
    async def scenario() -> None:
        server = build_mcp_server(fd, poll_interval_s=0.05)
        async with Client(server, mode="legacy") as client:
            await client.call_tool("create_tool", ADD)
            v2 = structured(await client.call_tool("create_tool", add_v2()))
            assert (v2["status"], v2["version"]) == ("active", 2)
            await client.call_tool("add", {"a": "x", "b": 1})  # a failure to report
            shown = structured(await client.call_tool("show_tool", {"name": "add"}))
            assert (shown["version"], shown["status"], shown["current"]) == (2, "active", True)
            assert shown["code"] == add_v2()["code"]
            assert shown["parameters"] == ADD["parameters"]
            assert shown["description"] == ADD["description"]
            tests = {t["label"]: t for t in shown["suite"]["tests"]}
            assert list(tests) == ["v1:small", "negative"]  # v1's test first, then its own
            assert tests["v1:small"]["input"] == {"a": 1, "b": 2}
            assert tests["v1:small"]["expected"] == 3
            assert tests["v1:small"]["result"]["passed"] is True
            assert tests["negative"]["expected"] == -3
            assert shown["usage"]["failures"] == {"invalid_arguments": 1}
            assert shown["last_error"]["kind"] == "invalid_arguments"
            first = structured(await client.call_tool("show_tool", {"name": "add", "version": 1}))
            assert (first["version"], first["current"]) == (1, False)
            assert [t["label"] for t in first["suite"]["tests"]] == ["small"]
            pending = structured(await client.call_tool("create_tool", WEATHER))
            assert pending["status"] == "pending_approval"
            weather = structured(await client.call_tool("show_tool", {"name": "weather"}))
            assert weather["status"] == "pending_approval"  # read-only, so any version
            assert weather["fixtures"][0]["url"] == WEATHER["fixtures"][0]["url"]
            assert weather["capabilities"] == {"network": ["api.example.com"]}
            missing = error_of(await client.call_tool("show_tool", {"name": "nope"}))
            assert missing["kind"] == "not_found"
            missing = error_of(await client.call_tool("show_tool", {"name": "add", "version": 9}))
            assert (missing["kind"], missing["message"]) == ("not_found", "no tool 'add' version 9")
            for args in ({"name": "\udc00"}, {"name": "add", "version": 2**40}, {}):
                assert error_of(await client.call_tool("show_tool", args))["kind"] == (
                    "invalid_arguments"
                )

    anyio.run(scenario)
    assert fd.show_tool("add")["suite"]["tests"][0]["label"] == "v1:small"  # the Python API


def test_meta_tool_hints_are_honest(fd: Foundry) -> None:
    async def scenario() -> None:
        server = build_mcp_server(fd, poll_interval_s=0.05)
        async with Client(server, mode="legacy") as client:
            tools = by_name(await client.list_tools())
            show, call = tools["show_tool"].annotations, tools["call_tool"].annotations
            assert show is not None
            assert call is not None
            assert show.read_only_hint is True
            assert (call.read_only_hint, call.destructive_hint, call.open_world_hint) == (
                False,
                True,
                True,
            )

    anyio.run(scenario)


def test_failed_run_js_is_an_error_result_with_its_console_output(fd: Foundry) -> None:
    async def scenario() -> None:
        server = build_mcp_server(fd, poll_interval_s=0.05)
        async with Client(server, mode="legacy") as client:
            code = "console.log('about to fail'); throw new Error('boom')"
            failed = await client.call_tool("run_js", {"code": code})
            assert error_of(failed)["kind"] == "runtime_error"
            assert "boom" in error_of(failed)["message"]
            assert failed.meta is not None
            assert failed.meta["toolfoundry/logs"] == ["about to fail"]
            assert "about to fail" in text_of(failed)
            ok = await client.call_tool("run_js", {"code": "export default 6 * 7"})
            assert ok.is_error is False
            assert structured(ok)["value"] == 42

    anyio.run(scenario)


def test_resources_are_each_active_tools_source_and_tests(fd: Foundry) -> None:
    async def scenario() -> None:
        server = build_mcp_server(fd, poll_interval_s=0.05)
        notes = Notifications()
        async with Client(server, mode="legacy", message_handler=notes) as client:
            caps = client.server_capabilities
            assert caps.resources is not None
            assert caps.resources.list_changed is True
            empty = await client.list_resources(cache_mode="bypass")
            assert [str(r.uri) for r in empty.resources] == [TYPES_URI]  # tests/.../test_mcp_types
            seen = notes.resources_changed
            await client.call_tool("create_tool", ADD)
            await notes.wait_resources_changed(seen)
            listed = await client.list_resources(cache_mode="bypass")
            kinds = {str(r.uri): r.mime_type for r in listed.resources}
            assert kinds == {
                TYPES_URI: "text/x-typescript",
                "toolfoundry://tools/add/source": "text/javascript",
                "toolfoundry://tools/add/tests": "application/json",
            }
            await client.call_tool("create_tool", add_v2())
            await client.call_tool("create_tool", WEATHER)  # pending: no resources
            source = await client.read_resource("toolfoundry://tools/add/source")
            block = source.contents[0]
            assert isinstance(block, types.TextResourceContents)
            assert (block.text, block.mime_type) == (add_v2()["code"], "text/javascript")
            tests = await client.read_resource("toolfoundry://tools/add/tests")
            block = tests.contents[0]
            assert isinstance(block, types.TextResourceContents)
            document = decode(block.text)
            assert document["version"] == 2
            assert [t["label"] for t in document["tests"]] == ["v1:small", "negative"]
            listed = await client.list_resources(cache_mode="bypass")
            assert {str(r.uri) for r in listed.resources} == set(kinds)
            for uri in (
                "toolfoundry://tools/weather/source",  # pending approval
                "toolfoundry://tools/nope/source",
                "toolfoundry://tools/add/secrets",
                "toolfoundry://tools/\ud800/source",
                "file:///etc/passwd",
            ):
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(uri)
                assert refused.value.error.code == types.INVALID_PARAMS
                assert "resource not found" in refused.value.error.message

    anyio.run(scenario)


def test_resources_list_pages_by_cursor(fd: Foundry) -> None:
    from toolfoundry.registry import NewVersion, VersionStatus

    for name in ("alpha", "beta", "gamma"):
        fd.registry.add_version(
            NewVersion(
                name=name,
                code="export const handler = () => 1;",
                description=f"the {name} tool",
                parameters={"type": "object", "properties": {}},
                status=VersionStatus.ACTIVE,
            )
        )

    async def scenario() -> None:
        server = build_mcp_server(fd, poll_interval_s=0.05, page_size=2)
        async with Client(server, mode="legacy") as client:
            first = await client.list_resources(cache_mode="bypass")
            assert first.next_cursor is not None
            second = await client.list_resources(cursor=first.next_cursor, cache_mode="bypass")
            assert second.next_cursor is None
            uris = [str(r.uri) for r in first.resources + second.resources]
            assert uris == [TYPES_URI] + [
                f"toolfoundry://tools/{n}/{part}"
                for n in ("alpha", "beta", "gamma")
                for part in ("source", "tests")
            ]
            for cursor in ("-1", "x", "\u00b2", "9" * 40):
                with pytest.raises(MCPError) as refused:
                    await client.list_resources(cursor=cursor, cache_mode="bypass")
                assert refused.value.error.code == types.INVALID_PARAMS

    anyio.run(scenario)


def test_resources_list_changed_reaches_listen_streams(fd: Foundry) -> None:
    """On 2026-07-28 connections the notification arrives on ``subscriptions/listen``."""

    async def scenario() -> None:
        server = build_mcp_server(fd, poll_interval_s=0.05)
        async with (
            Client(server) as client,
            client.listen(resources_list_changed=True) as events,
        ):
            await client.call_tool("create_tool", ADD)
            with anyio.fail_after(10):
                event = await events.__anext__()
            assert isinstance(event, ResourcesListChanged)

    anyio.run(scenario)
