"""The review page's /ui/upstream: a destructive upstream tool is refused until a person approves
it there; a changed input schema asks again, shown as a diff."""

from __future__ import annotations

import re
from typing import Any

from starlette.testclient import TestClient
from tests.factories import error_of
from tests.server.test_server_web_support import compose, csrf_of
from tests.upstream.conftest import UpstreamFoundry, notes_entry, wait_until

from toolfoundry.spec import ErrorKind

BASE = "http://127.0.0.1:8000"


def approve(client: TestClient, name: str, **fields: str) -> Any:
    page = client.get("/ui/upstream").text
    token = csrf_of(page)
    shown = re.search(
        rf'name="name" value="{re.escape(name)}">\s*<input type="hidden" name="schema_hash" '
        r'value="([0-9a-f]+)"',
        page,
    )
    assert shown, f"no approval form for {name}"
    data = {"csrf_token": token, "name": name, "schema_hash": shown.group(1), **fields}
    return client.post("/ui/upstream/approve", data=data, headers={"origin": BASE, "referer": BASE})


def test_a_destructive_upstream_tool_is_refused_until_approved_on_the_page(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    assert error_of(fd.call("notes.delete_notes", {})).kind is ErrorKind.NOT_ACTIVE
    with TestClient(compose(fd), base_url=BASE, follow_redirects=False) as client:
        page = client.get("/ui/upstream")
        assert page.status_code == 200
        assert "notes.delete_notes" in page.text
        assert "1 waiting for a person" in page.text
        done = approve(client, "notes.delete_notes", by="alice", reason="scratch notes")
        assert done.status_code == 303
        assert fd.call("notes.delete_notes", {}).value == "deleted 0"
        assert "approved by alice" in client.get("/ui/upstream").text

        fd.call("notes.reshape", {})  # the server changes the schema: the page asks again
        wait_until(lambda: "schema_changed" in client.get("/ui/upstream").text)
        changed = client.get("/ui/upstream").text
        assert "older_than_days" in changed
        assert re.search(r"^\+.*older_than_days", changed.replace("&#34;", '"'), re.M)
        assert error_of(fd.call("notes.delete_notes", {})).kind is ErrorKind.NOT_ACTIVE
        assert approve(client, "notes.delete_notes", by="alice").status_code == 303
    assert fd.call("notes.delete_notes", {"older_than_days": 1}).value == "deleted 0"


def test_an_approval_for_a_schema_that_changed_meanwhile_is_refused(
    upstream_foundry: UpstreamFoundry,
) -> None:
    fd = upstream_foundry(notes_entry())
    with TestClient(compose(fd), base_url=BASE, follow_redirects=False) as client:
        token = csrf_of(client.get("/ui/upstream").text)
        refused = client.post(
            "/ui/upstream/approve",
            data={"csrf_token": token, "name": "notes.delete_notes", "schema_hash": "0" * 64},
            headers={"origin": BASE, "referer": BASE},
        )
        assert refused.status_code == 409
    assert error_of(fd.call("notes.delete_notes", {})).kind is ErrorKind.NOT_ACTIVE


def test_doctor_reports_each_upstream(tmp_path: Any) -> None:
    from tests.upstream.conftest import toml_text

    from toolfoundry.cli.doctor import upstream_checks

    config = tmp_path / "toolfoundry.toml"
    config.write_text(
        toml_text({"upstream": [notes_entry(), {"name": "gone", "command": "/nonexistent/x"}]})
    )
    notes, gone = upstream_checks(str(config))
    assert notes.status == "ok"
    assert "8 tools from notes 1.0" in notes.detail
    assert gone.status == "failed"
    assert not gone.required
    assert "/nonexistent/x" in gone.detail
