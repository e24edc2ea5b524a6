"""The reads the server and the agent need, as Registry methods (the import contract keeps
SQL inside the registry: tests/test_import_contracts.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.factories import NewVersionFactory

from toolfoundry.registry import (
    LastFailure,
    Registry,
    RunRow,
    UsageStats,
    VersionStatus,
)
from toolfoundry.registry.kept_runs import RUN_MAX_AGE
from toolfoundry.spec import Capabilities


def test_active_set_lists_current_active_versions_by_name(
    reg: Registry, new_version: NewVersionFactory
) -> None:
    assert reg.active_set() == []
    reg.add_version(new_version("zeta"))
    reg.add_version(new_version("alpha"))
    reg.add_version(new_version("alpha"))
    reg.add_version(new_version("waiting", VersionStatus.PENDING_APPROVAL))
    reg.add_version(new_version("off"))
    reg.set_enabled("off", False)
    assert reg.active_set() == [("alpha", 2), ("zeta", 1)]
    reg.rollback("alpha", 1)
    assert reg.active_set() == [("alpha", 1), ("zeta", 1)]


def test_a_pending_update_leaves_the_active_set_alone(
    reg: Registry, new_version: NewVersionFactory
) -> None:
    reg.add_version(new_version("fetcher"))
    reg.add_version(
        new_version(
            "fetcher",
            VersionStatus.PENDING_APPROVAL,
            capabilities=Capabilities(network=("api.example.com",)),
        )
    )
    assert reg.active_set() == [("fetcher", 1)]
    reg.decide("fetcher", 2, approve=True, by="alice", reason="ok")
    assert reg.active_set() == [("fetcher", 2)]


def test_usage_of_many_tools_matches_usage_of_each(
    reg: Registry, new_version: NewVersionFactory
) -> None:
    for name in ("called", "never", "failing"):
        reg.add_version(new_version(name))
    reg.record_call("called", 1, duration_ms=2.0, error_kind=None)
    reg.record_call("called", 1, duration_ms=40.0, error_kind=None)
    reg.record_call("failing", 1, duration_ms=1.0, error_kind="timeout")
    names = ["called", "never", "failing", "no_such_tool"]
    many = reg.usage_of(names)
    assert list(many) == names
    for name in names:
        assert many[name] == reg.usage(name)
    assert many["never"] == UsageStats("never", 0, {}, None, None, None, None)
    assert many["failing"].failures == {"timeout": 1}
    assert reg.usage_of([]) == {}


def test_last_failure_is_the_newest_failure_of_any_kind(
    reg: Registry, new_version: NewVersionFactory
) -> None:
    reg.add_version(new_version("flaky"))
    reg.add_version(new_version("fine"))
    assert reg.last_failures() == {}
    before = datetime.now(UTC) - timedelta(seconds=1)
    reg.record_call("flaky", 1, duration_ms=1.0, error_kind="timeout")
    reg.record_call("flaky", 1, duration_ms=1.0, error_kind="invalid_arguments")
    reg.record_call("fine", 1, duration_ms=1.0, error_kind=None)
    failures = reg.last_failures()
    assert set(failures) == {"flaky"}
    last = failures["flaky"]
    assert isinstance(last, LastFailure)
    assert last.kind == "invalid_arguments"
    assert last.at.tzinfo is not None
    assert last.at >= before
    assert last.to_dict() == {"kind": "invalid_arguments", "at": last.at.isoformat()}
    assert reg.last_failures("flaky") == {"flaky": last}
    assert reg.last_failures("fine") == {}
    assert reg.last_failures("no_such_tool") == {}


def _run(run_id: str, **kw: object) -> RunRow:
    fields: dict[str, object] = {
        "id": run_id,
        "task": "make a slug tool 😀 ü",
        "model": "replay:demo",
        "stop_reason": None,
        "started_at": datetime(2025, 1, 2, 3, 4, 5, tzinfo=UTC),
        "finished_at": None,
        "turns": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "transcript": {"id": run_id, "turns": []},
    }
    fields.update(kw)
    return RunRow(**fields)  # type: ignore[arg-type]


def test_agent_runs_are_saved_again_after_each_turn_and_read_back(reg: Registry) -> None:
    assert reg.run_transcript("nope") is None
    assert reg.recent_runs() == []
    reg.save_run(_run("r1"))
    finished = datetime(2025, 1, 2, 3, 5, 0, tzinfo=UTC)
    deep: dict[str, object] = {"leaf": 1}
    for _ in range(50):
        deep = {"d": deep}
    transcript = {"id": "r1", "turns": [{"text": "done", "nested": deep}], "n": 2**62}
    reg.save_run(
        _run(
            "r1",
            stop_reason="completed",
            finished_at=finished,
            turns=1,
            input_tokens=10,
            output_tokens=3,
            transcript=transcript,
        )
    )
    assert reg.run_transcript("r1") == transcript
    [summary] = reg.recent_runs()
    assert summary["id"] == "r1"
    assert summary["task"] == "make a slug tool 😀 ü"
    assert (summary["stop_reason"], summary["turns"], summary["output_tokens"]) == (
        "completed",
        1,
        3,
    )
    assert "transcript" not in summary


def test_agent_runs_past_the_age_or_the_count_kept_are_deleted(reg: Registry) -> None:
    """The one bound of kept runs (registry/kept_runs.py), as code-mode runs have it."""
    old = datetime.now(UTC) - RUN_MAX_AGE - timedelta(minutes=1)
    reg.save_run(_run("old", started_at=old))  # as a week-old process saved it
    assert reg.run_transcript("old") is not None
    for i in range(4):
        newer = datetime.now(UTC) - timedelta(seconds=10 - i)
        reg.save_run(_run(f"r{i}", started_at=newer), kept=3)
    assert reg.run_transcript("old") is None
    assert [r["id"] for r in reg.recent_runs()] == ["r3", "r2", "r1"]
    reg.save_run(_run("r1", turns=2), kept=1)  # a run saved again after a turn: no new run
    assert len(reg.recent_runs()) == 3


def test_recent_runs_are_newest_first_and_limited(reg: Registry) -> None:
    start = datetime.now(UTC) - timedelta(hours=1)  # runs of today: within the age kept
    for i in range(5):
        reg.save_run(_run(f"r{i}", started_at=start + timedelta(minutes=i)))
    assert [r["id"] for r in reg.recent_runs(3)] == ["r4", "r3", "r2"]


def test_an_overlong_model_name_is_stored_cut(reg: Registry) -> None:
    reg.save_run(_run("long", model="openai:" + "m" * 500))
    [summary] = reg.recent_runs()
    assert summary["model"] == ("openai:" + "m" * 500)[:200]
