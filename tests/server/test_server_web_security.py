"""Token and CSRF protections of the page and the API, against a real uvicorn server on
loopback: what must be refused is refused (401/403) and leaves the registry untouched."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from toolfoundry import Foundry
from toolfoundry.server.security import secure

from .test_server_web_support import compose, csrf_of, serve, snapshot

TOKEN = "s3cret-token"


@pytest.fixture
def remote(fd: Foundry) -> Iterator[str]:
    """Served as if bound to every interface: the token is required."""
    with serve(compose(fd, token=TOKEN, bind_host="0.0.0.0")) as base:
        yield base


@pytest.fixture
def local(fd: Foundry) -> Iterator[str]:
    """A loopback bind without a token."""
    with serve(compose(fd)) as base:
        yield base


def test_a_non_loopback_bind_needs_a_token() -> None:
    with pytest.raises(ValueError, match="without a token"):
        secure(lambda *a: None, token=None, bind_host="0.0.0.0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="without a token"):
        secure(lambda *a: None, token="", bind_host="192.168.1.5")  # type: ignore[arg-type]


def test_api_needs_the_bearer_token(remote: str, fd: Foundry) -> None:
    before = snapshot(fd)
    with httpx.Client(base_url=remote) as client:
        missing = client.get("/api/tools")
        assert missing.status_code == 401
        assert missing.json()["error"]["kind"] == "unauthorized"
        assert missing.headers["www-authenticate"].startswith("Bearer")
        wrong = client.get("/api/tools", headers={"authorization": "Bearer nope"})
        assert wrong.status_code == 401
        raw = {b"authorization": "Bearer s3cret-tokén".encode()}  # not ASCII: sent as bytes
        odd = client.get("/api/tools", headers=raw)
        assert odd.status_code == 401
        refused = client.post("/api/tools/weather/versions/1/approve", json={"by": "mallory"})
        assert refused.status_code == 401
        ok = client.get("/api/tools", headers={"authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200
        assert {t["name"] for t in ok.json()} == {"shout", "weather", "news"}
    assert snapshot(fd) == before
    assert fd.show("weather").status.value == "pending_approval"


def test_page_login_sets_a_strict_httponly_cookie(remote: str) -> None:
    with httpx.Client(base_url=remote) as client:
        assert client.get("/ui/").status_code == 401
        assert client.get("/ui/", params={"token": "wrong"}).status_code == 401
        assert client.get("/ui/", params={"token": "tokén"}).status_code == 401
        login = client.get("/ui/approvals", params={"token": TOKEN})
        assert login.status_code == 303
        assert login.headers["location"] == "/ui/approvals"
        cookie = login.headers["set-cookie"]
        assert "HttpOnly" in cookie
        assert "SameSite=Strict" in cookie
        page = client.get("/ui/approvals")
        assert page.status_code == 200
        assert "weather" in page.text
        # The page's cookie is not an API credential.
        assert client.get("/api/tools").status_code == 401
    with httpx.Client(base_url=remote) as other:
        forged = other.get("/ui/", headers={"cookie": "tf_session=abc.def"})
        assert forged.status_code == 401


def test_page_post_needs_login_even_with_a_csrf_token(remote: str, fd: Foundry) -> None:
    with httpx.Client(base_url=remote) as client:
        client.get("/ui/", params={"token": TOKEN})
        token = csrf_of(client.get("/ui/tools/weather/v/1").text)
    before = snapshot(fd)
    with httpx.Client(base_url=remote) as stranger:
        r = stranger.post(
            "/ui/tools/weather/v/1/approve",
            data={"csrf_token": token},
            headers={"origin": remote},
        )
        assert r.status_code == 401
    assert snapshot(fd) == before


def test_a_token_given_on_loopback_is_enforced_too(fd: Foundry) -> None:
    with serve(compose(fd, token=TOKEN)) as base, httpx.Client(base_url=base) as client:
        assert client.get("/api/tools").status_code == 401
        assert client.get("/ui/").status_code == 401


def _session(base: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=base)
    page = client.get("/ui/tools/weather/v/1")
    assert page.status_code == 200
    return client, csrf_of(page.text)


def test_page_posts_without_a_valid_csrf_token_are_refused(local: str, fd: Foundry) -> None:
    client, token = _session(local)
    other, other_token = _session(local)
    same = {"origin": local}
    approve = "/ui/tools/weather/v/1/approve"
    before = snapshot(fd)
    attempts = [
        client.post(approve, data={}, headers=same),
        client.post(approve, data={"csrf_token": "0" * 64}, headers=same),
        client.post(approve, data={"csrf_token": token + "x"}, headers=same),
        client.post(approve, data={"csrf_token": "é"}, headers=same),
        # another session's token does not fit this session's cookie
        client.post(approve, data={"csrf_token": other_token}, headers=same),
        # a token without the cookie it belongs to
        httpx.post(local + approve, data={"csrf_token": token}, headers=same),
        # the right token as JSON, not a form
        client.post(approve, json={"csrf_token": token}, headers=same),
    ]
    for r in attempts:
        assert r.status_code == 403, r.text
        assert r.json()["error"]["kind"] == "csrf"
    assert snapshot(fd) == before
    assert fd.show("weather").status.value == "pending_approval"

    done = client.post(approve, data={"csrf_token": token, "by": "alice"}, headers=same)
    assert done.status_code == 303
    assert fd.show("weather").status.value == "active"
    client.close()
    other.close()


def test_cross_origin_page_posts_are_refused(local: str, fd: Foundry) -> None:
    client, token = _session(local)
    reject = "/ui/tools/news/v/1/reject"
    form = {"csrf_token": token, "reason": "because"}
    before = snapshot(fd)
    for headers in (
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"origin": local.replace("127.0.0.1", "localhost")},
        {"referer": "http://evil.example/page"},
        {},  # neither Origin nor Referer
    ):
        r = client.post(reject, data=form, headers=headers)
        assert r.status_code == 403, headers
    assert snapshot(fd) == before
    ok = client.post(reject, data=form, headers={"referer": local + "/ui/tools/news/v/1"})
    assert ok.status_code == 303
    assert fd.show("news").status.value == "rejected"
    client.close()


def test_cross_origin_api_posts_are_refused(local: str, fd: Foundry) -> None:
    before = snapshot(fd)
    with httpx.Client(base_url=local) as client:
        approve = "/api/tools/weather/versions/1/approve"
        cross = client.post(approve, json={}, headers={"origin": "http://evil.example"})
        assert cross.status_code == 403
        # What a cross-site form or no-preflight fetch can send.
        simple = client.post(approve, content=b"{}", headers={"content-type": "text/plain"})
        assert simple.status_code == 415
        form = client.post(approve, data={"by": "x"})
        assert form.status_code == 415
        assert snapshot(fd) == before
        same = client.post(approve, json={"by": "alice"}, headers={"origin": local})
        assert same.status_code == 200
    assert fd.show("weather").status.value == "active"


def test_dns_rebinding_is_refused_on_loopback(local: str, fd: Foundry) -> None:
    before = snapshot(fd)
    rebound = {"host": "attacker.example:8000"}
    with httpx.Client(base_url=local) as client:
        assert client.get("/ui/", headers=rebound).status_code == 403
        r = client.post(
            "/api/tools/weather/versions/1/approve",
            json={},
            headers={**rebound, "origin": "http://attacker.example:8000"},
        )
        assert r.status_code == 403
        assert r.json()["error"]["kind"] == "forbidden_host"
        assert client.get("/ui/", headers={"host": "localhost"}).status_code == 200
    assert snapshot(fd) == before


def test_the_page_cannot_be_framed_or_run_scripts(local: str) -> None:
    with httpx.Client(base_url=local) as client:
        page = client.get("/ui/tools/weather/v/1")
        assert page.headers["x-frame-options"] == "DENY"
        policy = page.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy
        assert "script-src 'none'" in policy
        assert "<script" not in page.text
        assert "x-frame-options" not in client.get("/api/tools").headers


def test_no_page_or_api_answer_may_be_cached(remote: str) -> None:
    """The page's CSRF token, pending code, the queue and versions' code are never stored by a
    cache: ``Cache-Control: no-store`` on every /ui and /api answer, refusals included."""
    bearer = {"authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=remote) as client:
        answers = [
            client.get("/ui/"),  # the login page (401)
            client.get("/api/approvals"),  # 401
            client.get("/ui/", params={"token": TOKEN}),  # the login redirect
        ]
        for path in ("/ui/", "/ui/approvals", "/ui/tools/weather/v/1", "/ui/nowhere"):
            answers.append(client.get(path))
        page = answers[-2]
        assert csrf_of(page.text)  # the page that holds the token and the pending code
        form = {"csrf_token": csrf_of(page.text), "by": "alice", "reason": ""}
        origin = {"origin": remote}
        answers.append(client.post("/ui/tools/weather/v/1/reject", data=form, headers=origin))
        for path in (
            "/api/approvals",
            "/api/tools/weather/versions/1",
            "/api/tools/shout",
            "/api/tools/nowhere",
            "/api/openapi.json",
        ):
            answers.append(client.get(path, headers=bearer))
    for answer in answers:
        where = f"{answer.request.method} {answer.request.url.path} -> {answer.status_code}"
        assert answer.headers.get_list("cache-control") == ["no-store"], where
    assert {a.status_code for a in answers} >= {200, 303, 401, 404, 422}
