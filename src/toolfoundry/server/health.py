"""``GET /healthz``: whether this server process can serve, for load balancers and probes.

200 ``{"status": "ok"}`` when the process answers and its registry database both answers
(the active-set query every server runs anyway) and can be written (the smallest real write,
registry/write_probe.py: a full disk or a read-only store fails every create and call while
reads still work), each within ``HEALTH_TIMEOUT_S``, and no create or call of this process
failed to write in the last 30 s (registry/write_failures.py: a full disk can leave room for
the probe's one page and none for a call's record); else 503 ``{"status": "unavailable",
"reason": ...}`` saying which. It needs no token (many load balancers cannot send one) and so
says nothing else: no versions, no tool names, no URL.
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
        probes = (
            (lambda: active_set_fingerprint(foundry.registry), "does not answer"),
            (lambda: foundry.registry.check_writable(), "cannot be written"),
        )
        for probe, failure in probes:
            try:
                with anyio.fail_after(HEALTH_TIMEOUT_S):
                    await anyio.to_thread.run_sync(probe, abandon_on_cancel=True)
            except (*StoreError, TimeoutError):
                body = {"status": "unavailable", "reason": f"the registry database {failure}"}
                return StrictJSONResponse(body, status_code=503, headers=_NO_STORE)
        if foundry.failed_writes.recent() is not None:  # a call's or a create's write failed
            body = {"status": "unavailable", "reason": "the registry database cannot be written"}
            return StrictJSONResponse(body, status_code=503, headers=_NO_STORE)
        return StrictJSONResponse({"status": "ok"}, headers=_NO_STORE)

    return Route(HEALTH_PATH, health, methods=["GET"], name="health")


_NO_STORE = {"cache-control": "no-store"}
