"""The forge's gates, each a function of the parsed draft that returns a small typed outcome.

static check -> own tests -> regression (an update keeps earlier promises; ``changes_tests``)
-> capability policy. :func:`toolfoundry.forge.forge_draft` runs them in that order and builds
its report from their outcomes; none of them touches a database or raises for bad input.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolfoundry.forge.checks.js import check_javascript
from toolfoundry.forge.checks.js_rules import test_locale_findings
from toolfoundry.forge.checks.python import check_python
from toolfoundry.forge.draft import Draft, Language
from toolfoundry.forge.findings import Finding, Severity
from toolfoundry.forge.policy import CapabilityDecision, CapabilityPolicy
from toolfoundry.forge.regression import ExistingTool, RegressionOutcome, regression_gate
from toolfoundry.forge.testrun import TestResult, ToolRunner, failed_tests_message
from toolfoundry.forge.uses import use_findings
from toolfoundry.spec import CallLimits, StorageScope


@dataclass(frozen=True)
class GateOutcome:
    """One gate's verdict.

    Attributes:
        blocker: the step blocker the gate raises (``static_check_failed``, ``tests_failed``,
            ``regression``), or None when it passed.
        message: why it blocked, for the step's message.
        findings: what it noticed (errors and warnings), located.
    """

    blocker: str | None = None
    message: str = ""
    findings: tuple[Finding, ...] = ()

    @property
    def passed(self) -> bool:
        """True when the gate raises no blocker."""
        return self.blocker is None


def static_check(draft: Draft, policy: CapabilityPolicy) -> GateOutcome:
    """The language's checker on the draft's code; blocks on any error finding."""
    if draft.language is Language.PYTHON:
        findings = tuple(
            check_python(
                draft.code,
                allowed_packages=policy.python_packages,
                capabilities=draft.capabilities,
            )
        )
    else:
        findings = (
            *check_javascript(
                draft.code, capabilities=draft.capabilities, parameters=draft.parameters
            ),
            *test_locale_findings(draft.code, [case.input for case in draft.tests]),
            *use_findings(draft),
        )
    errors = sum(f.blocking for f in findings)
    if not errors:
        return GateOutcome(findings=findings)
    message = f"the static check found {errors} error(s)"
    return GateOutcome("static_check_failed", message, findings)


def own_tests(results: tuple[TestResult, ...]) -> GateOutcome:
    """The draft's own tests: blocks when any failed."""
    failed = failed_tests_message(results)
    return GateOutcome() if failed is None else GateOutcome("tests_failed", failed)


def regression(
    draft: Draft,
    previous: ExistingTool | None,
    *,
    runner: ToolRunner,
    limits: CallLimits,
) -> tuple[RegressionOutcome | None, GateOutcome]:
    """For an update, the accumulated suite (minus what ``changes_tests`` retires) on the new
    code: blocks ``regression`` when an earlier test fails; warns ``unknown_changed_test`` for
    each ``changes_tests`` entry that names no earlier test."""
    if previous is None:
        if not draft.changes_tests:
            return None, GateOutcome()
        note = Finding(
            "unknown_changed_test",
            Severity.WARNING,
            "changes_tests is only meaningful for an update of an existing tool",
            path="$.changes_tests",
        )
        return None, GateOutcome(findings=(note,))
    outcome = regression_gate(draft, previous, runner=runner, limits=limits)
    notes = tuple(
        Finding(
            "unknown_changed_test",
            Severity.WARNING,
            f"changes_tests names {item!r}, which is not a test of version "
            f"{previous.version} or an earlier one",
            path="$.changes_tests",
        )
        for item in outcome.unknown_changes
    )
    if outcome.passed:
        return outcome, GateOutcome(findings=notes)
    message = (
        f"the update breaks earlier test(s) {', '.join(outcome.failed)} "
        "(vN:name is the version that added the test); fix the code, or retire them "
        'in changes_tests as {"test": "vN:name", "reason": "..."} if the change is '
        "deliberate"
    )
    return outcome, GateOutcome("regression", message, notes)


def capability_policy(
    draft: Draft, policy: CapabilityPolicy, outcome: RegressionOutcome | None
) -> CapabilityDecision:
    """Whether a human must approve: the policy's decision on the draft's capabilities, and
    :func:`retirement_review`."""
    decision = policy.decide(draft.capabilities, draft.language.value)
    return retirement_review(decision, draft, outcome)


def retirement_review(
    decision: CapabilityDecision, draft: Draft, outcome: RegressionOutcome | None
) -> CapabilityDecision:
    """A tool that reaches the network, credentials or storage and retires earlier tests needs
    a human, like a capability change: its tests are what a reviewer approved it by."""
    caps = draft.capabilities
    risky = bool(caps.network or caps.credentials or caps.storage is not StorageScope.NONE)
    if outcome is None or not outcome.retired or not risky:
        return decision
    shown = "; ".join(f"{r.test} ({r.reason})" for r in outcome.retired)
    return CapabilityDecision(True, (*decision.reasons, f"retires tests: {shown}"))
