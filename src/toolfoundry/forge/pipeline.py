"""The forge pipeline: draft -> static check -> sandboxed tests -> regression gate -> policy.

DB-free: it decides and reports; the registry persists the report. It never raises for bad
input: a malformed draft is a rejected report whose findings say what to fix.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolfoundry.forge.checks.js import check_javascript
from toolfoundry.forge.checks.python import check_python
from toolfoundry.forge.draft import Draft, DraftLimits, Language, parse_draft
from toolfoundry.forge.draft_fields import DraftError
from toolfoundry.forge.findings import Finding, Severity
from toolfoundry.forge.policy import CapabilityDecision, CapabilityPolicy
from toolfoundry.forge.regression import ExistingTool, RegressionOutcome, regression_gate
from toolfoundry.forge.testrun import (
    TestResult,
    ToolRunner,
    failed_tests_message,
    run_cases,
    sandbox_unavailable,
    unavailable_step,
)
from toolfoundry.spec import (
    CallLimits,
    Problem,
    StepResult,
    StepStatus,
    StorageScope,
    ToolSpec,
    VersionStatus,
    capabilities_hash,
    code_sha256,
)


@dataclass(frozen=True)
class ForgeReport:
    """What the forge decided about one draft, and everything behind the decision.

    Attributes:
        name: the tool name (None when the draft had no usable name).
        status: ``active``, ``pending_approval`` or ``rejected``.
        step: ``completed``; ``blocked`` with blockers (``invalid_draft``,
            ``python_tier_unavailable``, ``static_check_failed``, ``tests_failed``,
            ``regression``, ``awaiting_approval``); or ``unavailable`` when no sandbox runs.
        findings: draft problems, static findings and gate notes, errors first by position.
        test_results: the draft's own tests.
        regression: the previous version's tests against the new code, for an update.
        decision: the capability policy's decision (None when rejected before it).
        code_sha256: the hash an approval binds (None for an unparseable draft).
        capabilities_hash: the capability-set hash an approval binds.
        spec: the ToolSpec the version will have.
        draft: the parsed draft.
        problems: the draft's problems when it could not be parsed.
        duration_ms: time the whole forge took.
    """

    name: str | None
    status: VersionStatus
    step: StepResult
    findings: tuple[Finding, ...] = ()
    test_results: tuple[TestResult, ...] = ()
    regression: RegressionOutcome | None = None
    decision: CapabilityDecision | None = None
    code_sha256: str | None = None
    capabilities_hash: str | None = None
    spec: ToolSpec | None = None
    draft: Draft | None = None
    problems: tuple[Problem, ...] = ()
    duration_ms: float = 0.0

    @property
    def blockers(self) -> tuple[str, ...]:
        """The step's blockers (empty unless blocked)."""
        return self.step.blockers

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form, as ``toolfoundry create --json`` prints it (plus details)."""
        return {
            "name": self.name,
            "status": self.status.value,
            "step": self.step.to_dict(),
            "findings": [f.to_dict() for f in self.findings],
            "test_results": [t.to_dict() for t in self.test_results],
            "regression": self.regression.to_dict() if self.regression else None,
            "policy": self.decision.to_dict() if self.decision else None,
            "code_sha256": self.code_sha256,
            "capabilities_hash": self.capabilities_hash,
            "spec": self.spec.to_dict() if self.spec else None,
            "problems": [p.to_dict() for p in self.problems],
            "duration_ms": round(self.duration_ms, 3),
        }


def _problem_findings(problems: tuple[Problem, ...]) -> tuple[Finding, ...]:
    return tuple(Finding("invalid_draft", Severity.ERROR, p.message, path=p.path) for p in problems)


def _problem_summary(problems: tuple[Problem, ...]) -> str:
    shown = "; ".join(f"{p.path}: {p.message}" for p in problems[:3])
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return f"the draft has {len(problems)} problem(s): {shown}{more}"


def invalid_draft(
    name: str | None, problems: Sequence[Problem], started: float | None = None
) -> ForgeReport:
    """The report of a draft refused before any of its code ran: ``rejected``, blocked
    ``invalid_draft``, each problem also a located finding."""
    problems = tuple(problems)
    return _report(
        time.perf_counter() if started is None else started,
        name=name,
        status=VersionStatus.REJECTED,
        step=_blocked(["invalid_draft"], _problem_summary(problems)),
        findings=_problem_findings(problems),
        problems=problems,
    )


def _default_runner() -> ToolRunner | None:
    try:
        from toolfoundry.forge.sandbox_runner import SandboxRunner

        return SandboxRunner()
    except ImportError:
        return None


def forge_draft(
    draft_or_data: Draft | Mapping[str, Any] | str | bytes,
    *,
    previous: ExistingTool | None = None,
    policy: CapabilityPolicy | None = None,
    limits: CallLimits | None = None,
    runner: ToolRunner | None = None,
    python_runner: ToolRunner | None = None,
    draft_limits: DraftLimits | None = None,
    version: int | None = None,
) -> ForgeReport:
    """Check, test and decide one draft.

    Args:
        draft_or_data: a parsed :class:`Draft`, or a draft mapping / JSON text / bytes.
        previous: the tool's current active version, for an update (regression gate).
        policy: the capability policy (defaults to :class:`CapabilityPolicy`).
        limits: the call limits each test case runs under (the tool's calls' own).
        runner: runs JavaScript; defaults to the real sandbox (``run_js``).
        python_runner: runs Python-tier tools; without one, Python drafts are rejected.
        draft_limits: size caps for parsing.
        version: the version number the spec gets (default: previous + 1, or 1).

    Returns:
        A :class:`ForgeReport`; never raises for bad input.
    """
    started = time.perf_counter()
    parsed = parse_or_report(draft_or_data, draft_limits, started)
    if isinstance(parsed, ForgeReport):
        return parsed
    draft = parsed
    number = version if version is not None else (previous.version + 1 if previous else 1)
    base = _report_base(draft, number)
    findings = _static_check(draft, policy)
    chosen = _choose_runner(draft, runner, python_runner)
    if draft.language is Language.PYTHON and chosen is None:
        return _python_tier_unavailable(started, base)
    if any(f.blocking for f in findings):
        return _static_check_failed(findings, started, base)
    if chosen is None:
        return _no_sandbox(findings, started, base)
    return _test_and_decide(
        draft,
        previous,
        policy or CapabilityPolicy(),
        limits or CallLimits(),
        chosen,
        findings,
        base,
        started,
    )


def parse_or_report(
    draft_or_data: Draft | Mapping[str, Any] | str | bytes,
    draft_limits: DraftLimits | None,
    started: float | None = None,
) -> Draft | ForgeReport:
    """Parse: the draft itself, or the ``invalid_draft`` report when it cannot be parsed."""
    if isinstance(draft_or_data, Draft):
        return draft_or_data
    try:
        return parse_draft(draft_or_data, limits=draft_limits or DraftLimits())
    except DraftError as exc:
        name = draft_or_data.get("name") if isinstance(draft_or_data, Mapping) else None
        return invalid_draft(name if isinstance(name, str) else None, exc.problems, started)


def _report_base(draft: Draft, number: int) -> dict[str, Any]:
    """The report fields every outcome of a parsed draft shares (name, hashes, spec)."""
    return {
        "name": draft.name,
        "draft": draft,
        "code_sha256": code_sha256(draft.code),
        "capabilities_hash": capabilities_hash(draft.capabilities, draft.language.value),
        "spec": draft.spec(number),
    }


def _static_check(draft: Draft, policy: CapabilityPolicy | None) -> list[Finding]:
    """Static check: the language's checker's findings on the draft's code."""
    findings: list[Finding] = []
    if draft.language is Language.PYTHON:
        findings += check_python(
            draft.code,
            allowed_packages=(policy or CapabilityPolicy()).python_packages,
            capabilities=draft.capabilities,
        )
    else:
        findings += check_javascript(
            draft.code, capabilities=draft.capabilities, parameters=draft.parameters
        )
    return findings


def _choose_runner(
    draft: Draft, runner: ToolRunner | None, python_runner: ToolRunner | None
) -> ToolRunner | None:
    """The runner for the draft's language: the Python runner, or the JS one (default sandbox)."""
    if draft.language is Language.PYTHON:
        return python_runner
    return runner or _default_runner()


def _python_tier_unavailable(started: float, base: dict[str, Any]) -> ForgeReport:
    """The rejection of a Python draft when this foundry has no Python runner."""
    finding = Finding(
        "python_tier_unavailable",
        Severity.ERROR,
        "the Python tier is not available in this foundry; write the tool in JavaScript",
        path="$.language",
    )
    return _report(
        started,
        status=VersionStatus.REJECTED,
        step=_blocked(["python_tier_unavailable"], finding.message),
        findings=(finding,),
        **base,
    )


def _static_check_failed(
    findings: list[Finding], started: float, base: dict[str, Any]
) -> ForgeReport:
    """The rejection of a draft whose static check found errors."""
    errors = sum(f.blocking for f in findings)
    return _report(
        started,
        status=VersionStatus.REJECTED,
        step=_blocked(["static_check_failed"], f"the static check found {errors} error(s)"),
        findings=tuple(findings),
        **base,
    )


def _no_sandbox(findings: list[Finding], started: float, base: dict[str, Any]) -> ForgeReport:
    """The ``unavailable`` report when no sandbox exists to run the tests."""
    return _report(
        started,
        status=VersionStatus.REJECTED,
        step=unavailable_step("no sandbox is available to run tests"),
        findings=tuple(findings),
        **base,
    )


def _test_and_decide(
    draft: Draft,
    previous: ExistingTool | None,
    policy: CapabilityPolicy,
    limits: CallLimits,
    runner: ToolRunner,
    findings: list[Finding],
    base: dict[str, Any],
    started: float,
) -> ForgeReport:
    results = _run_own_tests(draft, runner, limits)
    unavailable = sandbox_unavailable(results)
    if unavailable is not None:  # the sandbox never ran the code: there is nothing to judge
        status = VersionStatus.REJECTED
        return _report(started, status=status, step=unavailable, findings=tuple(findings), **base)
    blockers: list[str] = []
    messages: list[str] = []
    failed = failed_tests_message(results)
    if failed is not None:
        blockers.append("tests_failed")
        messages.append(failed)
    outcome = _regression_step(draft, previous, runner, limits, findings, blockers, messages)
    common = {"findings": tuple(findings), "test_results": results, "regression": outcome, **base}
    if blockers:
        return _report(
            started,
            status=VersionStatus.REJECTED,
            step=_blocked(blockers, "; ".join(messages)),
            **common,
        )
    return _decide_policy(draft, policy, outcome, results, common, started)


def _run_own_tests(draft: Draft, runner: ToolRunner, limits: CallLimits) -> tuple[TestResult, ...]:
    """Run own tests: the draft's test cases in the sandbox, with its fixtures."""
    return run_cases(
        runner,
        draft.code,
        draft.tests,
        limits=limits,
        fixtures=draft.fixtures,
        capabilities=draft.capabilities,
        tool=draft.name,
    )


def _regression_step(
    draft: Draft,
    previous: ExistingTool | None,
    runner: ToolRunner,
    limits: CallLimits,
    findings: list[Finding],
    blockers: list[str],
    messages: list[str],
) -> RegressionOutcome | None:
    """Regression gate: for an update, run earlier tests on the new code; appends the
    ``regression`` blocker and message, and ``unknown_changed_test`` warnings, in place."""
    if previous is None:
        if draft.changes_tests:
            findings.append(
                Finding(
                    "unknown_changed_test",
                    Severity.WARNING,
                    "changes_tests is only meaningful for an update of an existing tool",
                    path="$.changes_tests",
                )
            )
        return None
    outcome = regression_gate(draft, previous, runner=runner, limits=limits)
    if not outcome.passed:
        blockers.append("regression")
        messages.append(
            f"the update breaks earlier test(s) {', '.join(outcome.failed)} "
            "(vN:name is the version that added the test); fix the code, or retire them "
            'in changes_tests as {"test": "vN:name", "reason": "..."} if the change is '
            "deliberate"
        )
    for item in outcome.unknown_changes:
        findings.append(
            Finding(
                "unknown_changed_test",
                Severity.WARNING,
                f"changes_tests names {item!r}, which is not a test of version "
                f"{previous.version} or an earlier one",
                path="$.changes_tests",
            )
        )
    return outcome


def _decide_policy(
    draft: Draft,
    policy: CapabilityPolicy,
    outcome: RegressionOutcome | None,
    results: tuple[TestResult, ...],
    common: dict[str, Any],
    started: float,
) -> ForgeReport:
    """Decide policy: ``pending_approval`` when a human must approve, else ``active``."""
    decision = retirement_review(
        policy.decide(draft.capabilities, draft.language.value), draft, outcome
    )
    if decision.needs_approval:
        return _report(
            started,
            status=VersionStatus.PENDING_APPROVAL,
            step=_blocked(
                ["awaiting_approval"],
                f"{_passed(results, outcome)}; a human must approve: "
                + "; ".join(decision.reasons),
            ),
            decision=decision,
            **common,
        )
    return _report(
        started,
        status=VersionStatus.ACTIVE,
        step=StepResult(
            StepStatus.COMPLETED, message=f"{_passed(results, outcome)}; the tool is active"
        ),
        decision=decision,
        **common,
    )


def _passed(results: tuple[TestResult, ...], outcome: RegressionOutcome | None) -> str:
    """How many tests passed: the draft's own and, for an update, the earlier versions' that
    ran (a count of the own tests alone undersells what gated the version)."""
    earlier = len(outcome.results) if outcome is not None else 0
    if not earlier:
        return f"all {len(results)} test(s) passed"
    total = len(results) + earlier
    return f"all {total} test(s) passed ({len(results)} own, {earlier} from earlier versions)"


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


def _report(started: float, **fields: Any) -> ForgeReport:
    return ForgeReport(duration_ms=(time.perf_counter() - started) * 1000, **fields)


def _blocked(blockers: list[str], message: str) -> StepResult:
    return StepResult(StepStatus.BLOCKED, blockers=tuple(blockers), message=message)
