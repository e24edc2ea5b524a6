"""One upstream MCP server, held by the official MCP client: connect, list, follow, reconnect.

A :class:`Connection` lives on the upstreams' event loop (``upstream/servers.py``). It starts the
server (stdio: a child process given ``env`` and its credentials as environment variables) or
opens its endpoint (Streamable HTTP: credentials as request headers), initializes, lists every
page of tools, and then holds the session: it lists again on ``notifications/tools/list_changed``,
pings the server every :data:`PING_EVERY_S`, and on a lost connection (a call that finds it
closed, a ping left unanswered, a process that exited) starts over after a backoff doubling from
:data:`BACKOFF_FIRST_S` to :data:`BACKOFF_MAX_S` (reset by a session that lasted
:data:`STEADY_S`). A call while the first attempt runs waits for it (within its deadline); a
call while the server is down is ``unavailable`` at once, saying why and when it is retried.

The credential values are read when connecting and only handed to the server; every form of
them is redacted from what the server answers (``upstream/answers.py``) and from its errors.
"""

from __future__ import annotations

import asyncio
import logging
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, TextIO

import anyio

from toolfoundry.sandbox.host.credentials import SecretStore
from toolfoundry.sandbox.host.redaction import Redactor
from toolfoundry.spec import CallResult, ErrorKind
from toolfoundry.spec.result import elapsed_ms
from toolfoundry.upstream.answers import answer_value, error_text, gated_answer
from toolfoundry.upstream.listing import UpstreamTool, listed_tool
from toolfoundry.upstream.settings import MissingSecret, UpstreamSettings

logger = logging.getLogger(__name__)

BACKOFF_FIRST_S = 0.5
BACKOFF_MAX_S = 30.0
STEADY_S = 30.0  # a session that lasted this long resets the backoff
CONNECT_TIMEOUT_S = 30.0  # starting, initializing and the first listing together
PING_EVERY_S = 10.0
PING_TIMEOUT_S = 10.0
LIST_TIMEOUT_S = 30.0
MAX_LIST_PAGES = 100
MAX_TOOLS = 5000
MAX_STDERR_BYTES = 1024 * 1024  # a stdio server's stderr kept for doctor; emptied past this
_CONNECTION_CLOSED = -32000
_INVALID_PARAMS = -32602


class UpstreamState(StrEnum):
    """Where a connection is."""

    CONNECTING = "connecting"
    READY = "ready"
    DOWN = "down"
    STOPPED = "stopped"


@dataclass(frozen=True)
class UpstreamStatus:
    """One upstream as ``doctor``, the review page and ``/healthz`` report it.

    Attributes:
        name: ``[[upstream]] name``.
        transport: ``stdio`` or ``http``.
        target: the command line or URL (never a credential).
        state: ``connecting``, ``ready``, ``down`` or ``stopped``.
        tools: how many tools it lists (the last listing, kept while it is down).
        skipped: tools left out of the listing, each with why.
        error: why it is down (or the last failure), never a credential.
        server: the server's name and version as it introduced itself.
        attempts: connection attempts so far.
        connected_at: when the current (or last) session began (``time.time()``).
        retry_in_s: seconds until the next attempt, while down.
        stderr_tail: the last lines a stdio server wrote to stderr.
    """

    name: str
    transport: str
    target: str
    state: UpstreamState
    tools: int
    skipped: tuple[str, ...]
    error: str | None
    server: str | None
    attempts: int
    connected_at: float | None
    retry_in_s: float | None
    stderr_tail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transport": self.transport,
            "target": self.target,
            "state": self.state.value,
            "tools": self.tools,
            "skipped": list(self.skipped),
            "error": self.error,
            "server": self.server,
            "attempts": self.attempts,
            "connected_at": self.connected_at,
            "retry_in_s": self.retry_in_s,
        }


class Connection:
    """One upstream's session, kept up (see the module doc). Its coroutines run on the
    upstreams' loop; its read-only properties may be read from any thread."""

    def __init__(
        self,
        settings: UpstreamSettings,
        *,
        secret_store: SecretStore | None,
        on_change: Callable[[], None],
    ) -> None:
        self.settings = settings
        self._secret_store = secret_store
        self._on_change = on_change
        self.redactor = Redactor()
        self.state = UpstreamState.CONNECTING
        self.error: str | None = None
        self.server: str | None = None
        self.attempts = 0
        self.connected_at: float | None = None
        self._retry_at: float | None = None
        self.tools: dict[str, UpstreamTool] = {}
        self.skipped: tuple[str, ...] = ()
        self._session: Any = None
        self._lost: asyncio.Event | None = None
        self._relist: asyncio.Event | None = None
        self._wake: asyncio.Event | None = None
        # an attempt ended (ready, or failed); one per attempt, made before the first
        self._settled: asyncio.Event | None = asyncio.Event()
        self.first_attempt = threading.Event()  # the first attempt ended: waited on by threads
        self._stopping = False
        self._stderr: TextIO | None = None
        # the last message from the server the client could not read: (when, why)
        self._unreadable: tuple[float, str] | None = None

    # ---- the life of the connection --------------------------------------------------------

    async def run(self) -> None:
        """Connect, hold the session, and start over when it is lost, until :meth:`stop`."""
        self._wake = asyncio.Event()
        delay = BACKOFF_FIRST_S
        while not self._stopping:
            self.attempts += 1
            self._settled = asyncio.Event()  # one per attempt: a call waits for this one
            self.state = UpstreamState.CONNECTING
            began = time.monotonic()
            try:
                await self._hold()
            except Exception as exc:  # any failure to start, initialize or list
                self.error = self.redactor.redact_text(_describe(exc))
            except BaseException:
                self._finish_attempt(UpstreamState.STOPPED)
                raise
            if self._stopping:
                break
            if time.monotonic() - began >= STEADY_S:
                delay = BACKOFF_FIRST_S
            self._retry_at = time.monotonic() + delay
            self._finish_attempt(UpstreamState.DOWN)
            self._wake.clear()
            with anyio.move_on_after(delay):
                await self._wake.wait()
            self._retry_at = None
            delay = min(delay * 2, BACKOFF_MAX_S)
        self._finish_attempt(UpstreamState.STOPPED)

    def _finish_attempt(self, state: UpstreamState) -> None:
        self.state = state
        self._session = None
        self.first_attempt.set()
        if self._settled is not None:
            self._settled.set()

    async def stop(self) -> None:
        """End the session and the loop of attempts."""
        self._stopping = True
        for event in (self._lost, self._wake):
            if event is not None:
                event.set()

    async def _hold(self) -> None:
        from mcp import types
        from mcp.client.session import ClientSession

        self._lost, self._relist = asyncio.Event(), asyncio.Event()
        async with self._transport() as (read, write):

            async def on_message(message: Any) -> None:
                if isinstance(message, types.ToolListChangedNotification):
                    assert self._relist is not None
                    self._relist.set()
                elif isinstance(message, Exception):  # a message the client could not read
                    self._unreadable = (time.monotonic(), _describe(message))

            info = types.Implementation(name="toolfoundry", version=_version())
            async with ClientSession(
                read, write, message_handler=on_message, client_info=info
            ) as session:
                with anyio.fail_after(CONNECT_TIMEOUT_S):
                    started = await session.initialize()
                    await self._list(session)
                served = started.server_info
                self.server = f"{served.name} {served.version}"[:200] if served else None
                self._session, self.error = session, None
                self.connected_at = time.time()
                self.state = UpstreamState.READY
                self.first_attempt.set()
                assert self._settled is not None
                self._settled.set()
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(self._ping, session)
                    tasks.start_soon(self._follow, session)
                    await self._lost.wait()
                    tasks.cancel_scope.cancel()
        if not self._stopping and self.error is None:
            self.error = "the connection was lost"

    @asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        settings = self.settings
        values = {}
        for credential in settings.credentials:
            try:
                value = credential.value(self._secret_store)
            except MissingSecret as exc:
                raise ConnectionRefusedError(f"its credential: {exc}") from None
            self.redactor.add(value)
            self.redactor.add(value[len(credential.prefix) :])
            values[credential.header or credential.variable or ""] = value
        if settings.command is not None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(
                command=settings.command,
                args=list(settings.args),
                env={**dict(settings.env), **values},
                cwd=settings.cwd,
            )
            async with stdio_client(params, errlog=self._errlog()) as streams:
                yield streams
            return
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        timeout = httpx2.Timeout(CONNECT_TIMEOUT_S, read=settings.timeout_s + 5.0)
        assert settings.url is not None
        async with (
            httpx2.AsyncClient(headers=values, timeout=timeout) as client,
            streamable_http_client(settings.url, http_client=client) as streams,
        ):
            yield streams

    def _errlog(self) -> TextIO:
        """Where a stdio server's stderr goes: a file kept for :meth:`stderr_tail`."""
        if self._stderr is None:
            # kept open for the connection's life (closed by close_files)
            self._stderr = tempfile.TemporaryFile(  # noqa: SIM115
                "w+", encoding="utf-8", errors="replace"
            )
        elif self._stderr.seek(0, 2) > MAX_STDERR_BYTES:
            self._stderr.seek(0)
            self._stderr.truncate()
        return self._stderr

    def stderr_tail(self, lines: int = 5) -> str:
        """The last lines a stdio server wrote to stderr (redacted), for a report."""
        if self._stderr is None:
            return ""
        try:
            size = self._stderr.seek(0, 2)
            self._stderr.seek(max(0, size - 4096))
            text = self._stderr.read()
        except (OSError, ValueError):
            return ""
        return self.redactor.redact_text("\n".join(text.splitlines()[-lines:]))

    async def _list(self, session: Any) -> None:
        """Every page of ``tools/list``; the tools kept, and the change announced."""
        from mcp import types

        found: dict[str, UpstreamTool] = {}
        skipped: list[str] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_LIST_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            for tool in page.tools:
                if len(found) >= MAX_TOOLS:
                    skipped.append(f"more than {MAX_TOOLS} tools: the rest are left out")
                    break
                listed = listed_tool(
                    self.settings.name, tool.model_dump(by_alias=True, exclude_none=True)
                )
                if isinstance(listed, str):
                    skipped.append(listed)
                elif listed.name in found:
                    skipped.append(f"{listed.name}: listed twice (the first is kept)")
                else:
                    found[listed.name] = listed
            cursor = page.next_cursor
            if not cursor or len(found) >= MAX_TOOLS:
                break
            if cursor in seen:
                skipped.append("the listing's cursors go round in a circle: stopped there")
                break
            seen.add(cursor)
        else:
            skipped.append(f"more than {MAX_LIST_PAGES} pages: the rest are left out")
        changed = _identity(found) != _identity(self.tools)
        self.tools, self.skipped = found, tuple(skipped)
        if changed:
            self._on_change()

    async def _follow(self, session: Any) -> None:
        """List again each time the server says its list changed."""
        assert self._relist is not None
        assert self._lost is not None
        while True:
            await self._relist.wait()
            self._relist.clear()
            try:
                with anyio.fail_after(LIST_TIMEOUT_S):
                    await self._list(session)
            except Exception as exc:
                self._lose(f"listing its tools again failed: {_describe(exc)}")
                return

    async def _ping(self, session: Any) -> None:
        assert self._lost is not None
        while True:
            await anyio.sleep(PING_EVERY_S)
            try:
                with anyio.fail_after(PING_TIMEOUT_S):
                    await session.send_ping()
            except Exception as exc:
                self._lose(f"it stopped answering pings ({_describe(exc)})")
                return

    # ---- calls ---------------------------------------------------------------------------

    async def call(
        self, tool: UpstreamTool, args: dict[str, Any], *, deadline: float, output_bytes: int
    ) -> CallResult:
        """Call ``tool`` with checked ``args``; never raises (see the module doc)."""
        started = time.perf_counter()
        name = tool.name
        if self.state is UpstreamState.CONNECTING and self._settled is not None:
            with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
                await self._settled.wait()
        session = self._session
        if session is None:
            return CallResult.failure(
                ErrorKind.UNAVAILABLE,
                f"{name}: upstream {self.settings.name!r} is {self.describe_down()}",
                duration_ms=elapsed_ms(started),
            )
        left = deadline - time.monotonic()
        sent = time.monotonic()
        try:
            with anyio.fail_after(max(0.0, left)):
                result = await session.call_tool(tool.tool, args, read_timeout_seconds=left)
        except TimeoutError:
            message = (
                f"{name}: upstream {self.settings.name!r} did not answer within the call's "
                f"time budget ({max(0.0, left):.1f} s)"
            )
            unreadable = self._unreadable
            if unreadable is not None and unreadable[0] >= sent:
                said = self.redactor.redact_text(unreadable[1][:300])
                message += f"; meanwhile it sent a message the MCP client cannot read ({said})"
            return CallResult.failure(
                ErrorKind.UNAVAILABLE, message, duration_ms=elapsed_ms(started)
            )
        except Exception as exc:
            return self._failed(name, exc, started)
        content = [item.model_dump(by_alias=True, exclude_none=True) for item in result.content]
        structured = result.structured_content
        if result.is_error:
            words = error_text(structured, content, self.redactor)
            return CallResult.failure(
                ErrorKind.RUNTIME_ERROR,
                f"{name}: the upstream answered with an error: {words}",
                duration_ms=elapsed_ms(started),
            )
        return gated_answer(
            name,
            answer_value(structured, content),
            output_bytes=output_bytes,
            redactor=self.redactor,
            duration_ms=elapsed_ms(started),
        )

    def _failed(self, name: str, exc: Exception, started: float) -> CallResult:
        from mcp.shared.exceptions import MCPError

        said = self.redactor.redact_text(_describe(exc))
        if isinstance(exc, MCPError) and exc.code == _CONNECTION_CLOSED:
            self._lose("it closed the connection")
            kind, message = (
                ErrorKind.UNAVAILABLE,
                f"the upstream's connection closed mid-call ({said})",
            )
        elif isinstance(exc, MCPError):
            bad_args = exc.code == _INVALID_PARAMS
            kind = ErrorKind.INVALID_ARGUMENTS if bad_args else ErrorKind.RUNTIME_ERROR
            message = f"the upstream refused the call: {said}"
        elif isinstance(exc, OSError | anyio.BrokenResourceError | anyio.ClosedResourceError):
            self._lose(f"it cannot be reached ({said})")
            kind, message = ErrorKind.UNAVAILABLE, f"the upstream cannot be reached ({said})"
        else:
            kind, message = (
                ErrorKind.RUNTIME_ERROR,
                f"the upstream's answer cannot be used ({said})",
            )
        return CallResult.failure(kind, f"{name}: {message}", duration_ms=elapsed_ms(started))

    def _lose(self, why: str) -> None:
        """The session is gone: no call uses it from now on, and :meth:`run` starts over."""
        if self._session is None:
            return
        self._session, self.error = None, why
        self.state = UpstreamState.DOWN
        if self._lost is not None:
            self._lost.set()

    def describe_down(self) -> str:
        """``down: <why>; retried in 2.0 s`` (or ``connecting``), for a refusal or a report."""
        if self.state is UpstreamState.CONNECTING:
            return "still connecting"
        text = f"{self.state.value}: {self.error or 'not connected'}"
        retry = self.retry_in_s()
        if retry is not None:
            text += f"; retried in {retry:.1f} s"
        return text

    def retry_in_s(self) -> float | None:
        retry_at = self._retry_at
        return None if retry_at is None else max(0.0, retry_at - time.monotonic())

    def status(self) -> UpstreamStatus:
        settings = self.settings
        return UpstreamStatus(
            name=settings.name,
            transport=settings.transport,
            target=settings.target,
            state=self.state,
            tools=len(self.tools),
            skipped=self.skipped,
            error=self.error,
            server=self.server,
            attempts=self.attempts,
            connected_at=self.connected_at,
            retry_in_s=self.retry_in_s(),
            stderr_tail=self.stderr_tail() if self.state is not UpstreamState.READY else "",
        )

    def close_files(self) -> None:
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None


def _identity(tools: dict[str, UpstreamTool]) -> list[tuple[str, str, str]]:
    return sorted((t.name, t.schema_hash, t.description) for t in tools.values())


def _describe(exc: BaseException) -> str:
    """An exception in one line (a group: its first leaf), cut short."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    if isinstance(exc, TimeoutError):
        text = "it did not answer in time"
    return text.replace("\n", " ")[:500]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("toolfoundry")
    except PackageNotFoundError:
        return "0"
