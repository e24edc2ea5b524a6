"""The forge pipeline: draft -> static check -> sandboxed tests -> regression gate -> policy.

DB-free: it decides and reports; the registry persists the report. It never raises for bad
input: a malformed draft is a rejected report whose findings say what to fix. Each gate is a
function of forge/gates.py returning a typed outcome; the report is built from them by keyword.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict

from toolfoundry.forge import gates
from toolfoundry.forge.draft import Draft, DraftLimits, Language, parse_draft
from toolfoundry.forge.draft_fields import DraftError
from toolfoundry.forge.findings import Finding, FindingJson, Severity
from toolfoundry.forge.gates import retirement_review as retirement_review  # re-exported
from toolfoundry.forge.policy import CapabilityDecision, CapabilityPolicy
from toolfoundry.forge.regression import ExistingTool, RegressionJson, RegressionOutcome
from toolfoundry.forge.testrun import (
    CaseResultJson,
    TestResult,
    ToolRunner,
    run_cases,
    sandbox_unavailable,
    unavailable_step,
)
from toolfoundry.spec import (
    CallLimits,
    Problem,
    StepResult,
    StepStatus,
    ToolSpec,
    VersionStatus,
    capabilities_hash,
    code_sha256,
)
from toolfoundry.spec.gate import CapabilityDecisionJson
from toolfoundry.spec.status import StepJson
from toolfoundry.spec.tool import ToolSpecJson


class ForgeReportJson(TypedDict):
    """The forge's report as JSON (:meth:`ForgeReport.to_dict`)."""

    name: str | None
    status: str
    step: StepJson
    findings: list[FindingJson]
    test_results: list[CaseResultJson]
    regression: RegressionJson | None
    policy: CapabilityDecisionJson | None
    code_sha256: str | None
    capabilities_hash: str | None
    spec: ToolSpecJson | None
    problems: list[dict[str, str]]
    duration_ms: float


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

    def to_dict(self) -> ForgeReportJson:
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


@dataclass(frozen=True)
class Forged:
    """What every report of a parsed draft carries: the draft, the two hashes an approval
    binds, and the spec the version will have."""

    draft: Draft
    code_sha256: str
    capabilities_hash: str
    spec: ToolSpec

    @classmethod
    def of(cls, draft: Draft, version: int) -> Forged:
        """The draft as version ``version``."""
        return cls(
            draft=draft,
            code_sha256=code_sha256(draft.code),
            capabilities_hash=capabilities_hash(draft.capabilities, draft.language.value),
            spec=draft.spec(version),
        )


def invalid_draft(
    name: str | None, problems: Sequence[Problem], started: float | None = None
) -> ForgeReport:
    """The report of a draft refused before any of its code ran: ``rejected``, blocked
    ``invalid_draft``, each problem also a located finding."""
    problems = tuple(problems)
    return ForgeReport(
        name=name,
        status=VersionStatus.REJECTED,
        step=_blocked(["invalid_draft"], _problem_summary(problems)),
        findings=_problem_findings(problems),
        problems=problems,
        duration_ms=_since(time.perf_counter() if started is None else started),
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
    policy = policy or CapabilityPolicy()
    number = version if version is not None else (previous.version + 1 if previous else 1)
    forged = Forged.of(draft, number)
    checked = gates.static_check(draft, policy)
    chosen = python_runner if draft.language is Language.PYTHON else runner or _default_runner()
    if draft.language is Language.PYTHON and chosen is None:
        finding = Finding(
            "python_tier_unavailable",
            Severity.ERROR,
            "the Python tier is not available in this foundry; write the tool in JavaScript",
            path="$.language",
        )
        step = _blocked(["python_tier_unavailable"], finding.message)
        return _report(started, forged, VersionStatus.REJECTED, step, findings=(finding,))
    if checked.blocker is not None:
        step = _blocked([checked.blocker], checked.message)
        return _report(started, forged, VersionStatus.REJECTED, step, findings=checked.findings)
    if chosen is None:
        step = unavailable_step("no sandbox is available to run tests")
        return _report(started, forged, VersionStatus.REJECTED, step, findings=checked.findings)
    return _test_and_decide(
        forged, previous, policy, limits or CallLimits(), chosen, checked.findings, started
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


def _test_and_decide(
    forged: Forged,
    previous: ExistingTool | None,
    policy: CapabilityPolicy,
    limits: CallLimits,
    runner: ToolRunner,
    findings: tuple[Finding, ...],
    started: float,
) -> ForgeReport:
    """Own tests, then the regression gate (both reported when both fail), then the policy."""
    draft = forged.draft
    results = run_cases(
        runner,
        draft.code,
        draft.tests,
        limits=limits,
        fixtures=draft.fixtures,
        capabilities=draft.capabilities,
        tool=draft.name,
        returns=draft.returns,
    )
    unavailable = sandbox_unavailable(results)
    if unavailable is not None:  # the sandbox never ran the code: there is nothing to judge
        return _report(started, forged, VersionStatus.REJECTED, unavailable, findings=findings)
    outcome, earlier = gates.regression(draft, previous, runner=runner, limits=limits)
    tested = (gates.own_tests(results), earlier)
    findings = (*findings, *earlier.findings)
    blockers = [g.blocker for g in tested if g.blocker is not None]
    if blockers:
        step = _blocked(blockers, "; ".join(g.message for g in tested if not g.passed))
        return _report(
            started,
            forged,
            VersionStatus.REJECTED,
            step,
            findings=findings,
            test_results=results,
            regression=outcome,
        )
    decision = gates.capability_policy(draft, policy, outcome)
    passed = _passed(results, outcome)
    if decision.needs_approval:
        status = VersionStatus.PENDING_APPROVAL
        reasons = "; ".join(decision.reasons)
        step = _blocked(["awaiting_approval"], f"{passed}; a human must approve: {reasons}")
    else:
        status = VersionStatus.ACTIVE
        step = StepResult(StepStatus.COMPLETED, message=f"{passed}; the tool is active")
    return _report(
        started,
        forged,
        status,
        step,
        findings=findings,
        test_results=results,
        regression=outcome,
        decision=decision,
    )


def _passed(results: tuple[TestResult, ...], outcome: RegressionOutcome | None) -> str:
    """How many tests passed: the draft's own and, for an update, the earlier versions' that
    ran (a count of the own tests alone undersells what gated the version)."""
    earlier = len(outcome.results) if outcome is not None else 0
    if not earlier:
        return f"all {len(results)} test(s) passed"
    total = len(results) + earlier
    return f"all {total} test(s) passed ({len(results)} own, {earlier} from earlier versions)"


def _report(
    started: float,
    forged: Forged,
    status: VersionStatus,
    step: StepResult,
    *,
    findings: tuple[Finding, ...] = (),
    test_results: tuple[TestResult, ...] = (),
    regression: RegressionOutcome | None = None,
    decision: CapabilityDecision | None = None,
) -> ForgeReport:
    """The report of a parsed draft, by keyword from the gates' outcomes."""
    return ForgeReport(
        name=forged.draft.name,
        status=status,
        step=step,
        findings=findings,
        test_results=test_results,
        regression=regression,
        decision=decision,
        code_sha256=forged.code_sha256,
        capabilities_hash=forged.capabilities_hash,
        spec=forged.spec,
        draft=forged.draft,
        duration_ms=_since(started),
    )


def _since(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _blocked(blockers: list[str], message: str) -> StepResult:
    return StepResult(StepStatus.BLOCKED, blockers=tuple(blockers), message=message)
