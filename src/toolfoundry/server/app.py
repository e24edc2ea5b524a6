"""The HTTP application of ``toolfoundry serve --http``: MCP at ``/mcp``, the review page at
``/ui``, the JSON API at ``/api`` and ``/healthz`` (:mod:`toolfoundry.server.health`), all
behind :func:`toolfoundry.server.security.secure`.

Loopback binds need no token; any other bind refuses to start without one, and then every
MCP and API request must carry ``Authorization: Bearer <token>`` (401 otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp

from toolfoundry.foundry import Foundry
from toolfoundry.server.changes import DEFAULT_INTERVAL_S
from toolfoundry.server.health import health_route
from toolfoundry.server.mcp.listing import DEFAULT_PAGE_SIZE
from toolfoundry.server.mcp.request_ids import DistinctRequestIds
from toolfoundry.server.mcp.server import build_mcp_server
from toolfoundry.server.security import is_loopback, secure
from toolfoundry.server.web import web_routes
from toolfoundry.spec import DeclaredTool

MCP_PATH = "/mcp"


class InsecureBind(ValueError):
    """A non-loopback address was asked for without a token."""


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
    tools: Sequence[DeclaredTool] = (),
    page_size: int = DEFAULT_PAGE_SIZE,
    surface: str = "full",
) -> ASGIApp:
    """The whole HTTP application for ``foundry``.

    Args:
        foundry: the foundry to serve (shared by MCP, the page and the API).
        bind_host: the address the server listens on; decides whether a token is required
            and which Host headers MCP accepts (DNS-rebinding protection on loopback).
        token: the shared secret clients must present; required off loopback.
        poll_interval_s: seconds between active-set polls (``list_changed`` latency).
        tools: the project's declared tools, served over MCP next to the meta-tools.
        page_size: MCP ``tools/list`` entries (and ``resources/list`` tools) per page.
        surface: ``full`` or ``compact`` (server/mcp/surface.py).

    Raises:
        InsecureBind: see :func:`check_bind`.
    """
    check_bind(bind_host, token)
    server = build_mcp_server(
        foundry,
        poll_interval_s=poll_interval_s,
        tools=tools,
        page_size=page_size,
        surface=surface,
    )
    # One JSON body per POST instead of an SSE stream: 20-30 % less CPU per request on each
    # side. Nothing here sends a notification or request within a request; list_changed
    # travels on each session's standalone GET stream (and subscriptions/listen streams).
    manager = StreamableHTTPSessionManager(
        app=server, security_settings=_transport_security(bind_host), json_response=True
    )
    routes: list[BaseRoute] = [
        # one request per id at a time in a session (server/mcp/request_ids.py)
        Route(MCP_PATH, endpoint=DistinctRequestIds(StreamableHTTPASGIApp(manager))),
        health_route(foundry),
        *web_routes(lambda: foundry),
    ]
    app = Starlette(routes=routes, lifespan=lambda _app: manager.run())
    return secure(app, token=token, bind_host=bind_host)


def _transport_security(host: str) -> TransportSecuritySettings | None:
    if not is_loopback(host):
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )
