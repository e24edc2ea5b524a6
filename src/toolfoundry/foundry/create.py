"""From a draft to a registered version: forge it, name duplicates, register it atomically.

The forge decides (static check, sandboxed tests, regression gate, capability policy) without
touching the database; only a draft it accepts becomes a version, in one transaction with its
pointer move, search row and audit rows. Anything it refuses leaves the store unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from typing_extensions import TypedDict

from toolfoundry.base.json_gate import InvalidJson, JsonLimits, decode, encode
from toolfoundry.config import Config
from toolfoundry.forge import (
    Draft,
    ExistingTool,
    Finding,
    ForgeReport,
    Language,
    Severity,
    TestResult,
    ToolRunner,
    behaves_like,
    forge_draft,
    invalid_draft,
    parse_or_report,
)
from toolfoundry.forge.draft_fields import DraftError
from toolfoundry.forge.findings import FindingJson
from toolfoundry.forge.regression import RegressionOutcome
from toolfoundry.forge.sandbox_runner import SandboxRunner
from toolfoundry.forge.testrun import CaseResultJson, stored_result, unavailable_step
from toolfoundry.foundry.call import fetch_policy
from toolfoundry.foundry.callees import Callees, UpstreamCallees, resolve_callees
from toolfoundry.foundry.code_runs import RunError, draft_from_run
from toolfoundry.foundry.dependents import candidate_version, check_dependents
from toolfoundry.foundry.existing import earlier_tests, existing_tool, with_suite
from toolfoundry.foundry.fixture_reach import fixture_refusals
from toolfoundry.foundry.patched import draft_from_patch, gives_patch
from toolfoundry.registry.faults import crash_point
from toolfoundry.registry.records import NewVersion, RegistryError, ToolVersion, store_error_text
from toolfoundry.registry.repository import Registry
from toolfoundry.sandbox.host.protocols import ToolsProvider
from toolfoundry.spec import (
    ErrorKind,
    Problem,
    StepResult,
    StepStatus,
    VersionStatus,
    version_identity,
)
from toolfoundry.spec.gate import GateRecord, GateSuite, RegressionRecord
from toolfoundry.spec.status import StepJson


class CreateResultJson(TypedDict):
    """What ``toolfoundry create --json``, MCP ``create_tool`` and ``POST /api/tools`` answer."""

    status: str
    name: str | None
    version: int | None
    findings: list[FindingJson]
    test_results: list[CaseResultJson]
    step: StepJson
    duplicate_of: str | None
    unchanged: bool


@dataclass(frozen=True)
class CreateResult:
    """What ``create_tool`` did with a draft.

    Attributes:
        status: ``active``, ``pending_approval`` or ``rejected`` (rejected stores nothing).
        name: the tool's name (None when the draft had none usable).
        version: the version number registered (None when rejected).
        findings: draft problems, static-check findings and warnings.
        test_results: the draft's own test results, then the regression gate's (each of
            those marked ``regression``).
        step: completed, or blocked with blockers (``invalid_draft``, ``static_check_failed``,
            ``tests_failed``, ``regression``, ``awaiting_approval``), or unavailable.
        duplicate_of: an active tool with the same code, or one that passes this draft's tests.
        unchanged: True when the draft is identical (spec/binding.py:version_identity) to the
            tool's current version or one of its pending versions: nothing was created, and
            ``version``/``status`` are that existing version's.
    """

    status: VersionStatus
    name: str | None
    version: int | None
    findings: tuple[Finding, ...]
    test_results: tuple[TestResult, ...]
    step: StepResult
    duplicate_of: str | None = None
    unchanged: bool = False
    report: ForgeReport | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> CreateResultJson:
        """The JSON ``toolfoundry create --json`` prints."""
        return {
            "status": self.status.value,
            "name": self.name,
            "version": self.version,
            "findings": [f.to_dict() for f in self.findings],
            "test_results": [t.to_dict() for t in self.test_results],
            "step": self.step.to_dict(),
            "duplicate_of": self.duplicate_of,
            "unchanged": self.unchanged,
        }


def store_unavailable(draft: Any, exc: BaseException) -> CreateResult:
    """The result of a create the registry database failed under (a full disk, a server that
    does not answer): ``unavailable``, not judged, nothing stored (the version's transaction
    rolled back); the same draft can be sent again once the database can be written."""
    name = getattr(draft, "name", None)
    if isinstance(draft, Mapping):
        name = draft.get("name")
    message = (
        f"the registry database could not be read or written ({store_error_text(exc)}): the "
        "draft was not judged and nothing was stored; send it again once the database can be "
        "written"
    )
    step = unavailable_step(message, ErrorKind.UNAVAILABLE)
    return CreateResult(
        VersionStatus.REJECTED, name if isinstance(name, str) else None, None, (), (), step
    )


class Intake:
    """Turns drafts into versions of one registry, under one configuration.

    A draft's cases run under ``config.limits``, the very :class:`~toolfoundry.spec.CallLimits`
    its calls get (foundry/call.py), and its fixtures are checked against the fetch policy its
    calls get: what passes here is what a call can do.
    """

    def __init__(
        self,
        registry: Registry,
        config: Config,
        *,
        python_runner: Callable[[], ToolRunner | None] = lambda: None,
        callees: Callable[[], ToolsProvider | None] = lambda: None,
        stand_in_callees: Callable[[ToolVersion | None], ToolsProvider | None] = lambda _: None,
        upstream: Callable[[], UpstreamCallees | None] = lambda: None,
    ) -> None:
        self.registry = registry
        # the registry's tools as a draft's tests reach them (code mode): pure ones only
        self._callees = callees
        # the same, with a new version answering for its tool (its dependents' suites)
        self._stand_in_callees = stand_in_callees
        self._upstream = upstream
        self._config = config
        self._policy = config.policy
        self._run_limits = config.limits
        self._fetch = config.fetch
        self._draft_limits = config.draft_limits
        self._duplicate_candidates = config.duplicate_candidates
        self._python_runner = python_runner

    def create(
        self, draft: Draft | Mapping[str, Any] | str | bytes, *, by: str = "user"
    ) -> CreateResult:
        """Forge a draft and register it as the tool's next version, ``by`` as the actor.

        Never raises for bad input: a malformed or failing draft gives a ``rejected`` result
        with structured findings, and the store is left unchanged. A draft may give
        ``from_run`` (a kept run_js run's id) in place of ``code``: the run's module becomes
        the code and the run the first test (foundry/code_runs.py); or ``base_version`` and
        ``patch``: that version's code with the patch applied (foundry/patched.py).
        """
        with_run = self._with_run(draft)
        if isinstance(with_run, CreateResult):
            return with_run
        with_code = self._with_patch(with_run)
        if isinstance(with_code, CreateResult):
            return with_code
        parsed = parse_or_report(with_code, self._draft_limits)
        if isinstance(parsed, ForgeReport):
            return self._result(parsed)
        # one read of the tool's versions serves every check below ([] for a new tool)
        history = self._history(parsed.name)
        current = next((v for v in history if v.current), None)
        # tested on requests its calls could never make, a tool would pass and then fail
        policy = fetch_policy(parsed.capabilities, self._fetch)
        refused = self._name_problems(parsed.name, current) + fixture_refusals(parsed, policy)
        if refused:
            return self._result(invalid_draft(parsed.name, refused))
        same = _identical(parsed, history)
        if same is not None:  # nothing new to test, approve or store
            return _unchanged(same)
        callees = resolve_callees(self.registry, parsed, upstream=self._upstream())
        if callees.findings:  # an unknown or inactive callee, or a cycle: nothing runs
            return self._result(callees.refusal(parsed.name))
        previous = _previous(current, history)
        # its code's calls of any tool it does not declare are refused while its tests run
        declared = frozenset(d.callee for d in callees.uses)
        report = forge_draft(
            parsed,
            previous=previous,
            policy=self._policy,
            limits=self._run_limits,
            runner=SandboxRunner(self._callees(), uses=declared),
            python_runner=self._python_runner() if parsed.language is Language.PYTHON else None,
            draft_limits=self._draft_limits,
        )
        crash_point("after_forge")
        if report.status is VersionStatus.REJECTED:
            return self._result(report)
        report = self._dependents(parsed, report, history)
        if report.status is VersionStatus.REJECTED:
            return self._result(report)
        findings = list(report.findings)
        duplicate_of = self._duplicate(parsed, report.code_sha256 or "", findings)
        if any(f.rule in DUPLICATE_RULES and f.blocking for f in findings):
            # the store stays unchanged: the model is told to call the tool that does it
            twin_report = replace(
                report,
                status=VersionStatus.REJECTED,
                step=StepResult(
                    StepStatus.BLOCKED, blockers=("duplicate",), message=findings[-1].message
                ),
            )
            return self._result(twin_report, findings=tuple(findings), duplicate_of=duplicate_of)
        try:
            version = self._register(parsed, report, previous, tuple(findings), by, callees)
        except RegistryError as exc:  # disabled meanwhile: the registry's check, under its lock
            return self._result(invalid_draft(parsed.name, [Problem("$.name", exc.message)]))
        return self._result(
            report,
            version=version.version,
            findings=tuple(findings),
            duplicate_of=duplicate_of,
        )

    def _dependents(
        self, parsed: Draft, report: ForgeReport, history: list[ToolVersion]
    ) -> ForgeReport:
        """``report`` once the suites of the active tools that call this tool pass against
        the new version (foundry/dependents.py): with their warnings, or refused naming each
        dependent@version and test it breaks."""
        if not history:  # a new tool: nothing calls it yet
            return report
        outcome = check_dependents(
            self.registry,
            self._config,
            candidate_version(parsed, report, history),
            callees=self._stand_in_callees,
            python_runner=self._python_runner,
        )
        if outcome is None:
            return report
        findings = (*report.findings, *outcome.findings())
        if outcome.passed:
            step = replace(report.step, message=f"{report.step.message}; {outcome.message()}")
            return replace(report, step=step, findings=findings)
        step = StepResult(
            StepStatus.BLOCKED, blockers=("breaks_dependents",), message=outcome.message()
        )
        return replace(report, status=VersionStatus.REJECTED, step=step, findings=findings)

    def _with_run(
        self, draft: Draft | Mapping[str, Any] | str | bytes
    ) -> Draft | Mapping[str, Any] | str | bytes | CreateResult:
        """``draft`` with its ``from_run`` made into code and a first test; a refusal when
        the run cannot be; ``draft`` itself when it names no run."""
        draft = self._decoded(draft, "from_run")
        if not isinstance(draft, Mapping) or draft.get("from_run") is None:
            return draft
        name = draft.get("name") if isinstance(draft.get("name"), str) else None
        if draft.get("code") is not None:
            problem = Problem("$.from_run", "give code or from_run, not both")
            return self._result(invalid_draft(name, [problem]))
        try:
            return draft_from_run(self.registry, draft["from_run"], draft)
        except RunError as exc:
            return self._result(invalid_draft(name, [Problem("$.from_run", str(exc))]))

    def _with_patch(
        self, draft: Draft | Mapping[str, Any] | str | bytes
    ) -> Draft | Mapping[str, Any] | str | bytes | CreateResult:
        """``draft`` with the code its ``base_version`` and ``patch`` make; a refusal when
        they cannot (located, naming the hunk); ``draft`` itself when it gives no patch."""
        draft = self._decoded(draft, "patch", "base_version")
        if not isinstance(draft, Mapping) or not gives_patch(draft):
            return draft
        try:
            return draft_from_patch(self.registry, draft)
        except DraftError as exc:
            name = draft.get("name") if isinstance(draft.get("name"), str) else None
            return self._result(invalid_draft(name, exc.problems))

    def _decoded(
        self, draft: Draft | Mapping[str, Any] | str | bytes, *keys: str
    ) -> Draft | Mapping[str, Any] | str | bytes:
        """A draft's JSON text decoded when it may hold one of ``keys`` (the foundry resolves
        those before the forge parses), else ``draft`` as it is."""
        if isinstance(draft, str):
            named = any(key in draft for key in keys)
        elif isinstance(draft, bytes):
            named = any(key.encode() in draft for key in keys)
        else:
            return draft
        if not named:
            return draft
        try:
            decoded: Mapping[str, Any] | str | bytes = decode(
                draft, JsonLimits(max_bytes=self._draft_limits.max_draft_bytes)
            )
            return decoded
        except InvalidJson:
            return draft  # the forge's parse says why

    def _history(self, name: str) -> list[ToolVersion]:
        return self.registry.versions_of(name)  # [] for a new tool

    def _name_problems(self, name: str, current: ToolVersion | None) -> list[Problem]:
        """Why no version may be added under ``name`` now: a person disabled the tool, or it
        is a new name that passes for an existing tool's (spec/names.py:name_keys)."""
        if current is None:
            # stored keys, one index probe: comparing with every name grew with the registry
            twin = self.registry.lookalike(name)
            if twin is None:
                return []
            message = (
                f"{name!r} looks like the existing tool {twin!r} (names are compared without "
                "case, '-' or '_' and lookalike characters): choose a distinct name, or use "
                f"{twin!r} to make its next version"
            )
            return [Problem("$.name", message)]
        if current.status is VersionStatus.DISABLED:
            who = self.registry.disabled_by(name)
            message = (
                f"{name!r} is disabled (by {who}); a person must enable it before a new version"
            )
            return [Problem("$.name", message)]
        return []

    def _register(
        self,
        parsed: Draft,
        report: ForgeReport,
        previous: ExistingTool | None,
        findings: tuple[Finding, ...],
        by: str,
        callees: Callees,
    ) -> ToolVersion:
        # the draft's author is what it says of itself; the audit's actor is who acted. The
        # JSON columns get the stored form of the typed values here, at the registry's door.
        return self.registry.add_version(
            NewVersion(
                name=parsed.name,
                code=parsed.code,
                description=parsed.description,
                parameters=parsed.parameters,
                status=report.status,
                language=parsed.language.value,
                returns=parsed.returns,
                tests=[t.to_dict() for t in parsed.tests],
                fixtures=[f.to_dict() for f in parsed.fixtures],
                capabilities=parsed.capabilities,
                author=parsed.author or by,
                parent_version=previous.version if previous else None,
                findings=[f.to_dict() for f in findings],
                test_results=[t.to_dict() for t in report.test_results],
                gate=GateRecord(
                    changes_tests=parsed.changes_tests,
                    suite=_suite(report.regression if previous else None),
                    regression=_regression_record(report.regression),
                    policy=report.decision,
                    distinct_from=parsed.distinct_from,
                ),
                uses=callees.uses,
            ),
            actor=by,
        )

    def _duplicate(self, draft: Draft, sha256: str, findings: list[Finding]) -> str | None:
        """Name an active tool with this exact code, or one of the closest few (search, a
        compatible schema) that passes every test of the draft, within the draft's time
        budget; the finding says how to call it. An error, unless the draft's
        ``distinct_from`` names that tool (then a warning, and the draft goes on)."""
        same = self.registry.find_active_by_sha(sha256, exclude=draft.name)
        if same is not None:
            message = f"the active tool {same.name!r} has exactly this code" + _how_to_call(
                same.name, same.parameters
            )
            severity = _duplicate_severity(draft, same.name, self._duplicate_candidates > 0)
            findings.append(Finding("duplicate", severity, message, path="$.code"))
            return same.name
        count = self._duplicate_candidates
        if count <= 0:
            return None
        # every match is a candidate (no relevance floor): the tests decide, not the words
        hits = self.registry.search(f"{draft.name} {draft.description}", count + 1, floor=0.0)
        names = [h.name for h in hits if h.name != draft.name][:count]
        if not names:
            return None
        found = {
            v.name: v
            for v in self.registry.current_versions(status=VersionStatus.ACTIVE, names=names)
        }
        # a candidate is run against the draft's tests, not its own: skip parsing those
        candidates = [existing_tool(found[n], with_tests=False) for n in names if n in found]
        if not candidates:
            return None
        from toolfoundry.forge.sandbox_runner import SandboxRunner

        runner = SandboxRunner(self._callees())
        # the draft's own time budget: a call's timeout per test, for all the candidates
        deadline = time.monotonic() + self._run_limits.timeout_s * max(len(draft.tests), 1)
        # the first match is enough; behaves_like stops at the first failing test
        twin = None
        for candidate in candidates:
            if time.monotonic() > deadline:
                break
            if behaves_like(candidate, draft, runner=runner, limits=self._run_limits):
                twin = candidate
                break
        if twin is None:
            return None
        message = f"the active tool {twin.name!r} already passes every test of this draft"
        message += _how_to_call(twin.name, twin.parameters)
        severity = _duplicate_severity(draft, twin.name, True)
        findings.append(Finding("behavioural_duplicate", severity, message, path="$.tests"))
        return twin.name

    def _result(
        self,
        report: ForgeReport,
        *,
        version: int | None = None,
        findings: tuple[Finding, ...] | None = None,
        duplicate_of: str | None = None,
    ) -> CreateResult:
        earlier = report.regression.results if report.regression is not None else ()
        return CreateResult(
            status=report.status,
            name=report.name,
            version=version,
            findings=report.findings if findings is None else findings,
            test_results=(*report.test_results, *(replace(t, regression=True) for t in earlier)),
            step=report.step,
            duplicate_of=duplicate_of,
            report=report,
        )


# the findings of the duplicate check (an error when it refuses the draft)
DUPLICATE_RULES = frozenset({"duplicate", "behavioural_duplicate"})


def _says_distinct(draft: Draft, twin: str) -> bool:
    """Whether the draft's ``distinct_from`` names ``twin`` (with its reason)."""
    return draft.distinct_from is not None and draft.distinct_from.name == twin


def _duplicate_severity(draft: Draft, twin: str, check: bool) -> Severity:
    """An error refuses the draft; with the check off (``duplicate_candidates = 0``) or the
    twin named in ``distinct_from``, a warning."""
    return Severity.ERROR if check and not _says_distinct(draft, twin) else Severity.WARNING


def _how_to_call(name: str, parameters: Mapping[str, Any] | None) -> str:
    """The rest of a duplicate's message: how to call the tool that does it already, and how
    to say this draft differs."""
    schema = encode(parameters) if parameters is not None else "{}"
    return (
        f": call it instead (call_tool with name {name!r}, or tools[{name!r}](args) in run_js; "
        f"its parameters: {schema}), or improve it with a new version. If this tool differs, "
        f'say how with distinct_from: {{"name": {encode(name)}, "why": "..."}}'
    )


def _identical(draft: Draft, history: list[ToolVersion]) -> ToolVersion | None:
    """The tool's current or pending version identical to ``draft``, if any (an older,
    superseded version is not: resubmitting it is a new version, like any change)."""
    identity = _draft_identity(draft)
    for version in reversed(history):
        if not (version.current or version.status is VersionStatus.PENDING_APPROVAL):
            continue
        if _stored_identity(version) == identity:
            return version
    return None


def _previous(current: ToolVersion | None, history: list[ToolVersion]) -> ExistingTool | None:
    """The active current version the draft must not regress from, with its earlier suite."""
    if current is None or current.status is not VersionStatus.ACTIVE:
        return None
    return with_suite(current, lambda: history)


def _draft_identity(draft: Draft) -> str:
    return version_identity(
        code=draft.code,
        description=draft.description,
        parameters=draft.parameters,
        returns=draft.returns,
        tests=[t.to_dict() for t in draft.tests],
        fixtures=[f.to_dict() for f in draft.fixtures],
        capabilities=draft.capabilities,
        language=draft.language.value,
    )


def _stored_identity(version: ToolVersion) -> str:
    return version_identity(
        code=version.code,
        description=version.description,
        parameters=version.parameters,
        returns=version.returns,
        tests=version.tests,
        fixtures=version.fixtures,
        capabilities=version.capabilities,
        language=version.language,
    )


def _unchanged(version: ToolVersion) -> CreateResult:
    """The answer to a resubmission identical to ``version``: that version, as it is."""
    message = (
        f"identical to {version.name} v{version.version} ({version.status.value}): "
        "nothing was created"
    )
    return CreateResult(
        status=version.status,
        name=version.name,
        version=version.version,
        findings=(),
        test_results=tuple(stored_result(r) for r in version.test_results),
        step=StepResult(StepStatus.COMPLETED, message=message),
        unchanged=True,
    )


def _suite(outcome: RegressionOutcome | None) -> GateSuite:
    """The accumulated suite a version was gated by: the earlier tests it kept (with the
    version each came from) and those it retired, with reasons; its own tests are its own."""
    if outcome is None:
        return GateSuite()
    return GateSuite(earlier=earlier_tests(outcome.kept), retired=outcome.retired)


def _regression_record(outcome: RegressionOutcome | None) -> RegressionRecord | None:
    """The regression run as the gate record keeps it (its results in their JSON form)."""
    if outcome is None:
        return None
    return RegressionRecord(
        previous_version=outcome.previous_version,
        passed=outcome.passed,
        failed=outcome.failed,
        changed=outcome.changed,
        unknown_changes=outcome.unknown_changes,
        retired=outcome.retired,
        suite=tuple(s.label for s in outcome.kept),
        results=tuple(r.to_dict() for r in outcome.results),
    )
