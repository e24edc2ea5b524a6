"""Re-running every active tool's accumulated test suite in the sandbox as it is now.

A version is gated once, at create time, by its own tests and the earlier versions' tests it
kept (the suite of its gate record, spec/gate.py). After an upgrade of the
engine, the prelude or a bundled library, or a change of ``[limits]``, a tool that passed then
may fail now; ``toolfoundry tools verify`` (and :meth:`Foundry.verify`) finds out, running
each test exactly as the gate did: the same runner (forge/testrun.py), the configured call
limits, the version's fixtures, and for an earlier test the fixtures of the version it was
made from layered over them (as ``regression_gate`` merges them).

Each tool ends ``passed``, ``failed`` (with each failing test's reason and diff),
``unavailable`` (no sandbox could run it, e.g. a Python-tier tool where bubblewrap is missing:
nothing is known about the code, so it is not a failure), ``skipped`` (a named tool whose
current version is not active) or ``unfinished`` (its suite ran past the per-tool budget a
background review sets; the tests not reached are not run).

A tool's suite answers its ``tools`` calls with fixtures, so what it calls is checked apart: a
registry tool it calls that cannot be called now, or an upstream server's tool whose input
schema changed since its tests ran, that vanished or that its policy stops
(foundry/upstream_uses.py), fails it. Verification changes nothing and records nothing in the
audit log: it is a read-only check to run as often as wanted (in CI, from cron); its report is
the record.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypedDict

from toolfoundry.config import Config
from toolfoundry.forge.draft_fields import DraftError
from toolfoundry.forge.fixtures import Fixture, merge_fixtures, parse_fixtures
from toolfoundry.forge.regression import ExistingTool
from toolfoundry.forge.sandbox_runner import SandboxRunner
from toolfoundry.forge.testrun import (
    CASES_AT_ONCE,
    CaseResultJson,
    TestResult,
    ToolRunner,
    failed_tests_message,
    run_case,
    sandbox_unavailable,
)
from toolfoundry.foundry.call import fetch_policy
from toolfoundry.foundry.existing import with_suite
from toolfoundry.foundry.fixture_reach import unreachable
from toolfoundry.foundry.upstream_uses import UpstreamUse, UpstreamUseJson, UseState, upstream_uses
from toolfoundry.registry import Registry, RegistryError, ToolVersion, VersionStatus
from toolfoundry.sandbox.host.protocols import ToolsProvider
from toolfoundry.spec import Problem, StepResult, StepStatus
from toolfoundry.spec.names import did_you_mean
from toolfoundry.spec.status import StepJson

if TYPE_CHECKING:
    from toolfoundry.foundry.upstream_gate import UpstreamGate

PASSED, FAILED, UNAVAILABLE, SKIPPED = "passed", "failed", "unavailable", "skipped"
UNFINISHED = "unfinished"
OUTCOMES = (PASSED, FAILED, UNAVAILABLE, SKIPPED, UNFINISHED)


class ToolVerificationJson(TypedDict):
    """One tool's verification as ``tools verify --json`` prints it."""

    name: str
    version: int
    language: str
    outcome: str
    tests: int
    failed: list[str]
    message: str
    results: list[CaseResultJson]
    unreachable: list[dict[str, str]]
    callees: list[dict[str, str]]
    upstream: list[UpstreamUseJson]


class VerifyReportJson(TypedDict):
    """What ``toolfoundry tools verify --json`` prints."""

    ok: bool
    step: StepJson
    counts: dict[str, int]
    tools: list[ToolVerificationJson]


@dataclass(frozen=True)
class ToolVerification:
    """How one tool's current version did against its accumulated suite.

    Attributes:
        outcome: ``passed``, ``failed``, ``unavailable`` or ``skipped``.
        results: every test's result, earlier versions' tests (``vN:name``) first.
        message: one sentence for a person (why it failed, was unavailable or skipped).
        unreachable: the suite's fixture URLs a call could not fetch under today's
            ``[fetch]`` (foundry/fixture_reach.py): the tests pass on canned answers, every
            real call would fail. Each makes the tool fail verification.
        callees: the tools its code calls (code mode) that cannot be called now (disabled,
            not active, gone; an upstream tool that vanished or that its policy stops), or
            an upstream tool whose input schema changed since its tests ran. Each makes the
            tool fail verification.
        upstream: every upstream server's tool its code calls, with its state now.
    """

    name: str
    version: int
    language: str
    outcome: str
    results: tuple[TestResult, ...] = ()
    message: str = ""
    unreachable: tuple[Problem, ...] = ()
    callees: tuple[Problem, ...] = ()
    upstream: tuple[UpstreamUse, ...] = ()

    @property
    def failed(self) -> tuple[str, ...]:
        """Labels of the tests that failed."""
        return tuple(r.name for r in self.results if not r.passed)

    def to_dict(self) -> ToolVerificationJson:
        """JSON-ready form (every result with its reason and diff)."""
        return {
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "outcome": self.outcome,
            "tests": len(self.results),
            "failed": list(self.failed) if self.outcome == FAILED else [],
            "message": self.message,
            "results": [r.to_dict() for r in self.results],
            "unreachable": [p.to_dict() for p in self.unreachable],
            "callees": [p.to_dict() for p in self.callees],
            "upstream": [u.to_dict() for u in self.upstream],
        }


@dataclass(frozen=True)
class VerifyReport:
    """Every verified tool, by name, and the step outcome of the whole run."""

    tools: tuple[ToolVerification, ...]

    def count(self, outcome: str) -> int:
        """How many tools ended with ``outcome``."""
        return sum(1 for t in self.tools if t.outcome == outcome)

    @property
    def ok(self) -> bool:
        """True when no tool failed (unavailable and skipped ones are not failures)."""
        return self.count(FAILED) == 0

    @property
    def step(self) -> StepResult:
        """``completed``, or ``blocked`` with ``tests_failed`` naming the failing tools."""
        counts = ", ".join(f"{self.count(o)} {o}" for o in OUTCOMES if self.count(o))
        summary = f"{len(self.tools)} tool(s) verified" + (f": {counts}" if counts else "")
        if self.ok:
            return StepResult(StepStatus.COMPLETED, message=summary)
        failing = [t.name for t in self.tools if t.outcome == FAILED]
        details = {"failed_tools": failing}
        message = f"{summary} ({', '.join(failing)})"
        return StepResult(StepStatus.BLOCKED, None, ("tests_failed",), message, details)

    def to_dict(self) -> VerifyReportJson:
        """What ``toolfoundry tools verify --json`` prints."""
        return {
            "ok": self.ok,
            "step": self.step.to_dict(),
            "counts": {o: self.count(o) for o in OUTCOMES},
            "tools": [t.to_dict() for t in self.tools],
        }


class Verifier:
    """Runs the suites of one registry's tools under one configuration.

    ``python_runner`` gives the Python tier's runner, or None where the tier is unavailable
    (the Foundry's own, so the same executor and process limits as at create time).
    ``tool_budget_s`` bounds one tool's suite: no test starts after it (the one running
    then ends at its own timeout), and a tool cut short with no failure is ``unfinished``.
    ``upstream`` gives the foundry's upstream gate (None: no ``[[upstream]]``), which the
    upstream tools the tools call are checked against.
    """

    def __init__(
        self,
        registry: Registry,
        config: Config,
        *,
        python_runner: Callable[[], ToolRunner | None] = lambda: None,
        callees: Callable[[], ToolsProvider | None] = lambda: None,
        tool_budget_s: float | None = None,
        upstream: Callable[[], UpstreamGate | None] = lambda: None,
    ) -> None:
        self.registry = registry
        self._limits = config.limits
        self._fetch = config.fetch
        self._python_runner = python_runner
        # a suite's `tools` calls: its tool fixtures, then the registry's pure tools
        self._callees = callees
        self._budget_s = tool_budget_s
        self._upstream = upstream

    def verify(
        self,
        names: Sequence[str] | None = None,
        *,
        progress: Callable[[ToolVerification], None] | None = None,
    ) -> VerifyReport:
        """Verify the named tools (default: every tool whose current version is active).

        Raises:
            RegistryError: ``not_found`` naming every unknown tool (nothing is run then).
        """
        done: list[ToolVerification] = []
        for item in self.each(names):
            done.append(item)
            if progress is not None:
                progress(item)
        return VerifyReport(tuple(done))

    def each(
        self, names: Sequence[str] | None = None, *, at_once: int = CASES_AT_ONCE
    ) -> Iterator[ToolVerification]:
        """:meth:`verify`, one tool at a time, in name order, as each finishes; ``at_once``
        1 runs every test in the calling thread (a background review's low-priority one)."""
        targets = self._targets(names)
        active = [v.name for v in targets if v.status is VersionStatus.ACTIVE]
        parents = self.registry.parent_fixtures(active)
        callees = self._callee_problems(active)
        js_runner = SandboxRunner(self._callees())

        def work(v: ToolVersion) -> ToolVerification:
            found = self._one(v, parents.get(v.name, []), js_runner)
            return _with_callees(found, callees.get(v.name, _NOTHING))

        # tools run CASES_AT_ONCE at a time, each tool's tests in order (the engine is
        # thread-safe and wasm calls drop the GIL); map keeps the name order
        if at_once == 1:
            yield from map(work, targets)
            return
        with ThreadPoolExecutor(max_workers=at_once) as pool:
            yield from pool.map(work, targets)

    def _callee_problems(self, names: Sequence[str]) -> dict[str, CalleeCheck]:
        """Per tool, what the tools its current version calls say now (see
        :class:`CalleeCheck`): two reads for the registry's callees, whatever the number of
        tools, and the upstream servers' listings for theirs."""
        uses = self.registry.uses_of(names)
        wanted = sorted({d.callee for deps in uses.values() for d in deps if d.version})
        now = {v.name: v for v in self.registry.current_versions(names=wanted)} if wanted else {}
        upstream_deps = [d for deps in uses.values() for d in deps if d.version is None]
        states = (
            upstream_uses(self._upstream(), upstream_deps, wait_s=UPSTREAM_WAIT_S)
            if upstream_deps
            else {}
        )
        out: dict[str, CalleeCheck] = {}
        for name, deps in uses.items():
            problems: list[Problem] = []
            notes: list[str] = []
            upstream: list[UpstreamUse] = []
            for d in deps:
                if d.version is None:  # an upstream server's tool
                    state = states[d.callee]
                    upstream.append(state)
                    if state.state.fails:
                        problems.append(
                            Problem(
                                f"tools.{d.callee}",
                                f"calls {d.callee!r} (upstream), {state.state.value}: "
                                f"{state.message}",
                            )
                        )
                    elif state.state is UseState.UNCHECKED:
                        notes.append(f"{d.callee} {state.message}")
                    continue
                callee = now.get(d.callee)
                if callee is None or callee.status is not VersionStatus.ACTIVE:
                    gone = (
                        "gone" if callee is None else f"{callee.status.value} (v{callee.version})"
                    )
                    problems.append(
                        Problem(
                            f"tools.{d.callee}",
                            f"calls {d.callee!r}, which is {gone}: every call that reaches it "
                            "fails dependency_unavailable",
                        )
                    )
                elif callee.version != d.version:
                    notes.append(
                        f"it calls {d.callee} v{callee.version} (tested against v{d.version})"
                    )
            out[name] = CalleeCheck(tuple(problems), tuple(notes), tuple(upstream))
        return out

    def _targets(self, names: Sequence[str] | None) -> list[ToolVersion]:
        if names is None:
            return self.registry.current_versions(status=VersionStatus.ACTIVE)
        wanted = list(dict.fromkeys(names))
        found = self.registry.current_versions(names=wanted)
        unknown = sorted(set(wanted) - {v.name for v in found})
        if unknown:
            listed = ", ".join(repr(n) for n in unknown)
            known = [v.name for v in self.registry.current_versions()] if len(unknown) == 1 else []
            hint = did_you_mean(unknown[0], known)
            raise RegistryError("not_found", f"no tool named {listed}{hint}")
        return found

    def _one(self, v: ToolVersion, parent: list[Any], js_runner: ToolRunner) -> ToolVerification:
        def done(
            outcome: str,
            message: str,
            results: tuple[TestResult, ...] = (),
            unreachable: tuple[Problem, ...] = (),
        ) -> ToolVerification:
            return ToolVerification(
                v.name, v.version, v.language, outcome, results, message, unreachable
            )

        if v.status is not VersionStatus.ACTIVE:
            return done(
                SKIPPED, f"v{v.version} is {v.status.value}: only active versions are verified"
            )
        runner = self._python_runner() if v.language == "python" else js_runner
        if runner is None:
            return done(
                UNAVAILABLE,
                "the Python tier is not available here (no executor), so it was not run",
            )
        try:
            tool = self._tool(v)
            problems: list[Problem] = []
            parent_layer = parse_fixtures(parent, "$.fixtures", problems)
            if problems:
                raise DraftError(problems)
            earlier_fixtures = merge_fixtures(parent_layer, tool.fixtures)
        except (DraftError, TypeError, KeyError, ValueError) as exc:
            return done(FAILED, f"the stored suite cannot be read: {exc}")
        deadline = None if self._budget_s is None else time.monotonic() + self._budget_s
        ran: list[TestResult] = []
        for entry in tool.suite:
            if deadline is not None and time.monotonic() > deadline:
                break
            ran.append(
                run_case(
                    runner,
                    tool.code,
                    entry.case,
                    limits=self._limits,
                    fixtures=tool.fixtures if entry.version == v.version else earlier_fixtures,
                    capabilities=tool.capabilities,
                    tool=v.name,
                    label=entry.case.name if entry.version == v.version else entry.label,
                )
            )
        results = tuple(ran)
        left = len(tool.suite) - len(results)
        unavailable = sandbox_unavailable(results)
        if unavailable is not None:  # the sandbox never ran the code: nothing is known of it
            return done(UNAVAILABLE, unavailable.message, results)
        refused = tuple(self._unreachable(v, tool, parent_layer))
        failed = failed_tests_message(results)
        message = failed or f"all {len(results)} test(s) passed"
        if refused:
            message += (
                f"; {len(refused)} fixture URL(s) no call could fetch under the current [fetch]"
            )
        outcome = FAILED if failed or refused else PASSED
        if left:
            message += (
                f"; {left} of {len(tool.suite)} test(s) not run: the tool's budget of "
                f"{self._budget_s:g} s ran out"
            )
            outcome = FAILED if failed or refused else UNFINISHED
        return done(outcome, message, results, refused)

    def _unreachable(
        self, v: ToolVersion, tool: ExistingTool, parent: tuple[Fixture, ...]
    ) -> list[Problem]:
        """The suite's fixtures (the version's, each test's and, for earlier tests, the
        parent version's) whose request today's fetch policy would refuse at call time."""
        located = [(f"$.fixtures[{i}].url", f) for i, f in enumerate(tool.fixtures)]
        suite = tool.suite
        for entry in suite:
            label = entry.case.name if entry.version == v.version else entry.label
            for i, f in enumerate(entry.case.fixtures):
                located.append((f"{label}: $.fixtures[{i}].url", f))
        if any(entry.version != v.version for entry in suite):
            located += [
                (f"v{v.parent_version}: $.fixtures[{i}].url", f) for i, f in enumerate(parent)
            ]
        if not located:
            return []
        return unreachable(located, fetch_policy(tool.capabilities, self._fetch))

    def _tool(self, v: ToolVersion) -> ExistingTool:
        """The version with the earlier tests it was gated by (and did not retire)."""
        return with_suite(v, lambda: self.registry.history(v.name))


# how long verify waits for an upstream's first connection before calling its tools unchecked
UPSTREAM_WAIT_S = 30.0


@dataclass(frozen=True)
class CalleeCheck:
    """What the tools one version calls say now.

    Attributes:
        problems: each callee that fails the tool (a registry tool that cannot be called; an
            upstream tool changed, vanished or blocked).
        notes: what a person should know and fails nothing (a registry callee now at another
            version than the tests ran against; an upstream that could not be asked).
        upstream: each upstream callee's state.
    """

    problems: tuple[Problem, ...] = ()
    notes: tuple[str, ...] = ()
    upstream: tuple[UpstreamUse, ...] = ()


_NOTHING = CalleeCheck()


def _with_callees(found: ToolVerification, check: CalleeCheck) -> ToolVerification:
    """``found`` with what its callees say: any problem fails it; the notes are added to its
    message (its suite just ran against the registry callees as they are)."""
    if found.outcome == SKIPPED or not (check.problems or check.notes or check.upstream):
        return found
    message = found.message
    if check.problems:
        message += f"; {len(check.problems)} tool(s) it calls cannot be called as tested"
    if check.notes:
        message += "; " + "; ".join(check.notes)
    outcome = FAILED if check.problems and found.outcome != UNAVAILABLE else found.outcome
    return replace(
        found,
        outcome=outcome,
        message=message,
        callees=check.problems,
        upstream=check.upstream,
    )
