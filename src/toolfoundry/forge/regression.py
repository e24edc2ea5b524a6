"""The regression gate (an update keeps every earlier version's promises) and duplicate checks.

A tool's test suite accumulates: an update must pass every test of every earlier active
version (the previous version's :attr:`ExistingTool.suite`), except those it retires in
``changes_tests``. An earlier test is named ``v3:name`` after the first version that had it
(an identical copy in a later version is the same test); a bare ``name`` retires every
earlier test of that name. A previous test whose input no longer fits the new parameters
schema fails as well (callers relying on it would break). A behavioural duplicate is an
active tool that already passes every test of a new draft.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from typing_extensions import TypedDict

from toolfoundry.forge.cases import TestCase
from toolfoundry.forge.draft import Draft, Language
from toolfoundry.forge.draft_fields import validate_instance
from toolfoundry.forge.draft_json import TestChangeJson
from toolfoundry.forge.fixtures import Fixture, merge_fixtures
from toolfoundry.forge.testrun import (
    CASES_AT_ONCE,
    CaseResultJson,
    TestResult,
    ToolRunner,
    in_parallel,
    run_case,
)
from toolfoundry.spec import CallLimits, Capabilities, Problem
from toolfoundry.spec.gate import Retirement as Retirement  # re-exported: the gate's vocabulary
from toolfoundry.spec.tool import JsonSchema


@dataclass(frozen=True)
class SuiteTest:
    """One test of the accumulated suite, with the first version that had it."""

    case: TestCase
    version: int

    @property
    def label(self) -> str:
        """How results, refusals and ``changes_tests`` name it: ``v3:name``."""
        return f"v{self.version}:{self.case.name}"


def accumulate(
    earlier: Iterable[SuiteTest], tests: Iterable[TestCase], version: int
) -> list[SuiteTest]:
    """``earlier`` plus ``version``'s own tests that are not identical copies of one of them."""
    out = list(earlier)
    seen = [s.case.to_dict() for s in out]
    for case in tests:
        if case.to_dict() not in seen:
            out.append(SuiteTest(case, version))
            seen.append(case.to_dict())
    return out


@dataclass(frozen=True)
class ExistingTool:
    """A stored version the forge compares against: the previous version or a candidate."""

    name: str
    version: int
    code: str
    tests: tuple[TestCase, ...] = ()
    fixtures: tuple[Fixture, ...] = ()
    capabilities: Capabilities = field(default_factory=Capabilities)
    language: Language = Language.JAVASCRIPT
    parameters_json: str | None = None
    # the tests of earlier versions this version was gated by (and did not retire)
    earlier: tuple[SuiteTest, ...] = ()

    @property
    def suite(self) -> tuple[SuiteTest, ...]:
        """Every test a next version must pass: the earlier ones, then this version's own."""
        return tuple(accumulate(self.earlier, self.tests, self.version))

    @property
    def parameters(self) -> JsonSchema | None:
        """The version's parameters schema, when known."""
        return None if self.parameters_json is None else json.loads(self.parameters_json)

    @classmethod
    def from_draft(cls, draft: Draft, version: int) -> ExistingTool:
        """The version a draft became."""
        return cls(
            name=draft.name,
            version=version,
            code=draft.code,
            tests=draft.tests,
            fixtures=draft.fixtures,
            capabilities=draft.capabilities,
            language=draft.language,
            parameters_json=draft.parameters_json,
        )


class RegressionJson(TypedDict):
    """The regression gate's outcome as the create report (``regression``) shows it."""

    previous_version: int
    passed: bool
    failed: list[str]
    changed: list[str]
    unknown_changes: list[str | int]
    retired: list[TestChangeJson]
    suite: list[str]
    results: list[CaseResultJson]


@dataclass(frozen=True)
class RegressionOutcome:
    """The previous version's tests run against the new code."""

    previous_version: int
    results: tuple[TestResult, ...]
    changed: tuple[str, ...] = ()
    unknown_changes: tuple[str | int, ...] = ()
    retired: tuple[Retirement, ...] = ()
    kept: tuple[SuiteTest, ...] = ()

    @property
    def failed(self) -> tuple[str, ...]:
        """Names of the previous tests the new code fails."""
        return tuple(r.name for r in self.results if not r.passed)

    @property
    def passed(self) -> bool:
        """True when no previous test (other than deliberately changed ones) fails."""
        return not self.failed

    def to_dict(self) -> RegressionJson:
        """JSON-ready form."""
        return {
            "previous_version": self.previous_version,
            "passed": self.passed,
            "failed": list(self.failed),
            "changed": list(self.changed),
            "unknown_changes": list(self.unknown_changes),
            "retired": [{"test": r.test, "reason": r.reason} for r in self.retired],
            "suite": [s.label for s in self.kept],
            "results": [r.to_dict() for r in self.results],
        }


def _retired(
    draft: Draft, previous: ExistingTool, suite: tuple[SuiteTest, ...]
) -> tuple[dict[int, str], list[str | int]]:
    """Which suite entries (by index) the draft retires, with the reason, and what
    ``changes_tests`` names that is no test of the suite."""
    found: dict[int, str] = {}
    unknown: list[str | int] = []
    for change in draft.changes_tests:
        item, reason = (
            (change.test, change.reason) if isinstance(change, Retirement) else (change, "")
        )
        if isinstance(item, int):
            own = previous.tests[item].to_dict() if 0 <= item < len(previous.tests) else None
            hits = [i for i, s in enumerate(suite) if s.case.to_dict() == own]
        else:
            hits = [i for i, s in enumerate(suite) if s.label == item]
            hits = hits or [i for i, s in enumerate(suite) if s.case.name == item]
        if not hits:
            unknown.append(item)
        for i in hits:
            found.setdefault(i, reason)
    return found, unknown


def regression_gate(
    draft: Draft, previous: ExistingTool, *, runner: ToolRunner, limits: CallLimits
) -> RegressionOutcome:
    """Run the accumulated suite (minus what ``draft.changes_tests`` retires) on the draft."""
    suite = previous.suite
    retired, unknown = _retired(draft, previous, suite)
    schema, returns = draft.parameters, draft.returns
    fixtures = merge_fixtures(previous.fixtures, draft.fixtures)

    def work(entry: SuiteTest) -> TestResult:
        case, label = entry.case, entry.label
        problems: list[Problem] = []
        validate_instance(case.input, schema, "$", problems)
        if problems:
            why = "; ".join(f"{p.path}: {p.message}" for p in problems)
            reason = f"this input no longer satisfies the new parameters schema ({why})"
            return TestResult(label, False, 0.0, reason=reason)
        return run_case(
            runner,
            draft.code,
            case,
            limits=limits,
            fixtures=fixtures,
            capabilities=draft.capabilities,
            tool=draft.name,
            label=label,
            returns=returns,  # an earlier test's value must fit the new return schema too
        )

    kept = [entry for i, entry in enumerate(suite) if i not in retired]
    results = in_parallel(work, kept, CASES_AT_ONCE)
    return RegressionOutcome(
        previous_version=previous.version,
        results=results,
        changed=tuple(dict.fromkeys(suite[i].case.name for i in sorted(retired))),
        unknown_changes=tuple(unknown),
        retired=tuple(
            Retirement(suite[i].label, retired[i] or "(no reason given)") for i in sorted(retired)
        ),
        kept=tuple(kept),
    )


def behaves_like(
    candidate: ExistingTool, draft: Draft, *, runner: ToolRunner, limits: CallLimits
) -> bool:
    """True when ``candidate``'s code passes every test of ``draft`` (a behavioural duplicate)."""
    if candidate.language is not draft.language:
        return False
    schema = candidate.parameters
    for case in draft.tests:
        if schema is not None:
            problems: list[Problem] = []
            validate_instance(case.input, schema, "$", problems)
            if problems:
                return False
        result = run_case(
            runner,
            candidate.code,
            case,
            limits=limits,
            fixtures=merge_fixtures(draft.fixtures, candidate.fixtures),
            capabilities=candidate.capabilities,
            tool=candidate.name,
        )
        if not result.passed:
            return False
    return True


def behavioural_duplicates(
    draft: Draft,
    candidates: Iterable[ExistingTool],
    *,
    runner: ToolRunner,
    limits: CallLimits | None = None,
) -> tuple[str, ...]:
    """Names of the candidate tools (other than the draft's own) that pass all its tests."""
    limits = limits or CallLimits()
    return tuple(
        c.name
        for c in candidates
        if c.name != draft.name and behaves_like(c, draft, runner=runner, limits=limits)
    )
