"""Versions a model writes cheaply, over MCP with the official client (in memory): a new version
as a patch of an earlier one's code, a declared ``returns`` carried to ``outputSchema`` and
checked against what the tests return, and ``tool_history`` saying what each version changed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from toolfoundry import Foundry
from toolfoundry.server.mcp.server import build_mcp_server

from .test_mcp_support import by_name, relaxed_foundry, structured

V1: dict[str, Any] = {
    "name": "shout",
    "description": "Upper-case a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "returns": {"type": "string"},
    "code": "export function handler({ text }) {\n  const loud = text.toUpperCase();\n"
    "  return loud;\n}\n",
    "tests": [{"name": "hello", "input": {"text": "hello"}, "expected": "HELLO"}],
}
# v2: the same tool, its code as a diff of v1's; it now ends with "!", so v1's test is retired
V2 = {
    **{k: v for k, v in V1.items() if k != "code"},
    "base_version": 1,
    "patch": "@@ -2,2 +2,2 @@\n   const loud = text.toUpperCase();\n-  return loud;\n"
    "+  return loud + '!';\n",
    "tests": [{"name": "bang", "input": {"text": "hi"}, "expected": "HI!"}],
    "changes_tests": [{"test": "v1:hello", "reason": "it ends with '!' now"}],
}


@pytest.fixture
def fd(tmp_path: Path) -> Iterator[Foundry]:
    yield from relaxed_foundry(tmp_path)


def test_patch_returns_and_history_over_mcp(fd: Foundry) -> None:
    async def scenario() -> None:
        async with Client(build_mcp_server(fd, poll_interval_s=0.05), mode="legacy") as client:
            made = structured(await client.call_tool("create_tool", V1))
            assert (made["status"], made["version"]) == ("active", 1), made
            listed = by_name(await client.list_tools())["shout"]
            # a string value: declared as the structured content carries it
            assert listed.output_schema == {
                "type": "object",
                "properties": {"result": {"type": "string"}},
                "required": ["result"],
                "additionalProperties": False,
            }
            called = await client.call_tool("shout", {"text": "hi"})  # the client checks it
            assert structured(called) == {"result": "HI"}

            patched = structured(await client.call_tool("create_tool", V2))
            assert (patched["status"], patched["version"]) == ("active", 2), patched
            by_name(await client.list_tools())  # the client learns v2's schema
            called = await client.call_tool("shout", {"text": "hi"})
            assert structured(called) == {"result": "HI!"}

            stale = {**V2, "base_version": 1, "name": "shout"}
            stale["patch"] = stale["patch"].replace("return loud;", "return loud.trim();")
            refused = structured(await client.call_tool("create_tool", stale))
            assert refused["status"] == "rejected"
            [problem] = [f for f in refused["findings"] if f.get("path") == "$.patch"]
            assert problem["message"].startswith("hunk #1 does not apply to the base code: ")
            assert "return loud.trim();" in problem["message"]

            missing = structured(await client.call_tool("create_tool", {**V2, "base_version": 9}))
            assert [f["path"] for f in missing["findings"]] == ["$.base_version"]
            assert "has no version 9" in missing["findings"][0]["message"]

            # v3 narrows returns to 2 characters: v2's test still returns "HI!"
            narrow = {**V2, "base_version": 2, "returns": {"type": "string", "maxLength": 2}}
            narrow["patch"] = (
                "@@ -2,1 +2,1 @@\n-  const loud = text.toUpperCase();\n"
                "+  const loud = String(text).toUpperCase();\n"
            )
            narrow["tests"] = [{"name": "empty", "input": {"text": ""}, "expected": "!"}]
            del narrow["changes_tests"]
            broken = structured(await client.call_tool("create_tool", narrow))
            assert broken["status"] == "rejected"
            assert broken["step"]["blockers"] == ["regression"]
            [earlier] = [t for t in broken["test_results"] if t["name"] == "v2:bang"]
            assert earlier["reason"].startswith("the returned value does not match returns: $")

            history = structured(await client.call_tool("tool_history", {"name": "shout"}))
            return_value = history["result"] if isinstance(history, dict) else history
            changes = {row["version"]: row["changes"] for row in return_value}
            assert changes[1]["against"] is None
            assert changes[1]["tests_added"] == ["hello"]
            assert changes[2] == {
                "against": 1,
                "changed": ["code"],
                "capabilities_added": [],
                "capabilities_removed": [],
                "tests_added": ["bang"],
                "tests_retired": ["v1:hello"],
            }

    anyio.run(scenario)
    assert [v.version for v in fd.history("shout")] == [1, 2]  # nothing refused was stored
