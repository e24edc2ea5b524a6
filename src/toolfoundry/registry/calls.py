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

import hashlib
import json
import os
import re
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from toolfoundry.registry.call_journal import CallJournal, Codec, JournalEntry
from toolfoundry.registry.code_runs import RUN_COLUMNS, CodeRunRow
from toolfoundry.registry.codecs import (
    ROW_COLUMNS,
    VERSION_COLUMNS,
    as_utc,
    bindable_name,
    bucket,
    now,
    sqlite_datetime,
    version_records,
)
from toolfoundry.registry.kept_runs import RUNS_KEPT, cutoff, prune_sql
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
    "INSERT INTO tf_audit (at, tool, version, event, actor, detail, caller) "
    "VALUES (:at, :tool, :version, :event, :actor, :detail, :caller)"
)
# A journal's batch (PostgreSQL): counters summed per (tool, counter), then its mark.
_UPSERT_SUMS = (
    "INSERT INTO tf_usage (tool, counter, n, total_ms, last_at) "
    "VALUES (%(tool)s, %(counter)s, %(n)s, %(ms)s, %(at)s) "
    "ON CONFLICT (tool, counter) DO UPDATE SET n = tf_usage.n + excluded.n, "
    "total_ms = tf_usage.total_ms + excluded.total_ms, "
    "last_at = GREATEST(tf_usage.last_at, excluded.last_at)"
)
_MARK_READ = "SELECT seq FROM tf_journal_marks WHERE journal = %s FOR UPDATE"
_MARK_WRITE = (
    "INSERT INTO tf_journal_marks (journal, seq) VALUES (%s, %s) "
    "ON CONFLICT (journal) DO UPDATE SET seq = excluded.seq"
)
_MARK_FORGET = "DELETE FROM tf_journal_marks WHERE journal = %s"
_NAMES = "SELECT name FROM tf_tools"
# A kept code-mode run (registry/code_runs.py), then the runs past the bound (kept_runs.py).
_RUN_INSERT = (
    "INSERT INTO tf_code_runs (id, started_at, actor, ok, error_kind, duration_ms, "
    "inner_calls, code, recording) VALUES (:id, :started_at, :actor, :ok, :error_kind, "
    ":duration_ms, :inner_calls, :code, :recording)"
)
_RUN_READ = f"SELECT {', '.join(RUN_COLUMNS)} FROM tf_code_runs WHERE id = :id"
_RUN_PRUNE = prune_sql("tf_code_runs")
_NAMED = re.compile(r":(\w+)")


@dataclass(frozen=True)
class CallRecord:
    """One call to count and audit.

    Attributes:
        name: the tool called (``UPSTREAM.TOOL`` for an upstream server's tool).
        version: the version that answered (or refused); None for an upstream tool.
        duration_ms: how long the call took.
        error_kind: how it failed, or None.
        actor: who the call is done for (``agent``, a login name).
        caller: who made it through code mode's ``tools`` (``run:<id>``, ``name@version``),
            for the audit row; None for a direct call.
        caller_name: the caller as usage counts it (``by:<caller_name>``: a tool's name, or
            ``run_js``); None for a direct call.
    """

    name: str
    version: int | None
    duration_ms: float
    error_kind: str | None
    actor: str
    caller: str | None = None
    caller_name: str | None = None


class DriverConnections(Protocol):
    """Where the statements get a driver connection: ``sqlite_file.Connections`` on a SQLite
    file, ``engine.EngineConnections`` (SQLAlchemy's pool) on anything else. ``key`` names
    the database (no password) for the call journal of a PostgreSQL registry."""

    dialect: str
    key: str

    def borrow(self) -> AbstractContextManager[Any]: ...

    def change_mark(self) -> int | None: ...


class CallStatements:
    """Resolve, read and record on one database, in the driver's own parameter style."""

    def __init__(self, connections: DriverConnections) -> None:
        self._connections = connections
        self._postgres = connections.dialect == "postgresql"
        # PostgreSQL: call records go through a journal on this host (registry/call_journal.py)
        self._journal: CallJournal[CallRecord] | None = None
        self._journal_lock = threading.Lock()

        def style(sql: str) -> str:
            return _NAMED.sub(r"%(\1)s", sql) if self._postgres else sql

        self._resolve_current = style(_RESOLVE_CURRENT)
        self._resolve_version = style(_RESOLVE_VERSION)
        self._read = style(_READ)
        self._upsert = style(_UPSERT)
        self._audit = style(_AUDIT)
        self._run_insert = style(_RUN_INSERT)
        self._run_prune = style(_RUN_PRUNE)
        self._run_read = style(_RUN_READ)

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

    def change_mark(self) -> int | None:
        """A number that differs between two reads whenever anything was committed to the
        database in between, by any process (a SQLite file's ``PRAGMA data_version``, on a
        connection kept for it: ``sqlite_file.ChangeMark``); None where there is no such
        number (PostgreSQL) or it cannot be read: then everything must be read again.

        What lets code mode read a callee's resolution once per outer call
        (``foundry/call.py``): a disable, an approval or a new version commits, and moves it.
        """
        return self._connections.change_mark()

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
        self.record_all([CallRecord(name, version, duration_ms, error_kind, actor)])

    def record_all(
        self,
        calls: Sequence[CallRecord],
        *,
        run: CodeRunRow | None = None,
        kept: int = RUNS_KEPT,
    ) -> None:
        """Count the calls and append their ``called`` audit rows in one transaction (an
        outer call's inner calls are written together: one commit, not one per call).

        With ``run``, the code-mode run they were made by is kept in the same transaction,
        and the runs past the age or the count kept (``kept``) are deleted.
        """
        if not calls and run is None:
            return
        if self._postgres and run is None:
            self.journal().append(calls, now())  # written in batches, off the call path
            return
        at: Any = now()
        if not self._postgres:
            at = sqlite_datetime(at)
        rows: list[dict[str, Any]] = []
        audit_rows: list[dict[str, Any]] = []
        for call in calls:
            counters = ["calls", f"ms:{bucket(call.duration_ms)}"]
            if call.error_kind:
                counters.append(f"failed:{call.error_kind}")
            if call.caller_name:
                counters.append(f"by:{call.caller_name}")
            ms = call.duration_ms
            rows += [{"tool": call.name, "counter": c, "ms": ms, "at": at} for c in counters]
            audit_rows.append(self._audit_row(call, at))
        runs = [] if run is None else [self._run_row(run), self._prune_row(run.id, kept)]
        with self._connections.borrow() as driver:
            if self._postgres:
                self._record_postgres(driver, rows, audit_rows, runs)
            else:
                cursor = driver.cursor()
                cursor.execute("BEGIN")  # the driver runs in autocommit mode (sqlite_file.py)
                cursor.executemany(self._upsert, rows)
                cursor.executemany(self._audit, audit_rows)
                if runs:
                    cursor.execute(self._run_insert, runs[0])
                    cursor.execute(self._run_prune, runs[1])
                cursor.execute("COMMIT")
                cursor.close()

    def journal(self) -> CallJournal[CallRecord]:
        """This process's journal of this PostgreSQL registry's call records (made on first
        use: it first writes what earlier processes on this host left unwritten)."""
        with self._journal_lock:
            if self._journal is None:
                key = hashlib.sha256(self._connections.key.encode()).hexdigest()[:16]
                self._journal = CallJournal(
                    journal_dir(), key, _JOURNAL_CODEC, self._deliver, self._forget_journal
                )
            return self._journal

    def flush(self) -> None:
        """Wait until this process's call records are all in the database (a read that
        must see them calls this first); nothing to wait for on SQLite. On PostgreSQL the
        first one opens the journal, which writes what dead processes here left behind."""
        if self._postgres:
            self.journal().flush()

    def close(self) -> None:
        """Write the journaled records and remove the journal (PostgreSQL)."""
        with self._journal_lock:
            journal, self._journal = self._journal, None
        if journal is not None:
            journal.close()

    def _deliver(self, journal: str, entries: Sequence[JournalEntry[CallRecord]]) -> None:
        """Write a journal's entries past its mark, and the new mark, in one transaction."""
        with self._connections.borrow() as driver, driver.transaction():
            cursor = driver.cursor()
            # as before the journal: a server crash may lose the last ~0.6 s of call records
            # (the journal's owner has moved its mark on by then), never tear them
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
            row = cursor.execute(_MARK_READ, (journal,)).fetchone()
            fresh = [e for e in entries if row is None or e.seq > int(row[0])]
            if fresh:
                cursor.executemany(_UPSERT_SUMS, _usage_sums(fresh))
                cursor.executemany(self._audit, [self._audit_row(e.call, e.at) for e in fresh])
            cursor.execute(_MARK_WRITE, (journal, entries[-1].seq))

    def _forget_journal(self, journal: str) -> None:
        with self._connections.borrow() as driver, driver.transaction():
            driver.execute(_MARK_FORGET, (journal,))

    def code_run(self, run_id: str) -> CodeRunRow | None:
        """A kept run, or None."""
        row = self._one(self._run_read, {"id": run_id})
        if row is None:
            return None
        values = dict(zip(RUN_COLUMNS, row, strict=True))
        recording = values["recording"]
        if isinstance(recording, str):  # SQLite keeps JSON as its text
            recording = json.loads(recording)
        values.update(
            started_at=as_utc(values["started_at"]),
            ok=bool(values["ok"]),
            recording=recording,
        )
        return CodeRunRow(**values)

    def _run_row(self, run: CodeRunRow) -> dict[str, Any]:
        # not dataclasses.asdict: that would deep-copy the recording
        values: dict[str, Any] = {name: getattr(run, name) for name in RUN_COLUMNS}
        if self._postgres:
            from psycopg.types.json import Json

            values["recording"] = None if run.recording is None else Json(run.recording)
        else:
            values["started_at"] = sqlite_datetime(run.started_at)
            values["ok"] = int(run.ok)
            values["recording"] = None if run.recording is None else json.dumps(run.recording)
        return values

    def _prune_row(self, saved: str, kept: int) -> dict[str, Any]:
        before: Any = cutoff(now())
        at = before if self._postgres else sqlite_datetime(before)
        return {"saved": saved, "cutoff": at, "skip": kept - 1}

    def _audit_row(self, call: CallRecord, at: Any) -> dict[str, Any]:
        kind = call.error_kind
        detail: Any = {"ok": kind is None, "error": kind, "ms": round(call.duration_ms, 3)}
        if self._postgres:
            from psycopg.types.json import Json

            detail = Json(detail)
        else:
            detail = json.dumps(detail)
        return {
            "at": at,
            "tool": call.name,
            "version": call.version,
            "event": AuditEvent.CALLED.value,
            "actor": call.actor,
            "detail": detail,
            "caller": call.caller,
        }

    def _record_postgres(
        self,
        driver: Any,
        rows: list[dict[str, Any]],
        audit_rows: list[dict[str, Any]],
        runs: list[dict[str, Any]],
    ) -> None:
        # Pipelined: BEGIN, the statements and COMMIT go to the server in one round trip.
        with driver.pipeline(), driver.cursor() as cursor:
            # A call record may be lost in a server crash (the last ~0.6 s of them), never
            # torn; waiting for the WAL flush would cost more than the call itself. Versions,
            # approvals and pointer moves keep synchronous commits.
            cursor.execute("SET LOCAL synchronous_commit TO OFF")
            if rows:
                cursor.executemany(self._upsert, rows)
                cursor.executemany(self._audit, audit_rows)
            if runs:
                cursor.execute(self._run_insert, runs[0])
                cursor.execute(self._run_prune, runs[1])
            driver.commit()


def journal_dir() -> Path:
    """Where call journals live: ``$XDG_CACHE_HOME/toolfoundry/journal`` (or ``~/.cache``),
    or ``TOOLFOUNDRY_JOURNAL_DIR``."""
    chosen = os.environ.get("TOOLFOUNDRY_JOURNAL_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolfoundry" / "journal"


def _usage_sums(entries: Sequence[JournalEntry[CallRecord]]) -> list[dict[str, Any]]:
    """The usage counters of ``entries``, summed per (tool, counter)."""
    sums: dict[tuple[str, str], list[Any]] = {}
    for entry in entries:
        call = entry.call
        counters = ["calls", f"ms:{bucket(call.duration_ms)}"]
        if call.error_kind:
            counters.append(f"failed:{call.error_kind}")
        if call.caller_name:
            counters.append(f"by:{call.caller_name}")
        for counter in counters:
            found = sums.get((call.name, counter))
            if found is None:
                sums[(call.name, counter)] = [1, call.duration_ms, entry.at]
            else:
                found[0] += 1
                found[1] += call.duration_ms
                found[2] = max(found[2], entry.at)
    return [
        {"tool": tool, "counter": counter, "n": n, "ms": ms, "at": at}
        for (tool, counter), (n, ms, at) in sums.items()
    ]


def _record_fields(call: CallRecord) -> list[Any]:
    return [
        call.name,
        call.version,
        call.duration_ms,
        call.error_kind,
        call.actor,
        call.caller,
        call.caller_name,
    ]


def _record_of(fields: list[Any]) -> CallRecord:
    name, version, duration_ms, error_kind, actor, caller, caller_name = fields
    return CallRecord(name, version, float(duration_ms), error_kind, actor, caller, caller_name)


_JOURNAL_CODEC = Codec(_record_fields, _record_of)
