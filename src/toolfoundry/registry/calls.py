"""The statements every tool call runs, straight on the database driver.

Looking up a tool's current version, reading that version once, and recording the call are the
only registry work on the call path. Through a SQLAlchemy ``Connection`` each costs ~0.2-0.3 ms
of Python; on the driver's connection it is ~0.02-0.05 ms on SQLite. And on a SQLite file they
need no SQLAlchemy at all (:class:`toolfoundry.registry.sqlite_file.Connections`), so a process
that opens a registry and calls a tool does not import it. Everything else in the registry goes
through SQLAlchemy; these statements read and write exactly what the Core tables would (see the
tests, which compare them with Core on both backends).
"""

from __future__ import annotations

import json
import re
from contextlib import AbstractContextManager
from typing import Any, Protocol

from toolfoundry.registry.codecs import (
    ROW_COLUMNS,
    VERSION_COLUMNS,
    bindable_name,
    bucket,
    now,
    sqlite_datetime,
    version_records,
)
from toolfoundry.registry.records import AuditEvent, RegistryError, ToolVersion
from toolfoundry.spec import VersionStatus
from toolfoundry.spec.names import did_you_mean

_RESOLVE = (
    "SELECT v.id, v.version, v.status, t.current_status "
    "FROM tf_versions v JOIN tf_tools t ON t.id = v.tool_id "
    "WHERE t.name = :name AND v.version = "
)
_RESOLVE_CURRENT = _RESOLVE + "t.current_version"
_RESOLVE_VERSION = _RESOLVE + ":version"
_READ = (
    f"SELECT {', '.join('v.' + c for c in VERSION_COLUMNS)}, t.name, t.current_version "
    "FROM tf_versions v JOIN tf_tools t ON t.id = v.tool_id "
    "WHERE t.name = :name AND v.version = :version"
)
# SQLite >= 3.24 and PostgreSQL share this upsert syntax.
_UPSERT = (
    "INSERT INTO tf_usage (tool, counter, n, total_ms, last_at) "
    "VALUES (:tool, :counter, 1, :ms, :at) "
    "ON CONFLICT (tool, counter) DO UPDATE SET n = tf_usage.n + 1, "
    "total_ms = tf_usage.total_ms + excluded.total_ms, last_at = excluded.last_at"
)
_AUDIT = (
    "INSERT INTO tf_audit (at, tool, version, event, actor, detail) "
    "VALUES (:at, :tool, :version, :event, :actor, :detail)"
)
_NAMES = "SELECT name FROM tf_tools"
_NAMED = re.compile(r":(\w+)")


class DriverConnections(Protocol):
    """Where the statements get a driver connection: ``sqlite_file.Connections`` on a SQLite
    file, ``engine.EngineConnections`` (SQLAlchemy's pool) on anything else."""

    dialect: str

    def borrow(self) -> AbstractContextManager[Any]: ...


class CallStatements:
    """Resolve, read and record on one database, in the driver's own parameter style."""

    def __init__(self, connections: DriverConnections) -> None:
        self._connections = connections
        self._postgres = connections.dialect == "postgresql"

        def style(sql: str) -> str:
            return _NAMED.sub(r"%(\1)s", sql) if self._postgres else sql

        self._resolve_current = style(_RESOLVE_CURRENT)
        self._resolve_version = style(_RESOLVE_VERSION)
        self._read = style(_READ)
        self._upsert = style(_UPSERT)
        self._audit = style(_AUDIT)

    def resolve(self, name: str, version: int | None) -> tuple[int, int, VersionStatus]:
        """(row id, number, status) of the named or current version.

        A tool whose current version a person disabled is disabled as a whole: every version
        of it resolves with status ``disabled``, so no explicit version number reaches around
        the decision.

        Raises:
            RegistryError: ``not_found`` for an unknown tool or version.
        """
        params: dict[str, Any] = {"name": bindable_name(name)}
        if version is not None:
            params["version"] = version
        sql = self._resolve_current if version is None else self._resolve_version
        row = self._one(sql, params)
        if row is None:
            if version is not None:
                raise RegistryError("not_found", f"no tool {name!r} version {version}")
            raise RegistryError("not_found", f"no tool {name!r}{self._close_to(name)}")
        if row[3] == VersionStatus.DISABLED.value:
            return int(row[0]), int(row[1]), VersionStatus.DISABLED
        return int(row[0]), int(row[1]), VersionStatus(row[2])

    def _close_to(self, name: str) -> str:
        """The "did you mean" of an unknown name (read only when a name is unknown)."""
        with self._connections.borrow() as driver:
            names = [str(row[0]) for row in driver.execute(_NAMES).fetchall()]
        return did_you_mean(name, names)

    def version(self, name: str, number: int) -> ToolVersion:
        """The record of one version (what ``Registry.get(name, number)`` reads through Core).

        Raises:
            RegistryError: ``not_found`` for an unknown tool or version.
        """
        row = self._one(self._read, {"name": bindable_name(name), "version": number})
        if row is None:
            raise RegistryError("not_found", f"no tool {name!r} version {number}")
        return version_records(ROW_COLUMNS, (row,), {})[0]

    def _one(self, sql: str, params: dict[str, Any]) -> Any:
        with self._connections.borrow() as driver:
            if not self._postgres:
                return driver.execute(sql, params).fetchone()
            # one round trip: no BEGIN before the SELECT, no ROLLBACK when it goes back
            driver.autocommit = True
            try:
                return driver.execute(sql, params).fetchone()
            finally:
                driver.autocommit = False

    def record(
        self, name: str, version: int, duration_ms: float, error_kind: str | None, actor: str
    ) -> None:
        """Count the call and append its ``called`` audit row in one transaction."""
        at: Any = now()
        detail: Any = {"ok": error_kind is None, "error": error_kind, "ms": round(duration_ms, 3)}
        if self._postgres:
            from psycopg.types.json import Json

            detail = Json(detail)
        else:
            at, detail = sqlite_datetime(at), json.dumps(detail)
        counters = ["calls", f"ms:{bucket(duration_ms)}"]
        if error_kind:
            counters.append(f"failed:{error_kind}")
        rows = [{"tool": name, "counter": c, "ms": duration_ms, "at": at} for c in counters]
        event = {"at": at, "tool": name, "version": version, "event": AuditEvent.CALLED.value}
        audit_row = {**event, "actor": actor, "detail": detail}
        with self._connections.borrow() as driver:
            if self._postgres:
                self._record_postgres(driver, rows, audit_row)
            else:
                cursor = driver.cursor()
                cursor.execute("BEGIN")  # the driver runs in autocommit mode (sqlite_file.py)
                cursor.executemany(self._upsert, rows)
                cursor.execute(self._audit, audit_row)
                cursor.execute("COMMIT")
                cursor.close()

    def _record_postgres(
        self, driver: Any, rows: list[dict[str, Any]], audit_row: dict[str, Any]
    ) -> None:
        # Pipelined: BEGIN, the statements and COMMIT go to the server in one round trip.
        with driver.pipeline(), driver.cursor() as cursor:
            # A call record may be lost in a server crash (the last ~0.6 s of them), never
            # torn; waiting for the WAL flush would cost more than the call itself. Versions,
            # approvals and pointer moves keep synchronous commits.
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
            cursor.executemany(self._upsert, rows)
            cursor.execute(self._audit, audit_row)
            driver.commit()
