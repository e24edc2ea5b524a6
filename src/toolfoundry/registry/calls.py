"""The two statements every tool call runs, straight on the database driver.

Looking up a tool's current version and recording the call are the only registry work on the
call path. Through a SQLAlchemy ``Connection`` each costs ~0.2-0.3 ms of Python; on the pooled
DBAPI connection it is ~0.02-0.05 ms on SQLite. Everything else in the registry goes through
SQLAlchemy; these statements write exactly what the Core tables would (see the tests, which read
them back through Core on both backends).
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from sqlalchemy.engine import Engine

from toolfoundry.registry.audit import now
from toolfoundry.registry.records import AuditEvent, RegistryError
from toolfoundry.registry.schema import bindable_name
from toolfoundry.registry.usage import bucket
from toolfoundry.spec import VersionStatus

_RESOLVE = (
    "SELECT v.id, v.version, v.status, t.current_status "
    "FROM tf_versions v JOIN tf_tools t ON t.id = v.tool_id "
    "WHERE t.name = :name AND v.version = "
)
_RESOLVE_CURRENT = _RESOLVE + "t.current_version"
_RESOLVE_VERSION = _RESOLVE + ":version"
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
_NAMED = re.compile(r":(\w+)")


class CallStatements:
    """Resolve and record for one engine, in the driver's own parameter style."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._postgres = engine.dialect.name == "postgresql"

        def style(sql: str) -> str:
            return _NAMED.sub(r"%(\1)s", sql) if self._postgres else sql

        self._resolve_current = style(_RESOLVE_CURRENT)
        self._resolve_version = style(_RESOLVE_VERSION)
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
        conn = self._engine.raw_connection()
        try:
            if self._postgres:
                # one round trip: no BEGIN before the SELECT, no ROLLBACK when it goes back
                driver: Any = conn.driver_connection
                driver.autocommit = True
                try:
                    row = driver.execute(sql, params).fetchone()
                finally:
                    driver.autocommit = False
            else:
                cursor = conn.cursor()
                cursor.execute(sql, params)
                row = cursor.fetchone()
                cursor.close()
        finally:
            conn.close()
        if row is None:
            what = f"{name!r}" if version is None else f"{name!r} version {version}"
            raise RegistryError("not_found", f"no tool {what}")
        if row[3] == VersionStatus.DISABLED.value:
            return int(row[0]), int(row[1]), VersionStatus.DISABLED
        return int(row[0]), int(row[1]), VersionStatus(row[2])

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
            at, detail = _sqlite_datetime(at), json.dumps(detail)
        counters = ["calls", f"ms:{bucket(duration_ms)}"]
        if error_kind:
            counters.append(f"failed:{error_kind}")
        rows = [{"tool": name, "counter": c, "ms": duration_ms, "at": at} for c in counters]
        event = {"at": at, "tool": name, "version": version, "event": AuditEvent.CALLED.value}
        audit_row = {**event, "actor": actor, "detail": detail}
        conn = self._engine.raw_connection()
        try:
            if self._postgres:
                self._record_postgres(conn.driver_connection, rows, audit_row)
            else:
                cursor = conn.cursor()
                cursor.execute("BEGIN")  # the driver runs in autocommit mode (see engine.py)
                cursor.executemany(self._upsert, rows)
                cursor.execute(self._audit, audit_row)
                cursor.execute("COMMIT")
                cursor.close()
        except BaseException:
            conn.rollback()
            raise
        finally:
            conn.close()

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


def _sqlite_datetime(value: datetime) -> str:
    # the storage format of SQLAlchemy's SQLite DateTime, so Core reads these rows back
    return value.strftime("%Y-%m-%d %H:%M:%S.%f")
