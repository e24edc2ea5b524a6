"""Every configured upstream, on one event loop of their own: :class:`UpstreamServers`.

The connections (``upstream/connection.py``) run on a daemon thread's asyncio loop, started by
:meth:`UpstreamServers.start` (``serve`` starts it at once; a script's first upstream call, search
or report starts it otherwise). Everything else is called from any thread: :meth:`call` blocks
its caller until the answer or the deadline, whichever comes first, and never raises.

``revision`` counts changes of the tools listed (a tool added, removed, or with a new schema or
description), so the MCP listing, the TypeScript types and search know when to read again.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Sequence
from typing import Any

from toolfoundry.sandbox.host.credentials import SecretStore
from toolfoundry.spec import CallResult, ErrorKind
from toolfoundry.spec.names import NAMESPACE_SEPARATOR
from toolfoundry.upstream.connection import Connection, UpstreamState, UpstreamStatus
from toolfoundry.upstream.listing import UpstreamTool
from toolfoundry.upstream.settings import UpstreamSettings

CLOSE_TIMEOUT_S = 10.0
# a call's future is given this much past its deadline to come back with its own refusal
_GRACE_S = 1.0


class UpstreamServers:
    """The upstreams of one configuration.

    Args:
        settings: the ``[[upstream]]`` entries.
        secret_store: where credentials' ``secret`` keys are read (None: only ``env`` ones).
    """

    def __init__(
        self, settings: Sequence[UpstreamSettings], *, secret_store: SecretStore | None = None
    ) -> None:
        self.settings = tuple(settings)
        self.revision = 0
        self._lock = threading.Lock()
        self._connections = {
            s.name: Connection(s, secret_store=secret_store, on_change=self._changed)
            for s in self.settings
        }
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runs: list[concurrent.futures.Future[None]] = []
        self._closed = False

    def _changed(self) -> None:
        with self._lock:
            self.revision += 1

    # ---- life ----------------------------------------------------------------------------

    def start(self) -> UpstreamServers:
        """Start connecting to every upstream (once; returns at once)."""
        with self._lock:
            if self._loop is not None or self._closed or not self._connections:
                return self
            loop = asyncio.new_event_loop()
            thread = threading.Thread(
                target=loop.run_forever, name="toolfoundry-upstreams", daemon=True
            )
            thread.start()
            self._loop, self._thread = loop, thread
            self._runs = [
                asyncio.run_coroutine_threadsafe(c.run(), loop) for c in self._connections.values()
            ]
        return self

    @property
    def started(self) -> bool:
        """Whether :meth:`start` ran (a report that must not start a server asks this)."""
        return self._loop is not None

    def wait(self, timeout: float = 30.0) -> bool:
        """Start, then wait until every upstream's first attempt ended (ready or down), at
        most ``timeout`` seconds; whether all are ready."""
        self.start()
        end = time.monotonic() + timeout
        for connection in self._connections.values():
            connection.first_attempt.wait(max(0.0, end - time.monotonic()))
        return all(c.state is UpstreamState.READY for c in self._connections.values())

    def close(self) -> None:
        """Stop every session (stdio servers are ended) and the loop."""
        with self._lock:
            self._closed = True
            loop, thread, runs = self._loop, self._thread, self._runs
            self._loop = None
        if loop is None:
            for connection in self._connections.values():
                connection.close_files()
            return
        for connection in self._connections.values():
            asyncio.run_coroutine_threadsafe(connection.stop(), loop)
        concurrent.futures.wait(runs, timeout=CLOSE_TIMEOUT_S)
        loop.call_soon_threadsafe(loop.stop)
        if thread is not None:
            thread.join(CLOSE_TIMEOUT_S)
        for connection in self._connections.values():
            connection.close_files()

    # ---- what they offer -----------------------------------------------------------------

    def statuses(self) -> list[UpstreamStatus]:
        """Each upstream's state, in configuration order."""
        return [c.status() for c in self._connections.values()]

    def tools(self) -> list[UpstreamTool]:
        """Every tool of every upstream, by qualified name (the last listing of an upstream
        that is down is kept: its tools are still described, their calls ``unavailable``)."""
        found = [t for c in self._connections.values() for t in list(c.tools.values())]
        return sorted(found, key=lambda t: t.name)

    def settings_of(self, upstream: str) -> UpstreamSettings | None:
        connection = self._connections.get(upstream)
        return None if connection is None else connection.settings

    def find(self, name: str) -> tuple[UpstreamSettings, UpstreamTool | None] | None:
        """``UPSTREAM.TOOL``'s settings and tool (None when the upstream does not list it
        now), or None when no upstream of that name is configured."""
        upstream = name.partition(NAMESPACE_SEPARATOR)[0]
        connection = self._connections.get(upstream)
        if connection is None:
            return None
        return connection.settings, connection.tools.get(name)

    def wait_for(self, upstream: str, timeout: float) -> None:
        """Start, then wait (at most ``timeout`` seconds) until ``upstream``'s first
        connection attempt ended: what a call made right after start waits for."""
        self.start()
        connection = self._connections.get(upstream)
        if connection is not None:
            connection.first_attempt.wait(max(0.0, timeout))

    def ready(self, upstream: str) -> bool:
        """Whether an upstream's session is up now."""
        connection = self._connections.get(upstream)
        return connection is not None and connection.state is UpstreamState.READY

    def describe_down(self, upstream: str) -> str:
        connection = self._connections.get(upstream)
        return "not configured" if connection is None else connection.describe_down()

    # ---- calls ---------------------------------------------------------------------------

    def call(
        self, tool: UpstreamTool, args: dict[str, Any], *, deadline: float, output_bytes: int
    ) -> CallResult:
        """Call ``tool`` (checked ``args``) by ``deadline`` (``time.monotonic()``); blocks the
        calling thread, never raises: a server that does not answer in time is
        ``unavailable``."""
        self.start()
        connection = self._connections.get(tool.upstream)
        loop = self._loop
        if connection is None or loop is None:
            return CallResult.failure(ErrorKind.UNAVAILABLE, f"{tool.name}: upstreams are closed")
        future = asyncio.run_coroutine_threadsafe(
            connection.call(tool, args, deadline=deadline, output_bytes=output_bytes), loop
        )
        try:
            return future.result(timeout=max(0.0, deadline - time.monotonic()) + _GRACE_S)
        except concurrent.futures.TimeoutError:
            future.cancel()
            message = f"{tool.name}: upstream {tool.upstream!r} did not answer in time"
            return CallResult.failure(ErrorKind.UNAVAILABLE, message)
        except concurrent.futures.CancelledError:
            return CallResult.failure(ErrorKind.UNAVAILABLE, f"{tool.name}: the call was stopped")
