"""One request per JSON-RPC id at a time in an MCP session, on both transports.

The SDK keys a request's answer by its id: over Streamable HTTP the transport keeps one
response stream per ``str(id)``, so a second request with an id still in flight (``7`` twice,
or ``7`` and ``"7"``) replaced the first one's stream and the first POST waited forever; over
stdio both ran and two answers carried one id. JSON-RPC and MCP forbid reusing an id within a
session, and a client that does so gets an immediate ``-32600`` error for the second request
here, while the first is answered as usual:

- :class:`InFlightIds` is the set of ids in flight, compared as the SDK correlates them
  (``mcp.shared.dispatcher.coerce_request_id``: ``"7"`` is ``7``);
- :class:`DistinctRequestIds` guards the HTTP endpoint (per ``Mcp-Session-Id``): an id is in
  flight from its POST until that POST's response has been sent;
- the stdio transport (server/mcp/stdio.py) claims an id when a request line arrives and
  releases it when its answer is written, or a ``notifications/cancelled`` names it.
"""

from __future__ import annotations

import threading
from collections.abc import MutableMapping
from typing import Any

import mcp_types as types
import pydantic_core
from mcp.shared.dispatcher import coerce_request_id
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from toolfoundry.base.json_gate import encode

SESSION_HEADER = b"mcp-session-id"
MAX_CHECKED_BYTES = 16 * 1024 * 1024  # a larger body is the SDK's to refuse


def duplicate_message(request_id: Any) -> str:
    """The error's text for a second request with ``request_id`` in flight."""
    return (
        f"Invalid Request: request id {request_id!r} is already in flight in this session "
        "(ids must be unique per session); send it with a new id"
    )


def request_id_of(raw: Any) -> Any:
    """The id of a JSON-RPC request (an object with ``method`` and a string or integer
    ``id``), else None (notifications, responses, anything else)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("method"), str):
        return None
    request_id = raw.get("id")
    if isinstance(request_id, bool) or not isinstance(request_id, str | int):
        return None
    return request_id


class InFlightIds:
    """The request ids in flight, as the SDK correlates them; thread-safe."""

    def __init__(self) -> None:
        self._ids: set[tuple[Any, Any]] = set()
        self._lock = threading.Lock()

    @staticmethod
    def _key(session: Any, request_id: Any) -> tuple[Any, Any]:
        return session, coerce_request_id(request_id)

    def claim(self, request_id: Any, session: Any = None) -> bool:
        """Mark ``request_id`` in flight; False when it already is (in ``session``)."""
        key = self._key(session, request_id)
        with self._lock:
            if key in self._ids:
                return False
            self._ids.add(key)
            return True

    def release(self, request_id: Any, session: Any = None) -> None:
        """``request_id`` is answered (or cancelled): it may be used again."""
        with self._lock:
            self._ids.discard(self._key(session, request_id))


class DistinctRequestIds:
    """ASGI middleware in front of the SDK's Streamable HTTP endpoint: a POST whose request id
    is in flight in its session is answered at once with a ``-32600`` error (HTTP 400, as the
    SDK answers an invalid message) and never reaches the SDK."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.in_flight = InFlightIds()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, complete = await _read(receive)
        replay = _replay(body, receive, more=not complete)
        request_id = _request_id(body) if complete else None
        if request_id is None:
            await self.app(scope, replay, send)
            return
        session = dict(scope.get("headers", [])).get(SESSION_HEADER)
        if not self.in_flight.claim(request_id, session):
            await _refuse(send, request_id)
            return
        try:
            await self.app(scope, replay, send)
        finally:
            self.in_flight.release(request_id, session)


def _request_id(body: bytes) -> Any:
    try:
        return request_id_of(pydantic_core.from_json(body))
    except ValueError:  # not JSON: the SDK answers it
        return None


async def _read(receive: Receive) -> tuple[bytes, bool]:
    """The body, and whether it is all of it (a body past the cap is passed on unchecked)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk: bytes = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True
        if size > MAX_CHECKED_BYTES:
            return b"".join(chunks), False


def _replay(body: bytes, receive: Receive, *, more: bool) -> Receive:
    """A receive that gives ``body`` first (``more``: the client has more to send), then
    whatever the client sends next (the rest of the body, or its disconnect)."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": more}
        return await receive()

    return replay


async def _refuse(send: Send, request_id: Any) -> None:
    error = {"code": types.INVALID_REQUEST, "message": duplicate_message(request_id)}
    body = encode({"jsonrpc": "2.0", "id": request_id, "error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    start: MutableMapping[str, Any] = {"type": "http.response.start", "status": 400}
    start["headers"] = headers
    await send(start)
    await send({"type": "http.response.body", "body": body})
