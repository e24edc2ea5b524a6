"""What a periodic review of the registry needs, in one report (``toolfoundry tools report``).

- unused: active tools not called for ``unused_days`` (a tool never called counts from the
  day it was created, so a tool made yesterday is not "unused");
- failures: tools whose calls failed, by failure rate (counters are cumulative: all time);
- capabilities: every tool whose current version holds network hosts, credentials (secrets),
  storage or system access;
- pending: versions waiting for a human, oldest first, with how long they have waited;
- retired tests: every ``tests_retired`` audit row, newest first, one entry per test.

Read with a few set queries (registry/review_facts.py), so it stays fast at 10 000 tools.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypedDict

from toolfoundry.registry.review_facts import ReviewFacts, ToolFacts
from toolfoundry.spec import Capabilities, VersionStatus
from toolfoundry.spec.capabilities import CapabilitiesJson

DEFAULT_UNUSED_DAYS = 30
PURE = Capabilities()  # compared with, not built per tool (Capabilities.is_pure builds one)


class UnusedToolJson(TypedDict):
    """An active tool not called for ``unused_days``: when it last was, and how long ago."""

    name: str
    version: int | None
    calls: int
    last_used: str | None
    idle_days: float


class FailingToolJson(TypedDict):
    """A tool whose calls failed: its counters, the failure rate and the failures by kind."""

    name: str
    version: int | None
    status: str | None
    calls: int
    failed: int
    failure_rate: float
    by_kind: dict[str, int]


class PendingVersionJson(TypedDict):
    """A version waiting for a human, and for how long (days, one decimal)."""

    name: str
    version: int
    author: str
    created_at: str
    waiting_days: float
    capabilities: CapabilitiesJson


class HeldCapabilitiesJson(TypedDict):
    """A tool whose current version holds a capability, and which ones."""

    name: str
    version: int | None
    status: str | None
    network: list[str]
    credentials: list[str]
    storage: str
    system: bool


class RetiredTestJson(TypedDict):
    """One test a version retired (a ``tests_retired`` audit row's entry), and why."""

    name: str
    version: int | None
    at: str
    actor: str
    test: str
    reason: str


class ReviewReportJson(TypedDict):
    """What ``toolfoundry tools report --json`` prints."""

    generated_at: str
    unused_days: int
    tools: int
    active: int
    unused: list[UnusedToolJson]
    failures: list[FailingToolJson]
    capabilities: list[HeldCapabilitiesJson]
    pending: list[PendingVersionJson]
    retired_tests: list[RetiredTestJson]


@dataclass(frozen=True)
class ReviewReport:
    """The report's sections, JSON-ready (see the module docstring)."""

    generated_at: datetime
    unused_days: int
    tools: int
    active: int
    unused: list[UnusedToolJson]
    failures: list[FailingToolJson]
    capabilities: list[HeldCapabilitiesJson]
    pending: list[PendingVersionJson]
    retired_tests: list[RetiredTestJson]

    def to_dict(self) -> ReviewReportJson:
        """What ``toolfoundry tools report --json`` prints."""
        return {
            "generated_at": self.generated_at.isoformat(),
            "unused_days": self.unused_days,
            "tools": self.tools,
            "active": self.active,
            "unused": self.unused,
            "failures": self.failures,
            "capabilities": self.capabilities,
            "pending": self.pending,
            "retired_tests": self.retired_tests,
        }


def build_report(
    facts: ReviewFacts, *, unused_days: int = DEFAULT_UNUSED_DAYS, now: datetime | None = None
) -> ReviewReport:
    """The report of ``facts`` as of ``now`` (default: the current time, UTC)."""
    now = now or datetime.now(UTC)
    cutoff = now - timedelta(days=unused_days)
    active = [t for t in facts.tools if t.status is VersionStatus.ACTIVE]
    unused = [_unused(t, now) for t in active if (t.last_used or t.created_at) < cutoff]
    failing = sorted(
        (t for t in facts.tools if t.failed),
        key=lambda t: (-t.failed / max(t.calls, 1), -t.failed, t.name),
    )
    return ReviewReport(
        generated_at=now,
        unused_days=unused_days,
        tools=len(facts.tools),
        active=len(active),
        unused=sorted(unused, key=lambda u: (-u["idle_days"], u["name"])),
        failures=[_failures(t) for t in failing],
        capabilities=[_held(t) for t in facts.tools if t.capabilities != PURE],
        pending=[
            {
                "name": p.name,
                "version": p.version,
                "author": p.author,
                "created_at": p.created_at.isoformat(),
                "waiting_days": _days(now - p.created_at),
                "capabilities": p.capabilities.to_dict(),
            }
            for p in facts.pending
        ],
        retired_tests=[
            {
                "name": e.tool,
                "version": e.version,
                "at": e.at.isoformat(),
                "actor": e.actor,
                "test": str(r.get("test")),
                "reason": str(r.get("reason")),
            }
            for e in reversed(facts.retirements)
            for r in e.detail.get("retired") or []
            if isinstance(r, dict)
        ],
    )


def _days(span: timedelta) -> float:
    return round(span.total_seconds() / 86400, 1)


def _unused(t: ToolFacts, now: datetime) -> UnusedToolJson:
    since = t.last_used or t.created_at
    return {
        "name": t.name,
        "version": t.version,
        "calls": t.calls,
        "last_used": t.last_used.isoformat() if t.last_used else None,
        "idle_days": _days(now - since),
    }


def _failures(t: ToolFacts) -> FailingToolJson:
    # a failure counted where no call is (a counter written by an older release) is 100 %
    rate = min(t.failed / t.calls, 1.0) if t.calls else 1.0
    return {
        "name": t.name,
        "version": t.version,
        "status": t.status.value if t.status else None,
        "calls": t.calls,
        "failed": t.failed,
        "failure_rate": round(rate, 4),
        "by_kind": dict(t.failures),
    }


def _held(t: ToolFacts) -> HeldCapabilitiesJson:
    caps = t.capabilities
    return {
        "name": t.name,
        "version": t.version,
        "status": t.status.value if t.status else None,
        "network": list(caps.network),
        "credentials": list(caps.credentials),
        "storage": caps.storage.value,
        "system": caps.system,
    }
