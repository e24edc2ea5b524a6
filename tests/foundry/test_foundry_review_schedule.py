"""The library watched without a person remembering to (foundry/review_schedule.py): reviews at
start, on the schedule and after a runtime change, stored in the registry on both stores,
claimed once by servers sharing a database, exported as metrics; a tool broken by the runtime
of today is flagged, not disabled."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, update
from tests.shared_drafts import WORD_COUNT

from toolfoundry import Foundry
from toolfoundry.config import ReviewSettings, parse_config
from toolfoundry.foundry import telemetry
from toolfoundry.foundry.library_review import review_library
from toolfoundry.foundry.review_schedule import ReviewSchedule, review_due
from toolfoundry.foundry.runtime_identity import RuntimeIdentity
from toolfoundry.registry import AuditEvent, VersionStatus
from toolfoundry.registry.reviews import ReviewRow
from toolfoundry.registry.schema import reviews

# Passes under the default 64 MiB a JS tool may allocate; fails under 8 (memory_limit): a
# change of the runtime's limits that breaks a tool that passed when it was made.
HOG: dict[str, Any] = {
    "name": "hog",
    "description": "Allocate a buffer of n MiB and report its size in bytes.",
    "parameters": {
        "type": "object",
        "properties": {"n": {"type": "integer", "description": "MiB"}},
        "required": ["n"],
    },
    "code": (
        "export function handler({ n }) {\n"
        "  const b = new Uint8Array(n * 1024 * 1024); b[b.length - 1] = 1; return b.length;\n"
        "}\n"
    ),
    "tests": [{"name": "24", "input": {"n": 24}, "expected": 25165824}],
}


def config(**review: Any) -> Any:
    return parse_config({"review": review})


def wait_for(lines: list[str], count: int, timeout: float = 60) -> list[str]:
    deadline = time.monotonic() + timeout
    while len(lines) < count:
        assert time.monotonic() < deadline, f"only {lines}"
        time.sleep(0.05)
    return lines


@pytest.fixture
def running() -> Iterator[Callable[[Foundry], tuple[ReviewSchedule, list[str]]]]:
    started: list[ReviewSchedule] = []

    def start(fd: Foundry) -> tuple[ReviewSchedule, list[str]]:
        lines: list[str] = []
        schedule = ReviewSchedule(fd, lines.append).start()
        schedule.check_now()  # not after the start-up delay
        started.append(schedule)
        return schedule, lines

    yield start
    for schedule in started:
        schedule.stop()


def row_count(fd: Foundry) -> int:
    with fd.registry.engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(reviews)).scalar_one())


def test_reviews_at_start_then_on_schedule_and_flags_a_broken_tool(
    db_url: str, running: Any
) -> None:
    fd = Foundry.open(db_url, config=config(every="1s"))
    assert fd.create_tool(WORD_COUNT).status == "active"
    assert fd.create_tool(HOG).status == "active"
    schedule, lines = running(fd)
    wait_for(lines, 1)
    assert lines[0].startswith("library reviewed (first review): 2 suite(s) run; 0 failing")
    first = fd.registry.last_review()
    assert first is not None
    assert first.summary is not None
    assert (first.trigger, first.summary["passed"], first.summary["failing"]) == ("first", 2, 0)
    assert first.runtime == RuntimeIdentity.current().to_dict()

    # the runtime of today: JS tools may allocate 8 MiB, and hog's own test no longer passes
    fd.reconfigure(parse_config({"review": {"every": "1s"}, "limits": {"memory_mib": 8}}))
    wait_for(lines, 2)
    assert lines[1].startswith("library reviewed (scheduled): 2 suite(s) run; 1 failing (hog)")
    last = fd.registry.last_review()
    assert last is not None
    assert last.trigger == "schedule"
    [failing] = last.findings["failing"]  # type: ignore[index]
    assert (failing["name"], failing["failed"]) == ("hog", ["24"])
    assert failing["message"] == "1 of 1 test(s) failed: 24"
    [reason] = failing["reasons"]
    assert reason.startswith("24: ")
    assert "memory" in reason
    # flagged, not disabled: still active, callable (under the old limits), no audit row
    assert fd.show("hog").status is VersionStatus.ACTIVE
    assert AuditEvent.DISABLED not in [e.event for e in fd.audit("hog")]
    schedule.stop()
    fd.close()


def test_a_changed_runtime_is_reviewed_at_start_and_only_then(db_url: str, running: Any) -> None:
    fd = Foundry.open(db_url, config=config(every="1d"))  # the schedule is not what triggers
    assert fd.create_tool(WORD_COUNT).status == "active"
    schedule, lines = running(fd)
    wait_for(lines, 1)
    schedule.stop()
    assert row_count(fd) == 1

    again, lines = running(fd)  # same runtime, a day not passed: nothing to do
    time.sleep(1.5)
    again.stop()
    assert lines == []
    assert row_count(fd) == 1

    # a runtime change, simulated: the stored review ran under another wasmtime and guest
    stored = fd.registry.last_review()
    assert stored is not None
    before = {**stored.runtime, "wasmtime": "0.0.1", "guest": "0" * 16}
    with fd.registry.engine.begin() as conn:
        conn.execute(
            update(reviews)
            .where(reviews.c.id == stored.id)
            .values(runtime=before, fingerprint="f" * 64)
        )
    now = RuntimeIdentity.current()
    third, lines = running(fd)
    wait_for(lines, 1)
    third.stop()
    assert f"runtime changed: guest {'0' * 16} -> {now.guest}" in lines[0]
    assert f"wasmtime 0.0.1 -> {now.wasmtime}" in lines[0]
    last = fd.registry.last_review()
    assert last is not None
    assert (last.trigger, last.fingerprint) == ("runtime_changed", now.fingerprint)
    assert last.findings["runtime_changes"] == [  # type: ignore[index]
        f"guest {'0' * 16} -> {now.guest}",
        f"wasmtime 0.0.1 -> {now.wasmtime}",
    ]
    fd.close()


def test_servers_sharing_a_database_run_a_due_review_once(db_url: str, running: Any) -> None:
    fleet = [Foundry.open(db_url, config=config(every="1d")) for _ in range(3)]
    assert fleet[0].create_tool(WORD_COUNT).status == "active"
    said = [running(fd)[1] for fd in fleet]
    deadline = time.monotonic() + 60
    while not any(said):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(1.5)  # the others looked meanwhile
    assert sum(len(lines) for lines in said) == 1
    assert row_count(fleet[0]) == 1
    for fd in fleet:
        fd.close()


def test_a_tool_whose_tests_call_a_pure_tool_passes_the_review(db_url: str) -> None:
    """Its suite reaches its callee for real, as at create time and in ``tools verify``."""
    fd = Foundry.open(db_url)
    assert fd.create_tool(WORD_COUNT).status == "active"
    twice = {
        "name": "words_twice",
        "description": "Twice the number of words of a text, counted by word_count.",
        "parameters": WORD_COUNT["parameters"],
        "code": (
            "export async function handler({ text }) {\n"
            "  return 2 * (await tools.word_count({ text }));\n"
            "}\n"
        ),
        "tests": [{"name": "three", "input": {"text": "a b c"}, "expected": 6}],
    }
    made = fd.create_tool(twice)
    assert made.status == "active", made.step.message
    found = review_library(fd, ReviewSettings())
    assert found.findings["failing"] == []
    assert (found.verified, found.passed) == (2, 2)
    fd.close()


def test_off_runs_no_review(tmp_path: Any, running: Any) -> None:
    fd = Foundry.open(f"sqlite:///{tmp_path / 'r.db'}", config=config(every="off"))
    _schedule, lines = running(fd)
    time.sleep(1.5)
    assert lines == []
    assert fd.registry.last_review() is None
    fd.close()


def _row(started: datetime, *, finished: bool = True, fingerprint: str = "a") -> ReviewRow:
    return ReviewRow(
        1, started, started if finished else None, "first", "h:1", fingerprint, {}, None, None
    )


def test_when_a_review_is_due() -> None:
    now = datetime(2026, 12, 5, 12, tzinfo=UTC)
    daily = ReviewSettings(every_s=86400)

    def due(last: ReviewRow | None, *, at_start: bool = False, **kw: Any) -> str | None:
        settings = kw.get("settings", daily)
        return review_due(last, now, fingerprint="a", settings=settings, at_start=at_start)

    assert due(None) == "first"
    assert due(_row(now - timedelta(hours=2))) is None
    assert due(_row(now - timedelta(days=1))) == "schedule"
    assert due(_row(now - timedelta(hours=2), fingerprint="b"), at_start=True) == "runtime_changed"
    assert due(_row(now - timedelta(hours=2), fingerprint="b")) is None  # only at start
    # a review under way elsewhere is left alone, unless its process is long gone
    assert due(_row(now - timedelta(minutes=5), finished=False), at_start=True) is None
    assert due(_row(now - timedelta(days=2), finished=False)) == "schedule"
    assert due(None, settings=ReviewSettings(every_s=None)) is None


def test_the_last_review_is_exported_as_metrics(db_url: str, running: Any) -> None:
    pytest.importorskip("opentelemetry.sdk")
    from tests.integrations.recording import Recorded

    recorded = Recorded()
    telemetry.configure(meter_provider=recorded.meter_provider)
    try:
        fd = Foundry.open(db_url, config=config(every="1d"))
        assert fd.create_tool(WORD_COUNT).status == "active"
        assert fd.create_tool(HOG).status == "active"
        _schedule, lines = running(fd)
        wait_for(lines, 1)
        counts = {
            a["toolfoundry.review.finding"]: v
            for a, v in recorded.points("toolfoundry.review.tools")
        }
        assert counts["verified"] == 2
        assert counts["passed"] == 2
        assert counts["failing"] == 0
        assert "duration_s" not in counts
        [(_, finished)] = recorded.points("toolfoundry.review.finished")
        last = fd.registry.last_review()
        assert last is not None
        assert last.finished_at is not None
        assert finished == pytest.approx(last.finished_at.timestamp())
        fd.close()
    finally:
        telemetry.configure()


def test_review_settings_are_read_and_checked() -> None:
    assert config().review == ReviewSettings()
    assert config(every="6h", unused_days=7, tool_budget_s=5).review == ReviewSettings(
        every_s=21600.0, unused_days=7, tool_budget_s=5.0
    )
    assert config(every="daily").review.every_s == 86400
    assert config(every=90).review.every_s == 90
    assert config(every="off").review.every_s is None
    with pytest.raises(ValueError) as raised:
        config(every="soon", unused_days=0, tool_budget_s=float("inf"), often=True)
    message = str(raised.value)
    for part in (
        "review.every must be like",
        "review.unused_days",
        "review.tool_budget_s",
        "unknown key review.often",
    ):
        assert part in message
    with pytest.raises(ValueError, match=r"review\.every"):
        config(every="500d")


def test_a_review_cut_short_does_not_hold_the_next_one_back(db_url: str, running: Any) -> None:
    """A server stopping mid-review forgets its claim: the next start reviews at once (a claim
    left behind would pass for a review under way elsewhere for an hour)."""
    fd = Foundry.open(db_url, config=config(every="1d"))
    for n in range(6):  # enough suites that the stop lands mid-review; each its own answer
        code = HOG["code"].replace("return b.length;", f"return b.length + {n};")
        test = {**HOG["tests"][0], "expected": 25165824 + n}
        made = fd.create_tool({**HOG, "name": f"hog{n}", "code": code, "tests": [test]})
        assert made.status == "active", made.step.message
    schedule = ReviewSchedule(fd).start()
    schedule.check_now()
    deadline = time.monotonic() + 60
    while fd.registry.last_review(finished=False) is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    schedule.stop()  # between two tools
    if fd.registry.last_review() is None:  # it was cut short: nothing of it is left
        assert fd.registry.last_review(finished=False) is None
    _again, lines = running(fd)
    wait_for(lines, 1)
    assert lines[0].startswith("library reviewed (")
    fd.close()
