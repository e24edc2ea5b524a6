"""``toolfoundry executor serve``: the Python tier as its own HTTP service.

One endpoint (``POST /v1/run``, see :mod:`toolfoundry.sandbox.process.wire`), a bearer token
compared in constant time, JSON in and out. The service runs each call on its own executor
(a warm pool by default) under limits no looser than its own; many such services can sit
behind a load balancer, since a call carries everything it needs.
"""

from __future__ import annotations

import functools
import hmac
import os
from typing import Any

import anyio
import anyio.to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolfoundry.base.json_gate import decode, encode
from toolfoundry.sandbox.process.executor import Executor, ProcessLimits
from toolfoundry.sandbox.process.wire import RUN_PATH, WireError, limits_from_dict

MAX_BODY_BYTES = 4 * 1024 * 1024


def _refusal(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def executor_app(
    executor: Executor,
    token: str,
    ceiling: ProcessLimits | None = None,
    *,
    max_concurrent: int | None = None,
) -> Starlette:
    """The ASGI app serving ``executor``.

    Args:
        executor: runs the calls (the app does not close it).
        token: the bearer token every request must carry (must not be empty).
        ceiling: the loosest limits a request may ask for (defaults: ProcessLimits()).
        max_concurrent: calls running at once (default: two per CPU); others queue.
    """
    if not token:
        raise ValueError("the executor service needs a token")
    limits_ceiling = ceiling or ProcessLimits()
    expected = f"Bearer {token}".encode()
    limiter = anyio.CapacityLimiter(max_concurrent or 2 * (os.cpu_count() or 1))

    async def run(request: Request) -> Response:
        given = request.headers.get("authorization", "").encode()
        if not hmac.compare_digest(given, expected):
            return _refusal(401, "missing or wrong bearer token")
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_BODY_BYTES:
                return _refusal(413, f"request larger than {MAX_BODY_BYTES} bytes")
        try:
            data: Any = decode(body)  # through the JSON gate
            if not isinstance(data, dict) or not isinstance(data.get("code"), str):
                raise WireError("the request needs code (a string)")
            tool = data.get("tool")
            if tool is not None and not isinstance(tool, str):
                raise WireError("tool must be a string")
            limits = limits_from_dict(data.get("limits", {}), limits_ceiling)
        except (ValueError, WireError, RecursionError) as exc:
            return _refusal(400, str(exc) or "the request nests too deeply")
        result = await anyio.to_thread.run_sync(
            functools.partial(executor.run, data["code"], data.get("args"), limits, tool=tool),
            limiter=limiter,
        )
        return Response(encode(result.to_dict()), media_type="application/json")

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[Route(RUN_PATH, run, methods=["POST"]), Route("/healthz", health, methods=["GET"])]
    )
