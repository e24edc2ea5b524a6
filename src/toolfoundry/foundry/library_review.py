"""One review of the whole library, as ``serve`` runs it by itself (foundry/review_schedule.py).

What ``toolfoundry tools verify`` and ``tools report`` tell a person who thinks of running them,
gathered in one record: the active tools whose own accumulated suites fail under the runtime
and configuration of today, or whose callees changed under them (a registry tool that cannot be
called; an upstream server's tool whose input schema changed, or that vanished) (``failing``:
flagged for a person, never disabled), those whose
suite ran past the per-tool budget (``unfinished``) or that the background review does not run
(``not_run``: Python-tier tools, whose test runs would take the Python tier's room from calls),
the active tools nobody called for ``[review] unused_days``, every tool holding network hosts,
credentials, storage or system access, and the versions waiting for a person (with what holds
their approval back, registry/holds.py).

The review reads and runs tests; it writes nothing but its own record, and changes no tool.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from toolfoundry.config import ReviewSettings
from toolfoundry.foundry import Foundry
from toolfoundry.foundry.report import HeldCapabilitiesJson, PendingVersionJson, UnusedToolJson
from toolfoundry.registry.records import ApprovalHoldJson

MESSAGE_CHARS = 500  # a failing test's message kept in the record (reasons can be long)


class SuiteEntryJson(TypedDict):
    """A tool whose suite failed, ran past its budget, or was not run; with why."""

    name: str
    version: int
    language: str
    message: str
    failed: NotRequired[list[str]]  # failing only: the tests that failed
    reasons: NotRequired[list[str]]  # failing only: why, at most ten


class WaitingVersionJson(PendingVersionJson):
    """A version waiting for a person, with what holds its approval back (or null)."""

    approval_hold: ApprovalHoldJson | None


class LibraryFindingsJson(TypedDict):
    """A review's findings by kind (see the module docstring), in this order."""

    failing: list[SuiteEntryJson]
    unfinished: list[SuiteEntryJson]
    not_run: list[SuiteEntryJson]
    unused: list[UnusedToolJson]
    capabilities: list[HeldCapabilitiesJson]
    waiting: list[WaitingVersionJson]


class LibraryReviewSummaryJson(TypedDict):
    """A review's counts: suites verified and passed, each finding's entries, seconds."""

    verified: int
    passed: int
    failing: int
    unfinished: int
    not_run: int
    unused: int
    capabilities: int
    waiting: int
    duration_s: float


def no_findings() -> LibraryFindingsJson:
    """Findings of a review that found nothing."""
    return {
        "failing": [],
        "unfinished": [],
        "not_run": [],
        "unused": [],
        "capabilities": [],
        "waiting": [],
    }


class ReviewStopped(Exception):
    """The review was asked to stop (the server is shutting down) before it ended."""


@dataclass(frozen=True)
class LibraryReview:
    """What one review found: ``findings`` by kind (see the module docstring), JSON-ready."""

    verified: int
    passed: int
    duration_s: float
    findings: LibraryFindingsJson = field(default_factory=no_findings)

    @property
    def summary(self) -> LibraryReviewSummaryJson:
        """Counts: tools verified and passed, each finding's number of entries, seconds."""
        f = self.findings
        return {
            "verified": self.verified,
            "passed": self.passed,
            "failing": len(f["failing"]),
            "unfinished": len(f["unfinished"]),
            "not_run": len(f["not_run"]),
            "unused": len(f["unused"]),
            "capabilities": len(f["capabilities"]),
            "waiting": len(f["waiting"]),
            "duration_s": round(self.duration_s, 3),
        }


def review_library(
    fd: Foundry, settings: ReviewSettings, *, stop: Callable[[], bool] = lambda: False
) -> LibraryReview:
    """Review ``fd``'s library under ``settings``: each active JavaScript tool's suite in the
    calling thread, one tool at a time, each bounded by ``settings.tool_budget_s``; then the
    report's sections. ``stop`` is asked between tools.

    Raises:
        ReviewStopped: ``stop()`` became true.
    """
    from toolfoundry.foundry.verify import (  # the forge's test runner: loaded when one runs
        FAILED,
        PASSED,
        UNAVAILABLE,
        UNFINISHED,
    )

    started = time.monotonic()
    # as `tools verify` runs them, but not the Python tier: see the module docstring
    verifier = fd.verifier(python=False, tool_budget_s=settings.tool_budget_s)
    failing: list[SuiteEntryJson] = []
    unfinished: list[SuiteEntryJson] = []
    not_run: list[SuiteEntryJson] = []
    verified = passed = 0
    for result in verifier.each(at_once=1):
        if stop():
            raise ReviewStopped
        entry: SuiteEntryJson = {
            "name": result.name,
            "version": result.version,
            "language": result.language,
            "message": result.message[:MESSAGE_CHARS],
        }
        if result.outcome == PASSED:
            verified, passed = verified + 1, passed + 1
        elif result.outcome == FAILED:
            verified += 1
            reasons = [
                f"{r.name}: {r.reason}"[:MESSAGE_CHARS] for r in result.results if not r.passed
            ]
            # what fails it besides its tests: a fixture URL [fetch] refuses; a tool it calls
            # that cannot be called, or an upstream tool changed or vanished since its tests
            reasons += [
                f"{p.path}: {p.message}"[:MESSAGE_CHARS]
                for p in (*result.unreachable, *result.callees)
            ]
            failing.append({**entry, "failed": list(result.failed), "reasons": reasons[:10]})
        elif result.outcome == UNFINISHED:
            verified += 1
            unfinished.append(entry)
        elif result.outcome == UNAVAILABLE:
            if result.language == "python":
                entry["message"] = (
                    "not run by the background review (its tests would take the Python "
                    "tier's room from calls); run toolfoundry tools verify"
                )
            not_run.append(entry)
    if stop():
        raise ReviewStopped
    report = fd.report(unused_days=settings.unused_days)
    holds = fd.registry.approval_holds() if report.pending else {}
    waiting: list[WaitingVersionJson] = []
    for p in report.pending:
        hold = holds.get((p["name"], p["version"]))
        waiting.append({**p, "approval_hold": hold.to_dict() if hold is not None else None})
    return LibraryReview(
        verified=verified,
        passed=passed,
        duration_s=time.monotonic() - started,
        findings={
            "failing": failing,
            "unfinished": unfinished,
            "not_run": not_run,
            "unused": report.unused,
            "capabilities": report.capabilities,
            "waiting": waiting,
        },
    )
