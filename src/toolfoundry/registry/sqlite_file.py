"""A registry in a SQLite file, on the driver alone: where it is, how a connection is set up,
and the connections the call path borrows.

What opening a registry decides before SQLAlchemy loads lives here, so a process that only
calls tools (``Foundry.open`` + ``call``) does not import it: :mod:`toolfoundry.registry.engine`
builds its engines from these same settings.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from toolfoundry.registry.records import DriverError
from toolfoundry.registry.store_url import as_store_url

DEFAULT_DIR = Path(".toolfoundry")
DEFAULT_FILE = "registry.db"
# The newest migration's revision id; opening a database already at this revision skips
# Alembic entirely (a test keeps this in step with the migration scripts).
SCHEMA_HEAD = "0012"
REVISION_QUERY = "SELECT version_num FROM tf_alembic_version"
BUSY_TIMEOUT_MS = 30_000
_PREFIX = "sqlite:///"
_IDLE_KEPT = 8  # connections kept for reuse; more are closed when given back


def default_url(base: Path | None = None) -> str:
    """The default SQLite database under ``./.toolfoundry/`` (created when missing)."""
    directory = (base or Path.cwd()) / DEFAULT_DIR
    directory.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{directory / DEFAULT_FILE}"


def resolve_url(url: str | None) -> str:
    """``url``, else ``TOOLFOUNDRY_DB``, else the default SQLite file, as a SQLAlchemy URL
    (a bare path is a SQLite file, ``postgres://`` is PostgreSQL: ``store_url.as_store_url``).

    Raises:
        toolfoundry.registry.store_url.UnsupportedStore: a database we keep no registry in.
    """
    return as_store_url(url or os.environ.get("TOOLFOUNDRY_DB") or default_url())


def file_of(url: str) -> Path | None:
    """The file of a plain ``sqlite:///PATH`` URL; None for any other URL (another database,
    a driver named, ``:memory:``, a query string), which SQLAlchemy reads instead."""
    if not url.startswith(_PREFIX) or "?" in url or "#" in url:
        return None
    path = unquote(url[len(_PREFIX) :])
    if not path or path == ":memory:":
        return None
    return Path(path)


def require_directory(path: Path) -> None:
    """A mistyped path is not silently made into a new, empty registry (only
    :func:`default_url` creates its directory).

    Raises:
        FileNotFoundError: the file's directory does not exist.
    """
    directory = path.parent
    if not directory.is_dir():
        raise FileNotFoundError(
            f"the directory of the SQLite database does not exist: {directory} "
            "(create it first, or give another path)"
        )


def configure(connection: sqlite3.Connection) -> None:
    """Settings every registry connection has: transactions begun by us (so a writer can
    ask for ``BEGIN IMMEDIATE``), a busy timeout, foreign keys, the WAL journal."""
    connection.isolation_level = None
    cursor = connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys = ON")
    # Switching to WAL needs a moment of exclusive access; another process may hold it,
    # but then it has (or will have) switched the file already, and the mode is persistent.
    with contextlib.suppress(sqlite3.OperationalError):
        cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.close()


class ChangeMark:
    """A number that changes whenever anything was committed to a SQLite file since it was
    last read, by any connection of any process: ``PRAGMA data_version`` (read from the
    database header in microseconds) on a connection kept for it alone.

    The pragma is per connection and blind to that connection's own commits; this one never
    writes, so every commit moves it, this process's included. :meth:`read` is None when the
    mark cannot be read (the connection failed: it is dropped and made again next time), and
    then nothing may be taken as unchanged.

    Args:
        open_connection: makes the kept connection: (the driver connection, how to let it go).
    """

    def __init__(
        self, open_connection: Callable[[], tuple[sqlite3.Connection, Callable[[], None]]]
    ) -> None:
        self._open = open_connection
        self._kept: tuple[sqlite3.Connection, Callable[[], None]] | None = None
        self._lock = threading.Lock()  # one connection, asked from any thread in turn
        self._closed = False

    def read(self) -> int | None:
        with self._lock:
            if self._closed:
                return None
            try:
                if self._kept is None:
                    self._kept = self._open()
                row = self._kept[0].execute("PRAGMA data_version").fetchone()
                return int(row[0])
            except (sqlite3.Error, DriverError):
                self._release()
                return None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._release()

    def _release(self) -> None:
        kept, self._kept = self._kept, None
        if kept is not None:
            with contextlib.suppress(sqlite3.Error):
                kept[1]()


class Connections:
    """Driver connections to one file, lent to one thread at a time and kept for reuse."""

    dialect = "sqlite"

    def __init__(self, path: Path) -> None:
        require_directory(path)
        self.path = path
        self.key = str(path)
        self._idle: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._mark = ChangeMark(self._mark_connection)

    def change_mark(self) -> int | None:
        """See :class:`ChangeMark`: what the call path compares to know that nothing was
        committed to the file between two of its reads."""
        return self._mark.read()

    def _mark_connection(self) -> tuple[sqlite3.Connection, Callable[[], None]]:
        conn = self._connect()
        return conn, conn.close

    @contextlib.contextmanager
    def borrow(self) -> Iterator[sqlite3.Connection]:
        """A connection for one statement or transaction; an open transaction left by a
        failure is rolled back before the connection is reused."""
        with self._lock:
            conn = self._idle.pop() if self._idle else None
        if conn is None:
            conn = self._connect()
        try:
            yield conn
        except sqlite3.Error as exc:  # locked, not a database, disk full: a StoreError
            raise DriverError(exc) from exc
        finally:
            if conn.in_transaction:
                conn.rollback()
            with self._lock:
                keep = not self._closed and len(self._idle) < _IDLE_KEPT
                if keep:
                    self._idle.append(conn)
            if not keep:
                conn.close()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
        try:
            configure(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise DriverError(exc) from exc
        return conn

    def schema_revision(self) -> str | None:
        """The migration revision of the file, or None (empty, or not a registry yet).

        Raises:
            DriverError: the file cannot be read (not a database, locked past the timeout).
        """
        with self.borrow() as conn:
            try:
                row = conn.execute(REVISION_QUERY).fetchone()
            except sqlite3.OperationalError as exc:
                if "no such table" not in str(exc):
                    raise
                return None
        return None if row is None else str(row[0])

    def close(self) -> None:
        """Close the kept connections (borrowed ones close when given back)."""
        with self._lock:
            idle, self._idle, self._closed = self._idle, [], True
        for conn in idle:
            conn.close()
        self._mark.close()


@dataclass(frozen=True)
class RegistryFile:
    """A SQLite registry file at the current schema, open on the driver alone (what
    ``Foundry.open`` gives a foundry): its calls need no SQLAlchemy, and the full
    ``Registry`` opens from ``url`` when something first needs it."""

    url: str
    connections: Connections
