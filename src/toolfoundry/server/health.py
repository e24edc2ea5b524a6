"""``GET /healthz``: whether this server process can serve, for load balancers and probes.

200 ``{"status": "ok"}`` when the process answers and its registry database does (the
active-set query every server runs anyway, within ``HEALTH_TIMEOUT_S``); 503 ``{"status":
"unavailable", "reason": ...}`` when the database does not. It needs no token (many load
balancers cannot send one) and so says nothing else: no versions, no tool names, no URL.
"""

from __future__ import annotations

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from toolfoundry.foundry import Foundry
from toolfoundry.registry import StoreError
from toolfoundry.server.changes import active_set_fingerprint
from toolfoundry.server.security import HEALTH_PATH
from toolfoundry.server.web.endpoints import StrictJSONResponse

HEALTH_TIMEOUT_S = 5.0


def health_route(foundry: Foundry) -> Route:
    """The ``/healthz`` route over ``foundry``'s registry."""

    async def health(_request: Request) -> Response:
        try:
            with anyio.fail_after(HEALTH_TIMEOUT_S):
                await anyio.to_thread.run_sync(
                    active_set_fingerprint, foundry.registry, abandon_on_cancel=True
                )
        except (*StoreError, TimeoutError):
            body = {"status": "unavailable", "reason": "the registry database does not answer"}
            return StrictJSONResponse(body, status_code=503, headers=_NO_STORE)
        return StrictJSONResponse({"status": "ok"}, headers=_NO_STORE)

    return Route(HEALTH_PATH, health, methods=["GET"], name="health")


_NO_STORE = {"cache-control": "no-store"}
