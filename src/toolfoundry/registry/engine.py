"""Opening a registry database: engine settings per dialect and migrations on open."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, OperationalError, ProgrammingError, SQLAlchemyError

from toolfoundry.base.extras import requires_extra
from toolfoundry.registry.records import DriverError
from toolfoundry.registry.sqlite_file import (
    BUSY_TIMEOUT_MS,
    REVISION_QUERY,
    SCHEMA_HEAD,
    ChangeMark,
    configure,
    file_of,
    require_directory,
)
from toolfoundry.registry.store_url import as_store_url

_MIGRATION_LOCK = 0x7466_7265  # an arbitrary advisory-lock key for PostgreSQL ("tfre")


# What a registry method raises when the database itself fails (unreachable, locked, a broken
# file): SQLAlchemy's base error, or the driver's wrapped where a statement runs on the driver
# alone (calls.py). Named here so that the layers above never import SQLAlchemy; a tuple, as
# ``except`` takes it.
StoreError = (SQLAlchemyError, DriverError)


class SchemaMismatch(RuntimeError):
    """The database is at a schema revision this toolfoundry does not know (a newer one's)."""


def shown_url(url: str) -> str:
    """``url`` as it may be printed: its password masked (unchanged when it does not parse)."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except (ArgumentError, ValueError):
        return url


def create_registry_engine(url: str) -> Engine:
    """An engine for ``url`` with the settings the registry relies on.

    SQLite: WAL journal, a busy timeout, foreign keys, and transactions begun by us so a
    writer can ask for ``BEGIN IMMEDIATE`` (execution option ``sqlite_begin``) and take the
    write lock before it reads the row it will update.

    Raises:
        FileNotFoundError: a SQLite file whose directory does not exist (a mistyped path is
            not silently made into a new, empty registry; only :func:`default_url` creates its
            directory).
        toolfoundry.base.extras.MissingExtra: a PostgreSQL URL without psycopg installed
            (``postgres://`` and ``postgresql://`` mean psycopg 3 here).
        toolfoundry.registry.store_url.UnsupportedStore: a database we keep no registry in
            (a bare path is a SQLite file: ``store_url.as_store_url``).
    """
    store_url = as_store_url(url)
    parsed = make_url(store_url)
    if parsed.get_backend_name() == "sqlite":
        # The file as given: SQLAlchemy 2.1 percent-decodes a URL's database part, 2.0 keeps it
        # encoded (a bare path "a #1?.db" is "a %231%3F.db" in the URL); file_of decodes once.
        if (path := file_of(store_url)) is not None:
            parsed = parsed.set(database=str(path))
        database = parsed.database
        if database and database != ":memory:" and not parsed.query.get("uri"):
            require_directory(Path(database))
        engine = create_engine(parsed, connect_args={"timeout": BUSY_TIMEOUT_MS / 1000})
        event.listen(engine, "connect", _sqlite_on_connect)
        event.listen(engine, "begin", _sqlite_on_begin)
        return engine
    with requires_extra("postgres", "a PostgreSQL registry"):  # the one other store
        return create_engine(parsed, pool_pre_ping=False)


def _sqlite_on_connect(dbapi_connection: Any, _record: Any) -> None:
    configure(dbapi_connection)


def _sqlite_on_begin(conn: Connection) -> None:
    mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
    conn.exec_driver_sql(f"BEGIN {mode}")


class EngineConnections:
    """The call statements' connections from an engine's pool (``calls.DriverConnections``):
    the driver's own connection, rolled back when a statement failed, then given back."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.dialect = engine.dialect.name
        self.key = engine.url.render_as_string(hide_password=True)
        database = engine.url.database
        # a SQLite file's change mark; an in-memory database is private to each connection
        self._mark: ChangeMark | None = None
        if self.dialect == "sqlite" and database and database != ":memory:":
            self._mark = ChangeMark(self._mark_connection)

    def change_mark(self) -> int | None:
        """A SQLite file's :class:`ChangeMark`; None on any other database (no such mark)."""
        return None if self._mark is None else self._mark.read()

    def _mark_connection(self) -> tuple[Any, Callable[[], None]]:
        try:
            pooled = self._engine.raw_connection()  # kept out of the pool until closed
        except SQLAlchemyError as exc:
            raise DriverError(exc) from exc
        return pooled.driver_connection, pooled.close

    def close(self) -> None:
        """Give the kept connection back (the engine's pool closes the others)."""
        if self._mark is not None:
            self._mark.close()

    @contextlib.contextmanager
    def borrow(self) -> Iterator[Any]:
        pooled = self._engine.raw_connection()
        try:
            yield pooled.driver_connection
        except BaseException as exc:
            pooled.rollback()
            if isinstance(exc, self._engine.dialect.loaded_dbapi.Error):
                raise DriverError(exc) from exc
            raise
        finally:
            pooled.close()


def upsert_insert(dialect: str) -> Any:
    """The dialect's ``insert`` (with ``on_conflict_do_*``), imported only for the dialect in
    use: SQLAlchemy's PostgreSQL dialect costs 30-80 ms to import, in every SQLite process."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert


def write_options(engine: Engine) -> dict[str, Any]:
    """Execution options for a read-then-write transaction on this engine's dialect."""
    return {"sqlite_begin": "IMMEDIATE"} if engine.dialect.name == "sqlite" else {}


def schema_revision(conn: Connection) -> str | None:
    """The migration revision the database is at, or None for an empty database."""
    try:
        with conn.begin():
            row = conn.execute(text(REVISION_QUERY)).first()
    except (OperationalError, ProgrammingError):
        return None
    return None if row is None else str(row[0])


def migrate(engine: Engine) -> None:
    """Bring the database to the newest schema; safe when many processes open it at once."""
    with engine.connect() as probe:
        found = schema_revision(probe)
        if found == SCHEMA_HEAD:
            return
    # Alembic loads only when there is something to migrate; opening a current database
    # stays cheap for the CLI and short-lived processes.
    from alembic import command
    from alembic.config import Config
    from alembic.util.exc import CommandError

    config = Config()
    config.set_main_option("script_location", str(Path(__file__).parent / "migrations"))
    with engine.connect().execution_options(**write_options(engine)) as conn, conn.begin():
        if engine.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _MIGRATION_LOCK})
        config.attributes["connection"] = conn
        try:
            command.upgrade(config, "head")
        except CommandError as exc:
            raise SchemaMismatch(
                f"the database is at schema revision {found!r}, which this toolfoundry does not "
                f"know (it expects {SCHEMA_HEAD!r} or older; was it written by a newer "
                f"version?): {exc}"
            ) from exc
