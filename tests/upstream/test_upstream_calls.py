"""A snippet calls upstream MCP servers' tools through `tools`, behind the gate: real servers
written with the official Python SDK, over stdio and Streamable HTTP."""

from __future__ import annotations

import time
from typing import Any

import pytest
from tests.factories import error_of
from tests.upstream.conftest import TOKEN, HttpUpstream, UpstreamFoundry, notes_entry, wait_until

from toolfoundry.spec import ErrorKind

CATCH = """
const attempt = async (f) => { try { return { value: await f() }; }
  catch (e) { return { kind: e.kind, tool: e.tool, message: e.message }; } };
"""


def run(fd: Any, body: str, args: dict[str, Any] | None = None) -> Any:
    result = fd.run_js(CATCH + f"export default async (args) => {{ {body} }}", args or {})
    assert result.error is None, result.error
    return result.value


def test_a_snippet_calls_upstream_tools_counted_and_audited_with_its_caller(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    ran = fd.run_js(
        "export default async () => { await tools.notes.add_note({ text: 'a' });"
        " await tools.call('notes.add_note', { text: 'b' });"
        " return (await tools.notes.list_notes({})).notes; }",
        {},
    )
    assert ran.value == ["a", "b"]
    run_id = ran.details["run_id"]
    called = [a for a in fd.audit() if a.event.value == "called"]
    assert [(a.tool, a.caller, a.version) for a in called] == [
        ("notes.add_note", f"run:{run_id}", None),
        ("notes.add_note", f"run:{run_id}", None),
        ("notes.list_notes", f"run:{run_id}", None),
    ]
    assert fd.usage("notes.add_note").callers == {"run_js": 2}


def test_the_listing_is_read_across_every_page(upstream_foundry: UpstreamFoundry) -> None:
    fd = upstream_foundry(notes_entry())  # the server lists three tools a page
    names = [e.tool.name for e in fd.upstream_tools()]
    assert len(names) == 8
    assert "notes.hostile" in names


def test_arguments_are_checked_against_the_upstream_schema_before_it_is_called(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    out = run(fd, "return attempt(() => tools.notes.add_note({ text: 3 }));")
    assert out["kind"] == "invalid_arguments"
    assert out["tool"] == "notes.add_note"
    assert run(fd, "return tools.notes.list_notes({});") == {"notes": []}


def test_a_destructive_tool_waits_for_approval_and_a_changed_schema_asks_again(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    refused = run(fd, "return attempt(() => tools.notes.delete_notes({}));")
    assert refused["kind"] == "not_active"
    assert "approval" in refused["message"]
    entry = fd.approve_upstream("notes.delete_notes", by="alice", reason="notes are scratch")
    assert entry.standing.value == "approved"
    assert run(fd, "return tools.notes.delete_notes({});") == "deleted 0"

    run(fd, "return tools.notes.reshape({});")  # the server changes delete_notes' schema
    wait_until(lambda: fd.upstream_tool("notes.delete_notes").standing.value != "approved")  # type: ignore[union-attr]
    changed = fd.upstream_tool("notes.delete_notes")
    assert changed is not None
    assert changed.standing.value == "schema_changed"
    assert changed.approved_schema == {"type": "object", "properties": {}}
    again = run(fd, "return attempt(() => tools.notes.delete_notes({ older_than_days: 3 }));")
    assert again["kind"] == "not_active"
    assert "schema changed" in again["message"]
    fd.approve_upstream("notes.delete_notes", by="alice", schema_hash=changed.tool.schema_hash)
    assert run(fd, "return tools.notes.delete_notes({ older_than_days: 3 });") == "deleted 0"


def test_an_approval_given_for_a_schema_the_person_did_not_see_is_not_recorded(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    with pytest.raises(ValueError, match="changed since it was shown"):
        fd.approve_upstream("notes.delete_notes", by="alice", schema_hash="0" * 64)
    assert fd.upstream_tool("notes.delete_notes").standing.value == "needs_approval"  # type: ignore[union-attr]


def test_the_configuration_allows_denies_and_asks_per_tool_and_per_upstream(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(
        notes_entry(policy="approve", allow=["list_notes"], deny=["crash"]),
    )
    standing = {e.tool.tool: e.standing.value for e in fd.upstream_tools()}
    assert standing["list_notes"] == "allowed"
    assert standing["crash"] == "denied"
    assert standing["add_note"] == "needs_approval"  # read-only or not: the upstream says ask
    assert run(fd, "return attempt(() => tools.notes.crash({}));")["kind"] == "capability_denied"
    assert run(fd, "return attempt(() => tools.notes.add_note({ text: 'x' }));")["kind"] == (
        "not_active"
    )


def test_an_upstream_that_dies_mid_call_is_unavailable_and_comes_back(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry(), limits={"timeout_s": 5.0})
    began = time.monotonic()
    out = run(fd, "return attempt(() => tools.notes.crash({}));")
    assert out["kind"] == "unavailable"
    assert time.monotonic() - began < 5.0
    assert fd.upstreams is not None
    wait_until(lambda: fd.upstreams.ready("notes"))  # type: ignore[union-attr]  # restarted
    assert run(fd, "return tools.notes.list_notes({});") == {"notes": []}
    assert fd.upstreams.statuses()[0].attempts == 2


def test_a_hanging_upstream_is_unavailable_within_the_outer_budget(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry(), limits={"timeout_s": 1.5})
    began = time.monotonic()
    ran = fd.run_js("export default () => tools.notes.sleep({ seconds: 30 })", {})
    took = time.monotonic() - began
    assert error_of(ran).kind in (ErrorKind.UNAVAILABLE, ErrorKind.TIMEOUT)
    assert took < 3.0
    assert fd.call("notes.list_notes", {}).value == {"notes": []}  # it still serves


def test_an_upstreams_own_timeout_bounds_a_direct_call(upstream_foundry: UpstreamFoundry) -> None:
    fd = upstream_foundry(notes_entry(timeout_s=0.5))
    began = time.monotonic()
    assert error_of(fd.call("notes.sleep", {"seconds": 30})).kind is ErrorKind.UNAVAILABLE
    assert time.monotonic() - began < 2.0


def test_a_huge_answer_is_refused_by_the_gate(upstream_foundry: UpstreamFoundry) -> None:
    fd = upstream_foundry(notes_entry(), limits={"timeout_s": 20.0})
    huge = run(fd, "return attempt(() => tools.notes.hostile({ kind: 'huge' }));")
    assert huge["kind"] == "output_too_large"  # 20 MB of text against a 1 MiB output limit
    assert run(fd, "return tools.notes.list_notes({});") == {"notes": []}


def test_an_answer_too_deep_for_the_client_is_unavailable(
    upstream_foundry: UpstreamFoundry,
) -> None:
    # The official client's own parser drops the 200-deep answer: no answer comes, so the
    # upstream's timeout (short here; the call budget otherwise) ends the wait.
    fd = upstream_foundry(notes_entry(timeout_s=2.0))
    began = time.monotonic()
    deep = fd.call("notes.hostile", {"kind": "deep"})
    assert error_of(deep).kind is ErrorKind.UNAVAILABLE
    assert time.monotonic() - began < 6.0
    assert run(fd, "return tools.notes.list_notes({});") == {"notes": []}


def test_a_tool_list_that_changes_is_followed(upstream_foundry: UpstreamFoundry) -> None:
    fd = upstream_foundry(notes_entry())
    assert fd.upstreams is not None
    before = fd.upstreams.revision
    run(fd, "return tools.notes.grow({});")
    wait_until(lambda: fd.upstream_tool("notes.added_1") is not None)
    assert fd.upstreams.revision > before
    assert run(fd, "return tools.notes.added_1({});") == "added_1 ran"


def test_unknown_upstreams_and_tools_are_not_found_with_a_suggestion(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    assert error_of(fd.call("nots.add_note", {})).kind is ErrorKind.NOT_FOUND
    missing = error_of(fd.call("notes.add_notes", {"text": "x"}))
    assert missing.kind is ErrorKind.NOT_FOUND
    assert "did you mean 'add_note'" in missing.message
    assert not [a for a in fd.audit() if a.event.value == "called"]  # nothing to count


def test_an_upstream_that_cannot_start_is_unavailable_saying_why(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry({"name": "gone", "command": "/nonexistent/mcp-server"}, wait=False)
    assert fd.upstreams is not None
    assert not fd.upstreams.wait(10)
    failed = error_of(fd.call("gone.anything", {}))
    assert failed.kind is ErrorKind.UNAVAILABLE
    status = fd.upstreams.statuses()[0]
    assert status.state.value in ("down", "connecting")
    assert status.error


def test_an_http_upstream_gets_its_bearer_token_and_the_snippet_never_sees_it(
    upstream_foundry: UpstreamFoundry, tracker: HttpUpstream
) -> None:
    fd = upstream_foundry(tracker.entry())
    ran = fd.run_js(
        "export default async () => [await tools.tracker.open_ticket({ title: 'x' }),"
        " await tools.tracker.whoami({})]",
        {},
    )
    assert ran.error is None, ran.error
    ticket, whoami = ran.value
    assert ticket == {"id": 1, "title": "x"}
    assert TOKEN not in str(ran.value)  # the server echoed it; the host redacted it
    assert "[redacted]" in whoami


def test_an_http_upstream_without_its_credential_is_down_naming_the_variable(
    upstream_foundry: UpstreamFoundry, tracker: HttpUpstream, monkeypatch: Any
) -> None:
    monkeypatch.delenv(tracker.variable)
    fd = upstream_foundry(tracker.entry(), wait=False)
    assert fd.upstreams is not None
    assert not fd.upstreams.wait(10)
    error = fd.upstreams.statuses()[0].error or ""
    assert tracker.variable in error
    assert error_of(fd.call("tracker.count_tickets", {})).kind is ErrorKind.UNAVAILABLE
