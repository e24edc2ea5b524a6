"""The review page (``/ui``) and the JSON API (``/api``, OpenAPI at ``/api/openapi.json``).

    app = Starlette(routes=[Mount("/mcp", ...), *web_routes(lambda: foundry)])
    app = secure(app, token=token, bind_host=host)   # toolfoundry.server.security

The routes hold no state: each request asks ``foundry_factory`` for the foundry to use.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.responses import RedirectResponse
from starlette.routing import BaseRoute, Mount, Route

from toolfoundry.foundry import Foundry
from toolfoundry.server.web.api import ENDPOINTS, OPENAPI_PATH, api_routes
from toolfoundry.server.web.pages import page_routes

__all__ = ["ENDPOINTS", "OPENAPI_PATH", "api_routes", "page_routes", "web_routes"]


def web_routes(foundry_factory: Callable[[], Foundry]) -> list[BaseRoute]:
    """The page mounted at ``/ui`` and the API at ``/api`` (``/`` redirects to the page)."""
    return [
        Mount("/ui", routes=page_routes(foundry_factory), name="ui"),
        Mount("/api", routes=api_routes(foundry_factory), name="api"),
        Route("/", lambda _request: RedirectResponse("/ui/", status_code=307), name="root"),
    ]
