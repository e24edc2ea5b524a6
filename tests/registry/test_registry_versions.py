"""Versions, pointer, approvals, lifecycle, audit, usage, search, storage on real databases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from toolfoundry.registry import (
    AuditEvent,
    NewVersion,
    Registry,
    RegistryError,
    VersionStatus,
    code_sha256,
)
from toolfoundry.registry.engine import SchemaMismatch
from toolfoundry.registry.sqlite_file import SCHEMA_HEAD
from toolfoundry.spec import Capabilities
from toolfoundry.spec.local_storage import StorageQuota

ACTIVE, PENDING = VersionStatus.ACTIVE, VersionStatus.PENDING_APPROVAL


def draft(
    name: str = "slugify", code: str = "v1", status: VersionStatus = ACTIVE, **kw: Any
) -> NewVersion:
    params = kw.pop(
        "parameters",
        {"type": "object", "properties": {"text": {"type": "string", "description": "the title"}}},
    )
    return NewVersion(
        name=name,
        code=f"export function handler(args) {{ return {code!r}; }}",
        description=kw.pop("description", "Turn a title into a URL slug"),
        parameters=params,
        status=status,
        test_results=[{"name": "#0", "passed": True}],
        **kw,
    )


def test_versions_are_numbered_and_active_ones_become_current(reg: Registry) -> None:
    v1 = reg.add_version(draft(code="a"))
    v2 = reg.add_version(draft(code="b"))
    assert (v1.version, v2.version) == (1, 2)
    current = reg.get("slugify")
    assert current.version == 2
    assert current.current
    assert current.status is ACTIVE
    assert [v.version for v in reg.history("slugify")] == [1, 2]
    assert reg.get("slugify", 1).code.endswith("return 'a'; }")
    assert reg.get("slugify", 1).sha256 == code_sha256(reg.get("slugify", 1).code)


def test_pending_update_never_takes_the_working_tool_away(reg: Registry) -> None:
    reg.add_version(draft(code="a"))
    pending = reg.add_version(
        draft(code="b", status=PENDING, capabilities=Capabilities(network=("x.org",)))
    )
    assert pending.status is PENDING
    assert not pending.current
    assert reg.get("slugify").version == 1
    assert [p.version for p in reg.pending()] == [2]


def test_first_version_pending_is_current_but_not_active(reg: Registry) -> None:
    reg.add_version(draft(status=PENDING))
    assert reg.get("slugify").status is PENDING
    assert reg.current_versions(status=ACTIVE) == []


def test_approval_activates_and_binds_code_and_capabilities(reg: Registry) -> None:
    reg.add_version(draft(code="a"))
    caps = Capabilities(network=("api.example.com",))
    reg.add_version(draft(code="b", status=PENDING, capabilities=caps))
    approved = reg.decide("slugify", None, approve=True, by="alice", reason="reviewed")
    assert approved.version == 2
    assert approved.status is ACTIVE
    assert approved.current
    (approval,) = reg.approvals("slugify")
    assert approval.approver == "alice"
    assert approval.decision == "approved"
    assert approval.code_sha256 == approved.sha256
    assert approval.capability_hash == approved.capability_hash
    with pytest.raises(RegistryError) as again:
        reg.decide("slugify", 2, approve=True, by="alice", reason="twice")
    assert again.value.kind == "not_pending"


def test_reject_keeps_current_and_is_recorded(reg: Registry) -> None:
    reg.add_version(draft(code="a"))
    reg.add_version(draft(code="b", status=PENDING))
    rejected = reg.decide("slugify", 2, approve=False, by="bob", reason="phones home")
    assert rejected.status is VersionStatus.REJECTED
    assert reg.get("slugify").version == 1
    assert reg.approvals("slugify")[0].reason == "phones home"
    assert reg.pending() == []


def test_rollback_moves_pointer_and_deletes_nothing(reg: Registry) -> None:
    for code in "abc":
        reg.add_version(draft(code=code))
    back = reg.rollback("slugify", 1, by="carol")
    assert back.version == 1
    assert reg.get("slugify").version == 1
    assert len(reg.history("slugify")) == 3
    event = reg.audit("slugify")[-1]
    assert event.event is AuditEvent.ROLLED_BACK
    assert event.detail == {"from": 3, "to": 1}


def test_rollback_refuses_versions_that_are_not_active(reg: Registry) -> None:
    reg.add_version(draft(code="a"))
    reg.add_version(draft(code="b", status=PENDING))
    with pytest.raises(RegistryError) as err:
        reg.rollback("slugify", 2)
    assert err.value.kind == "not_active"
    with pytest.raises(RegistryError) as missing:
        reg.rollback("slugify", 9)
    assert missing.value.kind == "not_found"


def test_disable_and_enable(reg: Registry) -> None:
    reg.add_version(draft())
    assert reg.set_enabled("slugify", False).status is VersionStatus.DISABLED
    assert reg.current_versions(status=ACTIVE) == []
    assert reg.search("slug") == []
    with pytest.raises(RegistryError):
        reg.set_enabled("slugify", False)
    assert reg.set_enabled("slugify", True).status is ACTIVE
    assert [h.name for h in reg.search("slug")] == ["slugify"]
    events = [e.event for e in reg.audit("slugify")]
    assert events[-2:] == [AuditEvent.DISABLED, AuditEvent.ENABLED]


def test_unknown_tools_are_not_found(reg: Registry) -> None:
    for op in (
        lambda: reg.get("nope"),
        lambda: reg.history("nope"),
        lambda: reg.rollback("nope", 1),
    ):
        with pytest.raises(RegistryError) as err:
            op()
        assert err.value.kind == "not_found"


def test_audit_is_append_only_at_the_database_level(reg: Registry) -> None:
    reg.add_version(draft())
    events = [e.event for e in reg.audit("slugify")]
    assert events == [AuditEvent.CREATED, AuditEvent.TESTED, AuditEvent.ACTIVATED]
    for sql in ("UPDATE tf_audit SET actor = 'mallory'", "DELETE FROM tf_audit"):
        with pytest.raises(DBAPIError, match="append-only"), reg.engine.begin() as conn:
            conn.execute(text(sql))
    assert len(reg.audit("slugify")) == 3


def test_usage_counts_failures_and_percentiles(reg: Registry) -> None:
    reg.add_version(draft())
    for ms in [1.0] * 90 + [50.0] * 10:
        reg.record_call("slugify", 1, duration_ms=ms, error_kind=None)
    reg.record_call("slugify", 1, duration_ms=2.0, error_kind="timeout")
    stats = reg.usage("slugify")
    assert stats.calls == 101
    assert stats.failures == {"timeout": 1}
    assert stats.p50_ms is not None
    assert stats.p95_ms is not None
    assert 1.0 <= stats.p50_ms <= 1.2  # within one histogram bucket (+19 %)
    assert 50.0 <= stats.p95_ms <= 60.0
    assert stats.last_used is not None
    assert sum(e.event is AuditEvent.CALLED for e in reg.audit("slugify")) == 101
    assert reg.usage("unused").calls == 0


def test_usage_survives_reopening(db_url: str) -> None:
    first = Registry.open(db_url)
    first.add_version(draft())
    first.record_call("slugify", 1, duration_ms=3.0, error_kind=None)
    first.close()
    second = Registry.open(db_url)
    assert second.usage("slugify").calls == 1
    assert second.get("slugify").version == 1
    second.close()


def test_search_ranks_name_over_description_and_params(reg: Registry) -> None:
    reg.add_version(draft("slugify", description="Make a URL slug from a title"))
    reg.add_version(draft("word_count", description="Count words in text, e.g. for a slug budget"))
    reg.add_version(
        draft(
            "csv_to_json",
            description="Convert CSV rows to JSON objects",
            parameters={
                "type": "object",
                "properties": {"csv": {"type": "string", "description": "raw CSV"}},
            },
        )
    )
    reg.add_version(draft("weather", description="Current weather for a city", status=PENDING))
    assert [h.name for h in reg.search("slugify", 5)] == ["slugify"]
    assert next(h.name for h in reg.search("url slug", 5)) == "slugify"
    assert [h.name for h in reg.search("convert csv into json", 1)] == ["csv_to_json"]
    assert reg.search("weather") == []
    assert [h.name for h in reg.search("weather", active_only=False)] == ["weather"]
    assert reg.search("!!!") == []
    assert reg.search("zebra") == []
    scores = [h.score for h in reg.search("slug", 5)]
    assert scores == sorted(scores, reverse=True)
    assert len(scores) == 2


def test_search_follows_the_pointer(reg: Registry) -> None:
    reg.add_version(draft(description="Make a URL slug"))
    reg.add_version(draft(code="b", description="Shorten links"))
    assert [h.name for h in reg.search("shorten links")] == ["slugify"]
    assert reg.search("slug url") == []
    reg.rollback("slugify", 1)
    assert [h.version for h in reg.search("slug url")] == [1]


def test_duplicate_detection_by_code_hash(reg: Registry) -> None:
    first = reg.add_version(draft("slugify", code="same"))
    found = reg.find_active_by_sha(first.sha256)
    assert found is not None
    assert found.name == "slugify"
    assert reg.find_active_by_sha(first.sha256, exclude="slugify") is None
    assert reg.find_active_by_sha("0" * 64) is None


def test_storage_backend(reg: Registry) -> None:
    store = reg.storage
    quota = StorageQuota()
    assert store.set_item("tool:a", "b", "2", quota) is None
    store.set_item("tool:a", "a", "1", quota)
    store.set_item("tool:a", "a", "11", quota)
    store.set_item("tool:other", "a", "x", quota)
    assert store.get_item("tool:a", "a") == "11"
    assert store.get_item("tool:a", "zz") is None
    assert store.keys("tool:a") == ["a", "b"]
    assert store.usage("tool:a") == (2, 5)  # "a"+"11" and "b"+"2"
    store.remove_item("tool:a", "a")
    assert store.keys("tool:a") == ["b"]
    store.clear("tool:a")
    assert store.keys("tool:a") == []
    assert store.keys("tool:other") == ["a"]
    store.set_item("tool:u", "é", "€", quota)
    assert store.usage("tool:u") == (1, 5)  # UTF-8 bytes, counted by the database


def test_storage_backend_checks_the_quota_in_its_write(reg: Registry) -> None:
    store = reg.storage
    tight = StorageQuota(max_keys=2, max_total_bytes=10)
    assert store.set_item("ns", "a", "1234", tight) is None
    assert store.set_item("ns", "b", "1234", tight) is None
    refused = store.set_item("ns", "c", "", tight)
    assert refused is not None
    assert (refused.kind, refused.message) == ("quota", "3 keys; the limit is 2")
    refused = store.set_item("ns", "a", "12345", tight)  # 11 bytes with b's 5
    assert refused is not None
    assert "11 bytes" in refused.message
    assert store.set_item("ns", "a", "123", tight) is None  # a shrinking rewrite fits
    assert store.usage("ns") == (2, 9)
    assert store.get_item("ns", "c") is None


def test_schema_head_matches_the_migration_scripts() -> None:
    config = Config()
    package = Path(str(__import__("toolfoundry.registry", fromlist=["x"]).__file__)).parent
    config.set_main_option("script_location", str(package / "migrations"))
    assert ScriptDirectory.from_config(config).get_current_head() == SCHEMA_HEAD


def test_a_database_from_a_newer_toolfoundry_is_refused_by_name(db_url: str) -> None:
    reg = Registry.open(db_url)
    with reg.engine.begin() as conn:
        conn.execute(text("UPDATE tf_alembic_version SET version_num = '9999'"))
    reg.close()
    with pytest.raises(SchemaMismatch, match=r"revision '9999'.*newer version"):
        Registry.open(db_url)


def test_sqlite_runs_in_wal_mode(tmp_path: Path) -> None:
    reg = Registry.open(f"sqlite:///{tmp_path / 'r.db'}")
    with reg.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert (conn.exec_driver_sql("PRAGMA busy_timeout").scalar() or 0) >= 1000
    reg.close()


def test_search_widens_to_any_word_when_no_tool_has_them_all(reg: Registry) -> None:
    reg.add_version(draft("csv_to_json", description="Convert CSV rows to JSON objects"))
    reg.add_version(draft("slugify", description="Make a URL slug from a title"))
    hits = reg.search("convert csv spreadsheet", 5)
    assert [h.name for h in hits] == ["csv_to_json"]
    # stopwords alone: SQLite still searches them ("to" is in the name csv_to_json, "the"
    # in a parameter description); PostgreSQL's english configuration drops them. Each tool
    # has some of three such words: below the relevance floor, so they are offered as weak.
    expected = [] if reg.engine.dialect.name == "postgresql" else ["csv_to_json", "slugify"]
    assert sorted(h.name for h in reg.search("the to for", 5, floor=0.0)) == expected
    assert sorted(h.name for h in reg.search("the to for", 5)) == expected
    assert all(h.strength == "weak" for h in reg.search("the to for", 5))


def test_widened_search_keeps_to_the_rarest_words_within_budget(
    reg: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolfoundry.registry import search as fulltext

    reg.add_version(draft("a_tool", description="Convert currency amounts"))
    reg.add_version(draft("b_tool", description="Convert temperatures"))
    reg.add_version(draft("c_tool", description="Parse invoices"))
    # no tool has all three words; "convert" is common, "invoices" rare (floor 0: every
    # match, the relevance floor is tested on its own)
    assert {h.name for h in reg.search("convert invoices zebra", 5, floor=0.0)} == {
        "a_tool",
        "b_tool",
        "c_tool",
    }
    monkeypatch.setattr(fulltext, "WIDEN_BUDGET", 1)
    assert [h.name for h in reg.search("convert invoices zebra", 5, floor=0.0)] == ["c_tool"]


def test_migrated_schema_matches_the_table_definitions(reg: Registry) -> None:
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from toolfoundry.registry.schema import metadata

    with reg.engine.connect() as conn:
        diffs = compare_metadata(MigrationContext.configure(conn), metadata)
    # only this area's tables (other areas add their own through the same migrations); the
    # search index is defined in SQL by the migrations, outside the Core metadata
    ours = {t.name for t in metadata.sorted_tables}
    diffs = [
        d
        for d in diffs
        if not (d[0] == "remove_table" and d[1].name not in ours)
        and not (d[0] == "remove_index" and d[1].table.name not in ours)
    ]
    assert diffs == []


def test_upgrade_from_the_first_schema_keeps_tools_searchable(db_url: str) -> None:
    from alembic import command
    from alembic.config import Config as AlembicConfig

    from toolfoundry.registry.engine import create_registry_engine

    engine = create_registry_engine(db_url)
    config = AlembicConfig()
    package = Path(str(__import__("toolfoundry.registry", fromlist=["x"]).__file__)).parent
    config.set_main_option("script_location", str(package / "migrations"))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0001")
        conn.execute(
            text(
                "INSERT INTO tf_tools (id, name, current_version, current_status, created_at, "
                "updated_at) VALUES (1, 'old_tool', 1, 'active', :at, :at)"
            ),
            {"at": "2026-01-01 00:00:00"},
        )
        if conn.dialect.name == "postgresql":
            conn.execute(
                text(
                    "INSERT INTO tf_search (tool_id, document) "
                    "VALUES (1, to_tsvector('english', 'old tool parses invoices'))"
                )
            )
        else:
            conn.execute(
                text(
                    "INSERT INTO tf_search (rowid, name, description, params) "
                    "VALUES (1, 'old tool', 'parses invoices', '')"
                )
            )
    engine.dispose()
    reg = Registry.open(db_url)  # migrates 0001 -> head on open
    with reg.engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM tf_alembic_version")).scalar() == (
            SCHEMA_HEAD
        )
        status = "tool_id" if conn.dialect.name == "postgresql" else "rowid"
        row = conn.execute(text(f"SELECT status FROM tf_search WHERE {status} = 1")).scalar()
    assert row == "active"
    reg.close()
