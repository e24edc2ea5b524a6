"""``tools verify`` checks what a tool calls on upstream servers: a dependent whose upstream tool
changed its input schema since the tests ran, stopped being listed, or whose upstream is no
longer configured fails, naming the tool and why; the review page's tool view and the scheduled
library review say the same. A real Python SDK server whose listing changes under the tests
(``reshape``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient
from tests.server.test_server_web_support import compose
from tests.upstream.conftest import UpstreamFoundry, notes_entry, toml_text, wait_until

from toolfoundry import Foundry
from toolfoundry.config import ReviewSettings
from toolfoundry.foundry.library_review import review_library

COUNT = "export default async () => (await tools.notes.list_notes({})).notes.length;"
WIPE = "export default async () => tools.notes.delete_notes({});"


def draft(name: str, code: str, tool: str, value: Any, expected: Any) -> dict[str, Any]:
    fixture = {"tool": tool, "args": {}, "value": value}
    return {
        "name": name,
        "description": f"{name} through the notes server.",
        "code": code,
        "tests": [{"name": "canned", "input": {}, "expected": expected, "fixtures": [fixture]}],
    }


def make_tools(fd: Foundry) -> None:
    """note_count calls notes.list_notes (read-only: allowed); wipe calls notes.delete_notes
    (destructive: approved first)."""
    fd.approve_upstream("notes.delete_notes", by="alice", reason="scratch notes")
    made = fd.create_tool(draft("note_count", COUNT, "notes.list_notes", {"notes": ["a", "b"]}, 2))
    assert made.status == "active", made.to_dict()
    made = fd.create_tool(draft("wipe", WIPE, "notes.delete_notes", "deleted 2", "deleted 2"))
    assert made.status == "active", made.to_dict()


def outcomes(fd: Foundry) -> dict[str, tuple[str, list[tuple[str, str]]]]:
    report = fd.verify()
    return {
        t.name: (t.outcome, [(u.tool, u.state.value) for u in t.upstream]) for t in report.tools
    }


def parameters(fd: Foundry, name: str) -> dict[str, Any]:
    entry = fd.upstream_tool(name)
    return {} if entry is None else entry.tool.input_schema


def schema_of(fd: Foundry, name: str) -> str:
    entry = fd.upstream_tool(name)
    return "" if entry is None else entry.tool.schema_hash


def test_verify_fails_dependents_whose_upstream_tool_changed_or_vanished(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    make_tools(fd)
    assert outcomes(fd) == {
        "note_count": ("passed", [("notes.list_notes", "unchanged")]),
        "wipe": ("passed", [("notes.delete_notes", "unchanged")]),
    }

    tested = schema_of(fd, "notes.delete_notes")
    assert fd.call("notes.reshape", {}).value == "reshaped"  # delete_notes gets a parameter
    wait_until(lambda: schema_of(fd, "notes.delete_notes") not in ("", tested))
    now = schema_of(fd, "notes.delete_notes")
    [wipe] = fd.verify(["wipe"]).tools
    assert wipe.outcome == "failed"
    assert [r.passed for r in wipe.results] == [True]  # its own tests still pass on fixtures
    [use] = wipe.upstream
    assert use.to_dict() == {
        "tool": "notes.delete_notes",
        "state": "changed",
        "tested_schema_hash": tested,
        "schema_hash": now,
        "message": f"its input schema changed since the tests ran (tested {tested[:12]}, now "
        f"{now[:12]}): check the calls, then make a new version",
    }
    [problem] = wipe.callees
    assert problem.path == "tools.notes.delete_notes"
    assert problem.message.startswith("calls 'notes.delete_notes' (upstream), changed: ")
    assert wipe.message == ("all 1 test(s) passed; 1 tool(s) it calls cannot be called as tested")

    assert fd.call("notes.reshape", {"drop": "list_notes"}).value == "dropped"
    wait_until(lambda: fd.upstream_tool("notes.list_notes") is None)
    assert outcomes(fd)["note_count"] == ("failed", [("notes.list_notes", "vanished")])
    [count] = fd.verify(["note_count"]).tools
    assert count.upstream[0].message == "upstream 'notes' no longer lists 'list_notes'"

    # a new version made against the server as it is now is verified against that
    fd.approve_upstream("notes.delete_notes", by="alice", reason="the new parameter is fine")
    made = fd.create_tool(draft("wipe", WIPE, "notes.delete_notes", "deleted 0", "deleted 0"))
    assert made.status == "active", made.to_dict()
    assert outcomes(fd)["wipe"] == ("passed", [("notes.delete_notes", "unchanged")])


def test_a_revoked_approval_blocks_the_dependent(upstream_foundry: UpstreamFoundry) -> None:
    fd = upstream_foundry(notes_entry())
    make_tools(fd)
    fd.revoke_upstream("notes.delete_notes", by="bob", reason="not on this machine")
    [wipe] = fd.verify(["wipe"]).tools
    assert (wipe.outcome, wipe.upstream[0].state.value) == ("failed", "blocked")
    assert wipe.upstream[0].message.startswith("it is needs_approval (destructive")


def test_the_tool_view_and_the_library_review_show_the_change(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    make_tools(fd)
    with TestClient(compose(fd), base_url="http://127.0.0.1:8000") as client:
        assert '<span class="kind">' not in client.get("/ui/tools/wipe").text.split('id="uses"')[1]
        tested = schema_of(fd, "notes.delete_notes")
        fd.call("notes.reshape", {})
        wait_until(lambda: schema_of(fd, "notes.delete_notes") != tested)
        uses = client.get("/ui/tools/wipe").text.split('id="uses"')[1].split("</dd>")[0]
        assert '<span class="kind">changed</span>' in uses
        assert "its input schema changed since the tests ran" in uses
        detail = client.get("/api/tools/wipe").json()
        assert detail["uses"][0]["upstream"]["state"] == "changed"
    review = review_library(fd, ReviewSettings())
    [failing] = review.findings["failing"]
    assert failing["name"] == "wipe"
    assert failing["failed"] == []
    [reason] = failing["reasons"]
    assert reason.startswith("tools.notes.delete_notes: calls 'notes.delete_notes' (upstream),")


def toolfoundry(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolfoundry", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def test_tools_verify_reports_a_changed_and_an_unconfigured_upstream(
    upstream_foundry: UpstreamFoundry, tmp_path: Path
) -> None:
    fd = upstream_foundry(notes_entry())
    # made while the server's delete_notes has its parameter: a server started afresh (the
    # CLI's own) lists the schema without it, another than the one the tests ran against
    fd.call("notes.reshape", {})
    wait_until(lambda: "older_than_days" in json.dumps(parameters(fd, "notes.delete_notes")))
    make_tools(fd)
    tested = schema_of(fd, "notes.delete_notes")
    db = f"sqlite:///{tmp_path / 'registry0.db'}"
    (tmp_path / "toolfoundry.toml").write_text(toml_text({"upstream": [notes_entry()]}))

    out = toolfoundry("tools", "verify", "wipe", "note_count", "--db", db, cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "PASSED      note_count v1  all 1 test(s) passed"
    assert lines[1] == (
        "FAILED      wipe v1  all 1 test(s) passed; 1 tool(s) it calls cannot be called as tested"
    )
    assert lines[2].startswith(
        "    tools.notes.delete_notes: calls 'notes.delete_notes' (upstream), changed: its "
        f"input schema changed since the tests ran (tested {tested[:12]}, now "
    )
    assert lines[3] == "2 tool(s) verified: 1 passed, 1 failed (wipe)"

    as_json = toolfoundry("tools", "verify", "wipe", "--db", db, "--json", cwd=tmp_path)
    [wipe] = json.loads(as_json.stdout)["tools"]
    [use] = wipe["upstream"]
    assert (use["state"], use["tested_schema_hash"]) == ("changed", tested)
    assert use["schema_hash"] not in (None, tested)

    (tmp_path / "toolfoundry.toml").write_text("")  # no [[upstream]] any more
    gone = toolfoundry("tools", "verify", "--db", db, "--json", cwd=tmp_path)
    assert gone.returncode == 1
    found = {t["name"]: t["upstream"] for t in json.loads(gone.stdout)["tools"]}
    assert found == {
        "note_count": [
            {
                "tool": "notes.list_notes",
                "state": "vanished",
                "tested_schema_hash": schema_of(fd, "notes.list_notes"),
                "schema_hash": None,
                "message": "no [[upstream]] server is configured",
            }
        ],
        "wipe": [
            {
                "tool": "notes.delete_notes",
                "state": "vanished",
                "tested_schema_hash": tested,
                "schema_hash": None,
                "message": "no [[upstream]] server is configured",
            }
        ],
    }
