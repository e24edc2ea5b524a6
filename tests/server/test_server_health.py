"""``GET /healthz`` of ``serve --http`` (the whole app, under a real uvicorn server): up when
the registry answers, 503 when it does not, and no token needed for that alone."""

from __future__ import annotations

import httpx
from sqlalchemy import text

from toolfoundry import Foundry
from toolfoundry.server.app import create_app

from .test_server_web_support import serve

TOKEN = "s3cret-token"


def test_healthy_without_a_token_and_nothing_else_is(fd: Foundry) -> None:
    with serve(create_app(fd, token=TOKEN, bind_host="0.0.0.0")) as base, httpx.Client() as c:
        up = c.get(f"{base}/healthz")
        assert up.status_code == 200
        assert up.json() == {"status": "ok"}
        assert up.headers["cache-control"] == "no-store"
        assert c.head(f"{base}/healthz").status_code == 200
        # The exemption is that one read: the API, MCP and writes to the path still need it.
        assert c.get(f"{base}/api/tools").status_code == 401
        assert c.post(f"{base}/mcp", json={}).status_code == 401
        assert c.post(f"{base}/healthz", json={}).status_code == 401
        assert c.get(f"{base}/healthz/x").status_code == 401


def test_unavailable_when_the_database_fails(fd: Foundry) -> None:
    with serve(create_app(fd)) as base, httpx.Client() as c:
        assert c.get(f"{base}/healthz").status_code == 200
        with fd.registry.engine.begin() as conn:  # a registry broken under the running server
            conn.execute(text("ALTER TABLE tf_tools RENAME TO tf_tools_gone"))
        down = c.get(f"{base}/healthz")
        assert down.status_code == 503
        assert down.json() == {
            "status": "unavailable",
            "reason": "the registry database does not answer",
        }


def test_loopback_host_check_still_applies(fd: Foundry) -> None:
    with serve(create_app(fd)) as base, httpx.Client() as c:
        assert c.get(f"{base}/healthz", headers={"host": "evil.example"}).status_code == 403
