"""The call path's statements on the driver alone: they read and write what Core does.

``Foundry.open`` on a SQLite file at the current schema runs its calls on
``sqlite_file.Connections`` (no SQLAlchemy); every other registry runs them on the engine's
pool. Both are checked here against the Core queries of the same rows, on both backends.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.performance.interpreter import loaded_modules

from toolfoundry import Foundry
from toolfoundry.registry import (
    AuditEvent,
    NewVersion,
    Registry,
    RegistryError,
    VersionStatus,
    codecs,
    sqlite_file,
)
from toolfoundry.registry.calls import CallStatements
from toolfoundry.registry.engine import StoreError
from toolfoundry.registry.schema import versions
from toolfoundry.spec import Capabilities, StorageScope

CODE = "export function handler({ text }) { return text.trim() }"


def version(name: str = "trim", **kw: object) -> NewVersion:
    return NewVersion(
        name=name,
        code=CODE,
        description="Trims its text.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}},
        status=VersionStatus.ACTIVE,
        tests=[{"input": {"text": " a "}, "expected": "a"}],
        test_results=[{"name": "#0", "passed": True}],
        **kw,  # type: ignore[arg-type]
    )


@pytest.fixture
def on_file(reg: Registry, db_url: str) -> Iterator[CallStatements]:
    """The statements a foundry over this database runs its calls on."""
    path = sqlite_file.file_of(db_url)
    if path is None:  # PostgreSQL: the engine's pool
        yield reg.calls
        return
    connections = sqlite_file.Connections(path)
    yield CallStatements(connections)
    connections.close()


def test_the_record_lists_every_column_of_the_versions_table() -> None:
    assert tuple(c.name for c in versions.c) == codecs.VERSION_COLUMNS


def test_a_version_read_on_the_driver_equals_the_core_read(
    reg: Registry, on_file: CallStatements
) -> None:
    reg.add_version(version(returns={"type": "string"}, fixtures={"a": 1}))
    reg.add_version(version(capabilities=Capabilities(storage=StorageScope.TOOL)))
    for number in (1, 2):
        assert on_file.version("trim", number) == reg.get("trim", number)
    assert on_file.resolve("trim", None)[1:] == (2, VersionStatus.ACTIVE)
    with pytest.raises(RegistryError) as missing:
        on_file.version("trim", 3)
    assert missing.value.kind == "not_found"
    with pytest.raises(RegistryError):
        on_file.version("tr\udcffim", 1)  # a lone surrogate binds as U+FFFD: not found


def test_calls_recorded_on_the_driver_read_back_through_core(
    reg: Registry, on_file: CallStatements
) -> None:
    reg.add_version(version())
    on_file.record("trim", 1, 2.0, None, "agent")
    on_file.record("trim", 1, 40.0, "timeout", "agent")
    stats = reg.usage("trim")
    assert (stats.calls, stats.failures) == (2, {"timeout": 1})
    assert stats.last_used is not None
    assert stats.last_used.tzinfo is not None
    called = [e for e in reg.audit("trim") if e.event is AuditEvent.CALLED]
    assert [e.detail["error"] for e in called] == [None, "timeout"]
    assert called[0].at <= called[1].at


def test_the_change_mark_moves_with_every_commit_whoever_makes_it(
    reg: Registry, on_file: CallStatements
) -> None:
    """What code mode reads before trusting a callee it resolved earlier in an outer call."""
    if reg.engine.dialect.name == "postgresql":  # no such mark: every inner call reads
        assert on_file.change_mark() is None
        assert reg.calls.change_mark() is None
        return
    for statements in (on_file, reg.calls):
        first = statements.change_mark()
        assert first is not None
        assert statements.change_mark() == first  # nothing committed in between
        reg.add_version(version(f"t{id(statements)}"))  # another connection commits
        moved = statements.change_mark()
        assert moved is not None
        assert moved != first
        statements.record("trim", 1, 1.0, None, "agent")  # the statements' own commit
        assert statements.change_mark() != moved


def test_connections_are_lent_to_one_thread_at_a_time(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    Registry.open(url).add_version(version())
    path = sqlite_file.file_of(url)
    assert path is not None
    connections = sqlite_file.Connections(path)
    statements = CallStatements(connections)
    failures: list[BaseException] = []

    def calls() -> None:
        try:
            for _ in range(50):
                statements.resolve("trim", None)
                statements.record("trim", 1, 1.0, None, "agent")
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=calls) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    connections.close()
    registry = Registry.open(url)
    assert registry.usage("trim").calls == 200
    registry.close()


@pytest.mark.parametrize(
    ("url", "path"),
    [
        ("sqlite:////tmp/r.db", "/tmp/r.db"),
        ("sqlite:///r.db", "r.db"),
        ("sqlite:///a%20b.db", "a b.db"),
        ("sqlite://", None),
        ("sqlite:///:memory:", None),
        ("sqlite:///file:r.db?mode=ro&uri=true", None),
        ("sqlite+pysqlite:///r.db", None),
        ("postgresql://u@h/db", None),
    ],
)
def test_only_a_plain_file_url_is_read_on_the_driver(url: str, path: str | None) -> None:
    found = sqlite_file.file_of(url)
    assert (None if found is None else str(found)) == path


def test_a_foundry_over_a_current_file_opens_the_registry_only_when_needed(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    Registry.open(url).add_version(version())
    calls = (
        "from toolfoundry import Foundry\n"
        "fd = Foundry.open(URL)\n"
        "assert fd.call('trim', {'text': ' a '}).value == 'a'\n"
        "assert fd.call('nope', {}).error is not None\n"
    )
    # in a new interpreter: the calls needed no SQLAlchemy, reading usage opens the registry
    assert loaded_modules(calls, ["sqlalchemy"], url) == []
    usage = calls + "assert fd.usage('trim').calls == 2\n"  # both interpreters' trim, not nope
    assert loaded_modules(usage, ["sqlalchemy"], url) == ["sqlalchemy"]


def test_a_foundry_over_an_older_file_migrates_it_first(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    opened = "from toolfoundry import Foundry\nFoundry.open(URL)\n"
    # a new file: migrated by the registry (SQLAlchemy, Alembic) on open
    assert loaded_modules(opened, ["sqlalchemy", "alembic"], url) == ["sqlalchemy", "alembic"]
    with Foundry.open(url) as fd:
        fd.registry.add_version(version())
        assert fd.call("trim", {"text": " b "}).value == "b"


def test_a_missing_directory_is_refused_on_both_paths(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Foundry.open(f"sqlite:///{tmp_path / 'absent' / 'registry.db'}")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        Registry.open(f"sqlite:///{tmp_path / 'absent' / 'registry.db'}")


def test_a_file_that_is_not_a_database_is_a_store_error_on_both_paths(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"not a database, " * 64)
    url = f"sqlite:///{garbage}"
    for opening in (Foundry.open, Registry.open):
        with pytest.raises(StoreError, match="file is not a database"):
            opening(url)


def test_a_call_on_a_locked_file_fails_as_a_store_error(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    Registry.open(url).add_version(version())
    path = sqlite_file.file_of(url)
    assert path is not None
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the write lock
    connections = sqlite_file.Connections(path)
    with connections.borrow() as conn:
        conn.execute("PRAGMA busy_timeout = 50")
    statements = CallStatements(connections)
    with pytest.raises(StoreError, match="locked"):
        statements.record("trim", 1, 1.0, None, "agent")
    holder.execute("ROLLBACK")
    statements.record("trim", 1, 1.0, None, "agent")  # the connection is usable again
    connections.close()
