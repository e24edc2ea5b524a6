"""A suite's life end to end, through the official MCP client against the real server:
a suite that accumulates across versions, a retirement with a reason, show_tool, call_tool of
a tool made in the same session, and an identical resubmission that creates nothing."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from mcp import Client

from toolfoundry import Foundry
from toolfoundry.registry import AuditEvent
from toolfoundry.server.mcp.server import build_mcp_server

from .test_mcp_support import relaxed_foundry, structured

PARAMETERS = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
V1: dict[str, Any] = {
    "name": "slug",
    "description": "Turn a title into a URL slug",
    "parameters": PARAMETERS,
    "code": (
        "export function handler({ text }) {\n"
        "  return text.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-');\n"
        "}\n"
    ),
    "tests": [{"name": "T1", "input": {"text": "Hello World"}, "expected": "hello-world"}],
}


def version(code: str, tests: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    draft = copy.deepcopy(V1)
    draft.update(code=code, tests=tests, **extra)
    return draft


# v2 also strips leading and trailing dashes: T1 still holds, T2 is new
V2 = version(
    "export function handler({ text }) {\n"
    "  return text.trim().toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');\n"
    "}\n",
    [{"name": "T2", "input": {"text": "  Hi!  "}, "expected": "hi"}],
)
# v3 joins words with underscores: T2 still holds, v1's T1 does not
V3_CODE = (
    "export function handler({ text }) {\n"
    "  return text.trim().toLowerCase().replace(/[^a-z0-9]+/g, '_').replace(/^_|_$/g, '');\n"
    "}\n"
)
V3_TESTS = [{"name": "T3", "input": {"text": "A b"}, "expected": "a_b"}]


@pytest.fixture
def fd(tmp_path: Any) -> Iterator[Foundry]:
    yield from relaxed_foundry(tmp_path)


def test_a_suite_accumulates_and_retires_only_with_a_reason(fd: Foundry) -> None:
    async def scenario() -> None:
        server = build_mcp_server(fd, poll_interval_s=0.05)
        async with Client(server, mode="legacy") as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert {"show_tool", "call_tool"} <= listed
            assert "slug" not in listed
            first = structured(await client.call_tool("create_tool", V1))
            assert (first["status"], first["version"]) == ("active", 1)
            second = structured(await client.call_tool("create_tool", V2))
            assert (second["status"], second["version"]) == ("active", 2)

            refused = await client.call_tool("create_tool", version(V3_CODE, V3_TESTS))
            said = json.dumps(structured(refused))
            assert structured(refused)["status"] != "active"
            assert "v1:T1" in said  # the failing earlier test, named after its version
            assert len(fd.history("slug")) == 2  # nothing stored

            retiring = version(
                V3_CODE,
                V3_TESTS,
                changes_tests=[{"test": "v1:T1", "reason": "slugs now join words with _"}],
            )
            third = structured(await client.call_tool("create_tool", retiring))
            assert (third["status"], third["version"]) == ("active", 3)

            shown = structured(await client.call_tool("show_tool", {"name": "slug"}))
            assert shown["code"] == V3_CODE
            labels = [test["label"] for test in shown["suite"]["tests"]]
            assert labels == ["v2:T2", "T3"]  # T1 retired, T2 carried from v2
            assert "v1:T1" in json.dumps(shown["suite"])  # the retirement is shown with it

            called = await client.call_tool(
                "call_tool", {"name": "slug", "arguments": {"text": "Big News"}}
            )
            assert structured(called) == {"result": "big_news"}

            history = structured(await client.call_tool("tool_history", {"name": "slug"}))
            again = structured(await client.call_tool("create_tool", retiring))
            assert again["unchanged"] is True
            assert again["version"] == 3
            assert structured(await client.call_tool("tool_history", {"name": "slug"})) == history

    anyio.run(scenario)
    retired = [e for e in fd.audit("slug") if e.event is AuditEvent.TESTS_RETIRED]
    assert len(retired) == 1
    assert retired[0].version == 3
    assert "slugs now join words with _" in json.dumps(retired[0].detail)
    assert fd.usage("slug").calls == 1
