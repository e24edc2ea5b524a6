"""The review page under /ui, driven as a browser would (forms with the CSRF token and a
same-origin Origin), through the same guard ``toolfoundry serve`` uses."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from toolfoundry import Foundry

from .test_server_web_support import SHOUT, compose, csrf_of, snapshot

BASE = "http://127.0.0.1:8000"


@pytest.fixture
def page(fd: Foundry) -> Iterator[TestClient]:
    with TestClient(compose(fd), base_url=BASE, follow_redirects=False) as client:
        yield client


def submit(client: TestClient, form_page: str, action: str, **fields: str) -> Any:
    """Post a form of ``form_page`` to ``action`` as the browser would."""
    token = csrf_of(client.get(form_page).text)
    return client.post(
        action, data={"csrf_token": token, **fields}, headers={"origin": BASE, "referer": BASE}
    )


def text(html: str) -> str:
    """The page's visible text, tags removed, whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def test_tools_list_shows_status_version_usage_and_last_error(
    page: TestClient, fd: Foundry
) -> None:
    fd.call("shout", {"text": "a"})
    fd.call("shout", {"text": 5})
    r = page.get("/ui/")
    assert r.status_code == 200
    shown = text(r.text)
    assert "2 versions waiting for approval" in shown
    row = re.search(r"<tr>\s*<td><a href=\"/ui/tools/shout\">.*?</tr>", r.text, re.S)
    assert row
    cells = text(row.group(0))
    assert "active" in cells
    assert "v2" in cells
    assert re.search(r"\b2 1 [\d.]+ ms invalid_arguments", cells), cells
    assert "pending approval" in text(r.text)
    assert page.get("/").headers["location"] == "/ui/"


def test_version_page_shows_code_diff_capabilities_findings_and_tests(page: TestClient) -> None:
    r = page.get("/ui/tools/weather/v/1")
    assert r.status_code == 200
    shown = text(r.text)
    assert "may send HTTP requests to api.example.com" in shown
    assert 'class="hl"' in r.text  # Pygments-highlighted code
    assert "encodeURIComponent" in shown
    assert re.search(r"oslo .*? -3 none passed", shown)  # input, expected, fixtures, result
    assert "Approve v1" in shown
    assert "Reject v1" in shown
    assert 'name="csrf_token"' in r.text

    old = page.get("/ui/tools/shout/v/1")
    assert "Changes from the current version v2 to v1" in text(old.text)
    diff = re.search(r'<h2 id="diff">.*?<h2>', old.text, re.S)
    assert diff
    assert "toUpperCase() + &#39;!&#39;" in diff.group(0) or "toUpperCase() + '!'" in text(
        diff.group(0)
    )
    assert "Approve" not in text(old.text)


def test_approve_from_the_page(page: TestClient, fd: Foundry) -> None:
    r = submit(page, "/ui/tools/weather/v/1", "/ui/tools/weather/v/1/approve", by="alice")
    assert r.status_code == 303
    assert r.headers["location"] == "/ui/tools/weather/v/1?done=approved"
    assert fd.show("weather").status.value == "active"
    after = text(page.get("/ui/tools/weather/v/1?done=approved").text)
    assert "Approved: this version is now active" in after
    assert "Approved by alice" in after
    assert "Approve v1" not in after
    assert "1 version waiting" in text(page.get("/ui/").text)


def test_reject_needs_a_reason_and_lands_in_the_audit_log(page: TestClient, fd: Foundry) -> None:
    before = snapshot(fd)
    r = submit(page, "/ui/tools/news/v/1", "/ui/tools/news/v/1/reject", reason="   ")
    assert r.status_code == 422
    assert "A rejection needs a reason." in r.text
    assert snapshot(fd) == before

    reason = "sends data to a host nobody vetted"
    r = submit(page, "/ui/tools/news/v/1", "/ui/tools/news/v/1/reject", reason=reason, by="bob")
    assert r.status_code == 303
    assert fd.show("news").status.value == "rejected"
    audit = text(page.get("/ui/audit").text)
    assert f"rejected bob reason {reason}" in audit
    assert f"“{reason}”" in text(page.get("/ui/tools/news/v/1").text)

    again = submit(page, "/ui/tools/weather/v/1", "/ui/tools/news/v/1/reject", reason="x")
    assert again.status_code == 409
    assert "is rejected" in again.text


def test_history_rollback_disable_enable(page: TestClient, fd: Foundry) -> None:
    tool = text(page.get("/ui/tools/shout").text)
    assert "v2 current" in tool
    assert "Roll back to v1" in tool
    r = submit(page, "/ui/tools/shout", "/ui/tools/shout/rollback", version="1")
    assert r.headers["location"] == "/ui/tools/shout/v/1?done=rolled_back"
    assert fd.show("shout").version == 1
    assert "Rolled back" in text(page.get(r.headers["location"]).text)

    r = submit(page, "/ui/tools/shout", "/ui/tools/shout/disable")
    assert r.status_code == 303
    assert fd.show("shout").status.value == "disabled"
    disabled = text(page.get("/ui/tools/shout?done=disabled").text)
    assert "Disabled: the tool is no longer listed" in disabled
    assert "Enable" in disabled
    r = submit(page, "/ui/tools/shout", "/ui/tools/shout/enable")
    assert fd.show("shout").status.value == "active"
    refused = submit(page, "/ui/tools/shout", "/ui/tools/shout/enable")
    assert refused.status_code == 409
    bad = submit(page, "/ui/tools/shout", "/ui/tools/shout/rollback", version="x")
    assert bad.status_code == 422


def test_unknown_tools_and_versions_are_404_pages(page: TestClient) -> None:
    for path in ("/ui/tools/nope", "/ui/tools/shout/v/9", "/ui/tools/nope/v/1"):
        r = page.get(path)
        assert r.status_code == 404
        assert "Not found" in r.text
    nowhere = page.get("/ui/nowhere/at/all")
    assert nowhere.status_code == 404
    assert "There is no page at /ui/nowhere/at/all." in nowhere.text
    r = submit(page, "/ui/tools/shout", "/ui/tools/nope/v/1/approve")
    assert r.status_code == 404


def test_what_tools_say_is_escaped(page: TestClient, fd: Foundry) -> None:
    draft = {
        **SHOUT,
        "name": "sneaky",
        "description": "<script>alert('d')</script> shouts",
        "code": (
            "export function handler({ text }) {\n"
            "  return '</pre><script>x()</script>' + text;\n}\n"
        ),
        "tests": [{"input": {"text": "a"}, "expected": "</pre><script>x()</script>a"}],
    }
    assert fd.create_tool(draft).status == "active"
    for path in ("/ui/", "/ui/tools/sneaky", "/ui/tools/sneaky/v/1", "/ui/audit"):
        html = page.get(path).text
        assert "<script>" not in html, path


def test_audit_page_filters_by_tool_and_static_assets(page: TestClient) -> None:
    audit = page.get("/ui/audit?tool=shout")
    assert audit.status_code == 200
    assert "weather" not in text(audit.text).replace("Audit log", "")
    assert "created" in text(audit.text)
    css = page.get("/ui/static/style.css")
    assert css.status_code == 200
    assert css.headers["content-type"].startswith("text/css")
    assert ".hl" in page.get("/ui/static/highlight.css").text
