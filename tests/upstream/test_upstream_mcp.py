"""Over MCP (the official client on ``toolfoundry serve``): one run_js snippet combines three
upstream servers' tools (Python SDK over stdio, Python SDK over Streamable HTTP with a bearer
token, TypeScript SDK over stdio) and returns one result; search, show_tool and the TypeScript
types show them; ``[serve] expose_upstream`` lists them for clients without code mode."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
from tests.factories import McpSessionFactory
from tests.upstream.conftest import (
    TOKEN,
    HttpUpstream,
    notes_entry,
    requires_ts,
    toml_text,
    ts_entry,
)

SNIPPET = """
export default async ({ text }) => {
  const stats = await tools.words.word_stats({ text });
  const note = await tools.notes.add_note({ text });
  const ticket = await tools.tracker.open_ticket({ title: `${stats.words} words` });
  const who = await tools.tracker.whoami({});
  return { words: stats.words, notes: note.count, ticket: ticket.id, who };
}
"""


def configure(cwd: Path, tracker: HttpUpstream, **serve: Any) -> None:
    config: dict[str, Any] = {
        "limits": {"timeout_s": 20.0},
        "upstream": [notes_entry(), tracker.entry(), ts_entry()],
    }
    if serve:
        config["serve"] = serve
    (cwd / "toolfoundry.toml").write_text(toml_text(config))


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


@requires_ts
def test_one_snippet_combines_three_upstreams_and_each_inner_call_is_audited(
    tmp_path: Path, tracker: HttpUpstream, mcp_session: McpSessionFactory
) -> None:
    configure(tmp_path, tracker)
    db = tmp_path / "registry.db"
    received: list[str] = []

    async def scenario() -> None:
        environ = {tracker.variable: tracker.token}
        async with mcp_session(f"sqlite:///{db}", tmp_path, environ=environ) as (session, _):
            with anyio.fail_after(60):
                ran = await session.call_tool(
                    "run_js", {"code": SNIPPET, "args": {"text": "three small words"}}
                )
            received.append(text_of(ran) + json.dumps(ran.structured_content))
            assert not ran.is_error, text_of(ran)
            assert ran.structured_content is not None
            value = ran.structured_content["value"]
            assert value["words"] == 3
            assert value["notes"] == 1
            assert value["ticket"] == 1
            assert "[redacted]" in value["who"]

            found = await session.call_tool("search_tools", {"query": "open a ticket"})
            received.append(text_of(found))
            assert "tracker.open_ticket" in text_of(found)
            shown = await session.call_tool("show_tool", {"name": "words.word_stats"})
            received.append(text_of(shown))
            assert '"standing": "allowed"' in text_of(shown)
            types_ = await session.read_resource("toolfoundry://types/tools.d.ts")
            declared = getattr(types_.contents[0], "text", "")
            assert "word_stats: ToolsByName" in declared
            listed = await session.list_tools()
            assert not [t for t in listed.tools if "." in t.name]  # not exposed by default

    anyio.run(scenario)
    assert not [text for text in received if TOKEN in text]  # the client never got it
    rows = sqlite3.connect(db).execute(
        "SELECT tool, caller FROM tf_audit WHERE event = 'called' ORDER BY id"
    )
    calls = [(tool, (caller or "").startswith("run:")) for tool, caller in rows]
    assert calls == [
        ("words.word_stats", True),
        ("notes.add_note", True),
        ("tracker.open_ticket", True),
        ("tracker.whoami", True),
    ]


def test_expose_upstream_lists_the_tools_that_may_run_for_clients_without_code_mode(
    tmp_path: Path, tracker: HttpUpstream, mcp_session: McpSessionFactory
) -> None:
    (tmp_path / "toolfoundry.toml").write_text(
        toml_text({"serve": {"expose_upstream": True}, "upstream": [notes_entry()]})
    )
    db = tmp_path / "registry.db"

    async def scenario() -> None:
        async with mcp_session(f"sqlite:///{db}", tmp_path) as (session, notes):
            with anyio.fail_after(30):
                while True:  # the upstream connects in the background
                    names = {t.name for t in (await session.list_tools()).tools}
                    if "notes.add_note" in names:
                        break
                    await anyio.sleep(0.2)
            assert "notes.delete_notes" not in names  # waits for a person: not listed
            added = await session.call_tool("notes.add_note", {"text": "via MCP"})
            assert not added.is_error, text_of(added)
            assert added.structured_content == {"count": 1}
            seen = notes.list_changed
            await session.call_tool("notes.grow", {})
            await notes.wait_list_changed(seen)
            names = {t.name for t in (await session.list_tools()).tools}
            assert "notes.added_1" in names

    anyio.run(scenario)


def test_serve_keeps_serving_when_an_upstream_crashes(
    tmp_path: Path, mcp_session: McpSessionFactory
) -> None:
    (tmp_path / "toolfoundry.toml").write_text(
        toml_text({"limits": {"timeout_s": 5.0}, "upstream": [notes_entry()]})
    )
    db = tmp_path / "registry.db"
    crash = "export default () => tools.notes.crash({})"

    async def scenario() -> None:
        async with mcp_session(f"sqlite:///{db}", tmp_path) as (session, _):
            with anyio.fail_after(60):
                first = await session.call_tool("run_js", {"code": crash, "args": {}})
                while "still connecting" in text_of(first):
                    await anyio.sleep(0.2)
                    first = await session.call_tool("run_js", {"code": crash, "args": {}})
                assert first.is_error
                assert "unavailable" in text_of(first)
                found = await session.call_tool("search_tools", {"query": "notes"})
                assert not found.is_error

    anyio.run(scenario)
