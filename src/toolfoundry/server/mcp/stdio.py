"""MCP over stdio, framed through the JSON gate.

The SDK's stdio transport passes a line it cannot parse to the session as an exception, which
logs and drops it: a client that sent a line that is not JSON, nests too deep, carries a huge
integer or a lone surrogate waits forever. And it serialises every outgoing message with
pydantic, which raises on a lone surrogate and ends the whole server.

This transport reads each line (at most :data:`MAX_LINE_BYTES`) through
:func:`toolfoundry.base.json_gate.decode`, then validates it as a JSON-RPC message. A line
that fails either gets a JSON-RPC error response, as the streamable HTTP transport answers a
bad body: ``-32700`` (parse error: the gate refused the text, with its located problems in
``data``) or ``-32600`` (invalid request: JSON, but not a JSON-RPC message), carrying the
request's ``id`` whenever it can be read, so the client's pending request fails instead of
hanging; then the server reads on. A request whose id is still in flight (``7`` twice, or ``7``
and ``"7"``) gets ``-32600`` at once and is not run (server/mcp/request_ids.py): the first is
answered as usual. Outgoing messages are written by the gate's encoder, which cannot fail on
text. While serving, fds 0 and 1 point at /dev/null and stderr, so stray
prints from in-process tools cannot corrupt the wire.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import replace
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from toolfoundry.base.json_gate import (
    JSON_LIMITS,
    InvalidJson,
    decode,
    encode,
    lone_surrogate_at,
)
from toolfoundry.server.mcp.request_ids import InFlightIds, duplicate_message

logger = logging.getLogger(__name__)

# A draft (create_tool's arguments) may be as large as the gate's default; the envelope adds
# the JSON-RPC fields around it and three levels (message, params, arguments).
MAX_LINE_BYTES = JSON_LIMITS.max_bytes + 64 * 1024
MESSAGE_LIMITS = replace(JSON_LIMITS, max_bytes=MAX_LINE_BYTES).enclosing(3)
_CHUNK = 1 << 16

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


@asynccontextmanager
async def gated_stdio(
    stdin: BinaryIO | None = None, stdout: BinaryIO | None = None
) -> AsyncIterator[tuple[ReadStream, WriteStream]]:
    """The ``(read_stream, write_stream)`` pair ``Server.run`` takes, over stdin/stdout.

    Args:
        stdin: where requests come from (default: this process's fd 0, then diverted).
        stdout: where answers go (default: this process's fd 1, then diverted).
    """
    with _claimed(stdin, stdout) as (wire_in, wire_out):
        to_server, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_stream, from_server = anyio.create_memory_object_stream[SessionMessage](0)
        in_flight = InFlightIds()
        writer = _Writer(wire_out, in_flight)

        async def read_lines() -> None:
            async with to_server:
                while True:
                    line = await anyio.to_thread.run_sync(
                        _read_line, wire_in, abandon_on_cancel=True
                    )
                    if line is None:
                        return  # EOF: the client closed its side
                    message = _message(line, writer)
                    if message is None:
                        continue
                    if isinstance(message, types.JSONRPCRequest):
                        if not in_flight.claim(message.id):
                            code, text = types.INVALID_REQUEST, duplicate_message(message.id)
                            writer.error(message.id, code, text)
                            continue
                    elif _cancelled(message) is not None:
                        in_flight.release(_cancelled(message))
                    await to_server.send(SessionMessage(message))

        async def write_messages() -> None:
            async with from_server:
                async for session_message in from_server:
                    await anyio.to_thread.run_sync(writer.send, session_message.message)

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_lines)
            tasks.start_soon(write_messages)
            try:
                yield read_stream, write_stream
            finally:
                tasks.cancel_scope.cancel()


def _message(line: bytes, writer: _Writer) -> types.JSONRPCMessage | None:
    """The JSON-RPC message on ``line``, or None after answering why it is not one."""
    if len(line) > MAX_LINE_BYTES:
        writer.error(None, types.PARSE_ERROR, f"Parse error: a line over {MAX_LINE_BYTES} bytes")
        return None
    if not line.strip():
        return None  # blank lines between messages are not messages
    try:
        raw = decode(line, MESSAGE_LIMITS)
    except InvalidJson as exc:
        problems = [{"path": p.path, "message": p.message} for p in exc.problems]
        writer.error(_id_of(line), types.PARSE_ERROR, f"Parse error: {exc}", problems)
        return None
    try:
        return types.jsonrpc_message_adapter.validate_python(raw, by_name=False)
    except ValidationError as exc:
        request_id = raw.get("id") if isinstance(raw, dict) else None
        text = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
        writer.error(_valid_id(request_id), types.INVALID_REQUEST, f"Invalid Request: {text}")
        return None


def _cancelled(message: types.JSONRPCMessage) -> Any:
    """The request id a ``notifications/cancelled`` names, else None."""
    if not isinstance(message, types.JSONRPCNotification):
        return None
    if message.method != "notifications/cancelled" or not isinstance(message.params, dict):
        return None
    return _valid_id(message.params.get("requestId"))


def _id_of(line: bytes) -> Any:
    """The request id of a line the gate refused, when the stdlib can still read it.

    The gate's checks came first, so this parse is bounded: numbers are not converted and a
    nesting beyond the interpreter's limit is a RecursionError caught here (no id, then).
    """
    try:
        raw = json.loads(
            line.decode("utf-8", "replace"),
            parse_int=lambda s: 0 if len(s) > 18 else int(s),
            parse_float=lambda s: 0.0,
            parse_constant=lambda s: None,
        )
    except (ValueError, RecursionError):
        return None
    return _valid_id(raw.get("id")) if isinstance(raw, dict) else None


def _valid_id(value: Any) -> Any:
    """``value`` when it can be a JSON-RPC id (a well-formed string or an integer), else None."""
    if isinstance(value, str) and lone_surrogate_at(value) is None:
        return value
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63:
        return value
    return None


class _Writer:
    """Writes whole lines to the wire, one at a time (answers and protocol errors)."""

    def __init__(self, wire: BinaryIO, in_flight: InFlightIds | None = None) -> None:
        self._wire = wire
        self._lock = threading.Lock()  # the reader thread answers bad lines, the writer the rest
        self._in_flight = in_flight if in_flight is not None else InFlightIds()

    def send(self, message: types.JSONRPCMessage) -> None:
        data = message.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
            # answered: the id is free again (before the line goes out, so a client that
            # reuses it on reading the answer is not refused)
            self._in_flight.release(message.id)
        try:
            text = encode(data)
        except InvalidJson as exc:  # e.g. NaN from an in-process tool: that request fails
            request_id = data.get("id") if isinstance(data, dict) else None
            logger.warning("an answer could not be encoded: %s", exc)
            self.error(request_id, types.INTERNAL_ERROR, f"the answer is not JSON: {exc}")
            return
        self._write(text)

    def error(
        self, request_id: Any, code: int, message: str, problems: list[Any] | None = None
    ) -> None:
        error: dict[str, Any] = {"code": code, "message": message}
        if problems:
            error["data"] = {"problems": problems}
        self._write(encode({"jsonrpc": "2.0", "id": request_id, "error": error}))

    def _write(self, text: str) -> None:
        with self._lock:
            self._wire.write(text.encode("utf-8") + b"\n")
            self._wire.flush()


def _read_line(wire: BinaryIO) -> bytes | None:
    """One line (without its newline), None at EOF. A line longer than the limit is read to
    its end and returned as one byte more than the limit, so the caller refuses it."""
    line = wire.readline(MAX_LINE_BYTES + 1)
    if not line:
        return None
    if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
        while True:  # discard the rest of the oversized line
            more = wire.readline(_CHUNK)
            if not more or more.endswith(b"\n"):
                break
        return line[: MAX_LINE_BYTES + 1]
    return line.rstrip(b"\r\n")


@contextmanager
def _claimed(
    stdin: BinaryIO | None, stdout: BinaryIO | None
) -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The wire's two ends; this process's fds 0 and 1 when not given, diverted meanwhile."""
    if stdin is not None and stdout is not None:
        yield stdin, stdout
        return
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)  # a stray print() goes to stderr, not into the protocol
    try:
        with (
            os.fdopen(wire_in, "rb", closefd=False) as raw_in,
            os.fdopen(wire_out, "wb", closefd=False) as raw_out,
        ):
            yield stdin or raw_in, stdout or raw_out
    finally:
        sys.stdout.flush()
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)
