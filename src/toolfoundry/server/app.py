"""The HTTP application of ``toolfoundry serve --http``: MCP at ``/mcp``, plus the review page
(``/ui``) and the JSON API (``/api``) when their package is installed, behind one guard.

Loopback binds need no token; any other bind refuses to start without one. The guard is
``toolfoundry.server.security.secure`` when that module exists; until then a bearer-token
check of this module's own stands in (every HTTP request must carry
``Authorization: Bearer <token>`` when a token is set).
"""

from __future__ import annotations

import hmac
import importlib
import importlib.util
import ipaddress
import json
from collections.abc import Callable
from typing import Any, cast

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from toolfoundry.foundry import Foundry
from toolfoundry.server.changes import DEFAULT_INTERVAL_S
from toolfoundry.server.mcp_server import build_mcp_server

MCP_PATH = "/mcp"
_LOOPBACK_NAMES = {"localhost"}


class InsecureBind(ValueError):
    """A non-loopback address was asked for without a token."""


def is_loopback(host: str) -> bool:
    """True for ``127.0.0.0/8``, ``::1`` and ``localhost``."""
    bare = host.strip("[]")
    if bare.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def check_bind(host: str, token: str | None) -> None:
    """Refuse a non-loopback bind without a token.

    Raises:
        InsecureBind: ``host`` is reachable from other machines and ``token`` is empty.
    """
    if not token and not is_loopback(host):
        raise InsecureBind(
            f"refusing to serve on {host!r} without a token: anyone who can reach it could "
            "create and run tools. Pass --token (or set TOOLFOUNDRY_TOKEN), or bind 127.0.0.1."
        )


def create_app(
    foundry: Foundry,
    *,
    bind_host: str = "127.0.0.1",
    token: str | None = None,
    poll_interval_s: float = DEFAULT_INTERVAL_S,
) -> ASGIApp:
    """The whole HTTP application for ``foundry``.

    Args:
        foundry: the foundry to serve (shared by MCP, the page and the API).
        bind_host: the address the server listens on; decides whether a token is required
            and which Host headers MCP accepts (DNS-rebinding protection on loopback).
        token: the shared secret clients must present; required off loopback.
        poll_interval_s: seconds between active-set polls (``list_changed`` latency).

    Raises:
        InsecureBind: see :func:`check_bind`.
    """
    check_bind(bind_host, token)
    server = build_mcp_server(foundry, poll_interval_s=poll_interval_s)
    manager = StreamableHTTPSessionManager(
        app=server, security_settings=_transport_security(bind_host)
    )
    routes: list[BaseRoute] = [Route(MCP_PATH, endpoint=StreamableHTTPASGIApp(manager))]
    # The composition point for the review page and the JSON API.
    routes += _web_routes(lambda: foundry)
    app = Starlette(routes=routes, lifespan=lambda _app: manager.run())
    return _secure(app, token=token, bind_host=bind_host)


def _transport_security(host: str) -> TransportSecuritySettings | None:
    if not is_loopback(host):
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def _web_routes(foundry_factory: Callable[[], Foundry]) -> list[BaseRoute]:
    if importlib.util.find_spec("toolfoundry.server.web") is None:
        return []
    web = importlib.import_module("toolfoundry.server.web")
    return list(web.web_routes(foundry_factory))


def _secure(app: ASGIApp, *, token: str | None, bind_host: str) -> ASGIApp:
    if importlib.util.find_spec("toolfoundry.server.security") is not None:
        security = importlib.import_module("toolfoundry.server.security")
        return cast(ASGIApp, security.secure(app, token=token, bind_host=bind_host))
    return BearerToken(app, token) if token else app


class BearerToken:
    """ASGI guard: HTTP requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self._authorized(scope):
            await self.app(scope, receive, send)
            return
        body = json.dumps(
            {"error": {"kind": "unauthorized", "message": "missing or wrong bearer token"}}
        ).encode()
        headers: list[tuple[bytes, bytes]] = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer realm="toolfoundry"'),
        ]
        await send({"type": "http.response.start", "status": 401, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _authorized(self, scope: Scope) -> bool:
        headers: list[tuple[bytes, bytes]] = scope.get("headers", [])
        given: Any = next((v for k, v in headers if k == b"authorization"), b"")
        return hmac.compare_digest(given, self._expected)
