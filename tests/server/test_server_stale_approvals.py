"""The approval rule for stale and disabled tools' pending versions (registry/holds.py) over
the HTTP API and the review page: refused with the hold's kind, nothing written, and said in
the queue and on the version page before the click (the approve form is not offered)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient
from tests.foundry.test_foundry_stale_approvals import disabled_with_pending, stale

from toolfoundry import Foundry
from toolfoundry.registry import VersionStatus

from .test_server_web_api import Api
from .test_server_web_support import compose, csrf_of, snapshot

BASE = "http://127.0.0.1:8000"


@pytest.fixture
def client(fd: Foundry) -> Iterator[TestClient]:
    with TestClient(compose(fd), base_url=BASE, follow_redirects=False) as made:
        yield made


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def _post_form(client: TestClient, page: str, action: str, **fields: str) -> tuple[int, str]:
    token = csrf_of(client.get(page).text)  # any form of the page carries the token
    r = client.post(action, data={"csrf_token": token, **fields}, headers={"origin": BASE})
    return r.status_code, r.text


def test_api_refuses_a_superseded_version_and_the_queue_marks_it(
    client: TestClient, fd: Foundry
) -> None:
    stale(fd)
    api = Api(client)
    before = snapshot(fd)
    refused = api.post("/api/tools/temp/versions/2/approve", {"by": "alice"}, 409)
    assert refused["step"]["blockers"] == ["superseded"]
    assert snapshot(fd) == before
    assert fd.show("temp").version == 3
    queue = {(p["name"], p["version"]): p for p in api.get("/api/approvals")}
    hold = queue[("temp", 2)]["approval_hold"]
    assert (hold["kind"], hold["by_version"]) == ("superseded", 3)
    assert queue[("weather", 1)]["approval_hold"] is None  # the seeded, approvable ones
    assert api.get("/api/tools/temp/versions/2")["approval_hold"]["kind"] == "superseded"
    assert api.get("/api/tools/temp/versions/3")["approval_hold"] is None
    done = api.post("/api/tools/temp/versions/2/reject", {"by": "alice", "reason": "old"})
    assert done["status"] == "rejected"


def test_api_refuses_a_disabled_tools_version(client: TestClient, fd: Foundry) -> None:
    disabled_with_pending(fd)
    api = Api(client)
    refused = api.post("/api/tools/temp/versions/2/approve", {"by": "alice"}, 409)
    assert refused["step"]["blockers"] == ["disabled"]
    assert fd.show("temp").status is VersionStatus.DISABLED
    [held] = [p for p in api.get("/api/approvals") if p["name"] == "temp"]
    assert held["approval_hold"]["kind"] == "disabled"


def test_page_says_superseded_before_the_click_and_refuses_the_post(
    client: TestClient, fd: Foundry
) -> None:
    stale(fd)
    queue = _text(client.get("/ui/approvals").text)
    assert "v2 (current v3) superseded by v3: reject it" in queue
    version = client.get("/ui/tools/temp/v/2").text
    assert "Cannot be approved" in _text(version)
    assert "superseded" in _text(version)
    assert "/v/2/approve" not in version  # no approve button
    assert "/v/2/reject" in version
    before = snapshot(fd)
    # a form from a page loaded before v3 went live is still refused
    status, answer = _post_form(client, "/ui/tools/temp/v/2", "/ui/tools/temp/v/2/approve")
    assert status == 409
    assert "superseded" in _text(answer)
    assert snapshot(fd) == before
    assert fd.show("temp").version == 3


def test_page_says_the_tool_is_disabled_before_the_click(client: TestClient, fd: Foundry) -> None:
    disabled_with_pending(fd)
    assert "tool disabled: enable it first" in _text(client.get("/ui/approvals").text)
    version = client.get("/ui/tools/temp/v/2").text
    assert "disabled (by 'carol')" in _text(version).replace("&#39;", "'")
    assert "/v/2/approve" not in version
    status, _answer = _post_form(client, "/ui/tools/temp/v/2", "/ui/tools/temp/v/2/approve")
    assert status == 409
    assert fd.show("temp").status is VersionStatus.DISABLED
