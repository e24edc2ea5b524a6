"""Hearing of active-set changes on PostgreSQL: ``LISTEN tf_active_set`` on its own connection.

Migration 0006's trigger sends ``NOTIFY tf_active_set, '<schema>'`` from every transaction that
moves a tool's current version or status, whichever process made it. :class:`ChangeFeed` holds
one dedicated connection per server process (outside the engine's pool: a listening connection
must stay open and idle), and calls ``on_notify`` for each notification about its own schema.

It also calls ``on_notify`` after every (re)connect and on every disconnect: whatever changed
while it was not listening is then caught by the caller's next check, and a caller that polls
slowly while the feed listens learns that it must poll fast again. A dead connection is found
by a ``SELECT 1`` after each quiet ``LIVENESS_S`` (bounded by ``PING_TIMEOUT_S``), then retried
with capped exponential backoff. SQLite has no such channel; :meth:`ChangeFeed.supports` says
so, and its callers poll.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sqlalchemy.engine import Engine

logger = logging.getLogger(__name__)

# Must match the channel named by migration 0006's trigger (tests/registry/test_registry_notify).
CHANNEL = "tf_active_set"
LIVENESS_S = 10.0
PING_TIMEOUT_S = 10.0
RETRY_MIN_S = 0.1
RETRY_MAX_S = 5.0


class ChangeFeed:
    """``LISTEN`` for active-set changes of one registry (PostgreSQL only).

    Args:
        engine: the registry's engine; the feed opens its own connection with the same
            connection arguments (host, credentials, ``search_path``).
        on_notify: called (in the event loop, never concurrently) for each notification about
            this registry's schema, after each (re)connect and on each disconnect.
        liveness_s: seconds of silence after which the connection is pinged.
    """

    def __init__(
        self, engine: Engine, on_notify: Callable[[], None], *, liveness_s: float = LIVENESS_S
    ) -> None:
        self._engine = engine
        self._on_notify = on_notify
        self.liveness_s = liveness_s
        self.listening = False
        self.backend_pid: int | None = None
        self.notifications = 0
        self.connects = 0

    @staticmethod
    def supports(engine: Engine) -> bool:
        """True when ``engine``'s database can notify (PostgreSQL through psycopg 3)."""
        return engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg"

    async def run(self) -> None:
        """Listen until cancelled, reconnecting whenever the connection fails."""
        import anyio  # here: opening a registry for the CLI does not pay for it

        delay = RETRY_MIN_S
        while True:
            try:
                await self._listen()
            except Exception as exc:  # psycopg.Error, OSError, a ping timeout: reconnect
                logger.warning("registry change feed disconnected: %s", exc)
            if self.listening:
                self.listening = False
                self.backend_pid = None
                delay = RETRY_MIN_S
                self._on_notify()  # the caller polls fast until we are back
            await anyio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX_S)

    async def _listen(self) -> None:
        import anyio
        import psycopg

        args, kwargs = self._engine.dialect.create_connect_args(self._engine.url)
        params: dict[str, Any] = {**kwargs, "autocommit": True}
        async with await psycopg.AsyncConnection.connect(*args, **params) as conn:
            row = await (await conn.execute("SELECT current_schema()")).fetchone()
            schema = None if row is None else row[0]
            await conn.execute(f"LISTEN {CHANNEL}")
            self.connects += 1
            self.backend_pid = conn.info.backend_pid
            self.listening = True
            self._on_notify()  # changes made while we were not listening
            while True:
                async for note in conn.notifies(timeout=self.liveness_s):
                    if note.payload == schema:
                        self.notifications += 1
                        self._on_notify()
                with anyio.fail_after(PING_TIMEOUT_S):
                    await conn.execute("SELECT 1")
