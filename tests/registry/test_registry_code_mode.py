"""What code mode stores: inner calls audited with their caller and counted by caller, written
together in one transaction; runs kept bounded in count and age. On SQLite and PostgreSQL."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from sqlalchemy import text

from toolfoundry.registry import Registry
from toolfoundry.registry import kept_runs as runs
from toolfoundry.registry.calls import CallRecord
from toolfoundry.registry.code_runs import CodeRunRow
from toolfoundry.registry.codecs import now
from toolfoundry.registry.schema import code_runs

NAME = "a" * 64  # the longest name: its by:<caller> counter fits the column


def test_inner_calls_are_audited_with_their_caller_and_counted_by_caller(reg: Registry) -> None:
    reg.calls.record_all(
        [
            CallRecord("word_count", 1, 2.0, None, "agent", caller="run:abc", caller_name="run_js"),
            CallRecord(
                "word_count", 1, 3.0, "timeout", "agent", caller=f"{NAME}@2", caller_name=NAME
            ),
            CallRecord("word_count", 1, 1.0, None, "agent"),
        ]
    )
    rows = reg.audit("word_count")
    assert [(r.caller, r.detail["error"]) for r in rows] == [
        ("run:abc", None),
        (f"{NAME}@2", "timeout"),
        (None, None),
    ]
    assert rows[0].to_dict()["caller"] == "run:abc"
    assert "caller" not in rows[2].to_dict()
    usage = reg.usage("word_count")
    assert (usage.calls, usage.failures) == (3, {"timeout": 1})
    assert usage.callers == {NAME: 1, "run_js": 1}
    assert usage.to_dict()["callers"] == {NAME: 1, "run_js": 1}


def test_nothing_to_record_opens_no_transaction(reg: Registry) -> None:
    reg.calls.record_all([])
    assert reg.audit() == []


def test_the_audit_stays_append_only_with_its_new_column(reg: Registry) -> None:
    reg.calls.record_all([CallRecord("x", 1, 1.0, None, "agent", caller="run:1")])
    with reg.engine.connect() as conn:
        try:
            conn.execute(text("UPDATE tf_audit SET caller = 'forged'"))
            conn.commit()
            updated = True
        except Exception:
            updated = False
    assert not updated
    assert reg.audit("x")[0].caller == "run:1"


def row(run_id: str, **changes: object) -> CodeRunRow:
    base = CodeRunRow(
        id=run_id,
        started_at=now(),
        actor="agent",
        ok=True,
        error_kind=None,
        duration_ms=1.5,
        inner_calls=2,
        code="export default 1;",
        recording={"args": {}, "value": 1, "calls": [], "fetches": []},
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_a_run_is_kept_and_read_back(reg: Registry) -> None:
    reg.save_code_run(row("r1"))
    kept = reg.code_run("r1")
    assert kept is not None
    assert (kept.ok, kept.inner_calls, kept.recording) == (True, 2, row("r1").recording)
    assert kept.started_at.tzinfo is not None
    assert reg.code_run("missing") is None


def test_runs_past_the_age_or_the_count_kept_are_deleted(reg: Registry) -> None:
    old = now() - runs.RUN_MAX_AGE - timedelta(minutes=1)
    with reg.engine.begin() as conn:  # written straight, as a week-old process did
        conn.execute(code_runs.insert().values(**dataclasses.asdict(row("old", started_at=old))))
    assert reg.code_run("old") is not None
    for i in range(4):
        newer = row(f"r{i}", started_at=now() - timedelta(seconds=10 - i))
        reg.calls.record_all([], run=newer, kept=3)
    assert reg.code_run("old") is None
    assert [i for i in ("r0", "r1", "r2", "r3") if reg.code_run(i) is not None] == [
        "r1",
        "r2",
        "r3",
    ]


def test_a_run_and_its_inner_calls_are_written_together(reg: Registry) -> None:
    record = CallRecord("word_count", 1, 2.0, None, "agent", caller="run:r9", caller_name="run_js")
    reg.calls.record_all([record, record], run=row("r9", recording=None))
    kept = reg.code_run("r9")
    assert kept is not None
    assert kept.recording is None
    assert [a.caller for a in reg.audit("word_count")] == ["run:r9", "run:r9"]
