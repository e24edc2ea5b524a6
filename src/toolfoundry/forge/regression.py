"""The regression gate (an update keeps the previous version's promises) and duplicate checks.

An update must pass the previous active version's tests too, except those it names in
``changes_tests``; a previous test whose input no longer fits the new parameters schema
fails as well (callers relying on it would break). A behavioural duplicate is an active tool
that already passes every test of a new draft.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from toolfoundry.forge.cases import Fixture, TestCase, parse_test_cases
from toolfoundry.forge.draft import Draft, Language
from toolfoundry.forge.draft_fields import DraftError, check_fixtures, validate_instance
from toolfoundry.forge.testrun import (
    CASES_AT_ONCE,
    TestResult,
    ToolRunner,
    in_parallel,
    merge_fixtures,
    run_case,
)
from toolfoundry.spec import CallLimits, Capabilities, Problem


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

    @property
    def parameters(self) -> dict[str, Any] | None:
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

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExistingTool:
        """Build from stored JSON fields (``tests``/``fixtures`` in draft form).

        Raises:
            DraftError: when the stored tests or fixtures are malformed.
        """
        problems: list[Problem] = []
        fixtures = check_fixtures(data.get("fixtures"), "$.fixtures", problems)
        language = data.get("language", "javascript")
        if language not in {x.value for x in Language}:
            problems.append(Problem("$.language", f"unknown language {language!r}"))
        if problems:
            raise DraftError(problems)
        parameters = data.get("parameters")
        tests = data.get("tests")
        return cls(
            name=str(data["name"]),
            version=int(data["version"]),
            code=str(data["code"]),
            tests=parse_test_cases(tests) if tests else (),
            fixtures=tuple(Fixture(**f) for f in fixtures),
            capabilities=Capabilities.from_dict(data.get("capabilities")),
            language=Language(language),
            parameters_json=None if parameters is None else json.dumps(parameters),
        )


@dataclass(frozen=True)
class RegressionOutcome:
    """The previous version's tests run against the new code."""

    previous_version: int
    results: tuple[TestResult, ...]
    changed: tuple[str, ...] = ()
    unknown_changes: tuple[str | int, ...] = ()

    @property
    def failed(self) -> tuple[str, ...]:
        """Names of the previous tests the new code fails."""
        return tuple(r.name for r in self.results if not r.passed)

    @property
    def passed(self) -> bool:
        """True when no previous test (other than deliberately changed ones) fails."""
        return not self.failed

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "previous_version": self.previous_version,
            "passed": self.passed,
            "failed": list(self.failed),
            "changed": list(self.changed),
            "unknown_changes": list(self.unknown_changes),
            "results": [r.to_dict() for r in self.results],
        }


def _changed_indexes(
    changes: Iterable[str | int], tests: tuple[TestCase, ...]
) -> tuple[set[int], list[str | int]]:
    by_name = {t.name: i for i, t in enumerate(tests)}
    found: set[int] = set()
    unknown: list[str | int] = []
    for item in changes:
        if isinstance(item, int) and 0 <= item < len(tests):
            found.add(item)
        elif isinstance(item, str) and item in by_name:
            found.add(by_name[item])
        else:
            unknown.append(item)
    return found, unknown


def regression_gate(
    draft: Draft, previous: ExistingTool, *, runner: ToolRunner, limits: CallLimits
) -> RegressionOutcome:
    """Run the previous version's tests (minus ``draft.changes_tests``) against the draft."""
    changed, unknown = _changed_indexes(draft.changes_tests, previous.tests)
    schema = draft.parameters
    fixtures = merge_fixtures(previous.fixtures, draft.fixtures)

    def work(case: TestCase) -> TestResult:
        label = f"v{previous.version}:{case.name}"
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
        )

    kept = [case for i, case in enumerate(previous.tests) if i not in changed]
    results = in_parallel(work, kept, CASES_AT_ONCE)
    return RegressionOutcome(
        previous_version=previous.version,
        results=results,
        changed=tuple(previous.tests[i].name for i in sorted(changed)),
        unknown_changes=tuple(unknown),
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
