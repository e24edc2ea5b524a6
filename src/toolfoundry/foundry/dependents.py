"""A change never silently breaks a tool's users: a new version of a tool must pass the suites
of the active tools that call it (code mode), with the new version in place of the current one.

Before a new version of X is registered, the accumulated suite of each active tool whose
current version calls X (its recorded dependencies, registry/dependencies.py) runs as
``tools verify`` runs it, except that every call of X in those tests, at any depth, reaches the
new version (a stand-in, ``inner_calls.StandIn``). The callers of X's callers follow, level by
level, up to ``[limits] inner_call_depth`` levels (a caller further away never reaches X).
A test that fails against the new version and passes against the current one refuses the new
version, naming ``dependent@version`` and the test; a test that fails against both is not the
new version's doing and is named in a warning.

The cost is bounded by ``[limits] dependent_tests``: the suites run whole, in that order, while
their test cases fit; the dependents past it are named in a warning on the new version (which
is registered), and ``toolfoundry tools verify`` runs their suites.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from toolfoundry.config import Config
from toolfoundry.forge import Draft, Finding, ForgeReport, Severity, TestResult, ToolRunner
from toolfoundry.foundry.verify import UNAVAILABLE, Verifier
from toolfoundry.registry import Registry, ToolVersion, VersionStatus
from toolfoundry.sandbox.host.protocols import ToolsProvider
from toolfoundry.spec.gate import GateRecord


@dataclass(frozen=True)
class BrokenTest:
    """One test of a dependent's suite that fails against the new version: why, and what
    differs (the lines of its diff, expected ``-`` and actual ``+``, cut short)."""

    name: str
    version: int
    test: str
    reason: str
    differs: str = ""

    @property
    def label(self) -> str:
        """``dependent@version``."""
        return f"{self.name}@{self.version}"


@dataclass(frozen=True)
class DependentsOutcome:
    """How the tools that call a new version's tool fared against it.

    Attributes:
        callee: the tool the new version is of.
        checked: the dependents whose suites ran (``name@version``).
        broken: the tests that fail against the new version and pass against the current.
        failing_before: the tests that fail against the current version too.
        unchecked: the dependents past the budget (``name@version``).
        budget: ``[limits] dependent_tests``.
    """

    callee: str
    checked: tuple[str, ...] = ()
    broken: tuple[BrokenTest, ...] = ()
    failing_before: tuple[BrokenTest, ...] = ()
    unchecked: tuple[str, ...] = ()
    budget: int = 0

    @property
    def passed(self) -> bool:
        """True when no dependent's test breaks because of the new version."""
        return not self.broken

    def message(self) -> str:
        """The step's words: what broke, or what passed."""
        if self.broken:
            shown = "; ".join(f"{b.label} test {b.test!r}: {b.reason}" for b in self.broken[:5])
            more = f" (and {len(self.broken) - 5} more)" if len(self.broken) > 5 else ""
            who = sorted({b.label for b in self.broken})
            return (
                f"the new version of {self.callee!r} breaks {len(who)} tool(s) that call it "
                f"({', '.join(who)}): {shown}{more}"
            )
        return f"the suites of {len(self.checked)} tool(s) that call it pass against it"

    def findings(self) -> tuple[Finding, ...]:
        """A located error for each broken test; warnings for tests failing before and for
        the dependents past the budget."""
        out = [
            Finding(
                "breaks_dependent",
                Severity.ERROR,
                f"{b.label} calls {self.callee!r}, and its test {b.test!r} fails against this "
                f"version (it passes against the current one): {b.reason}{b.differs}. Keep what "
                f"{b.name!r} relies on, or make a new version of {b.name!r} first",
                path="$.code",
            )
            for b in self.broken
        ]
        out += [
            Finding(
                "dependent_failing",
                Severity.WARNING,
                f"{b.label}'s test {b.test!r} fails against the current version of "
                f"{self.callee!r} as well, so not because of this one: {b.reason}",
            )
            for b in self.failing_before
        ]
        if self.unchecked:
            out.append(
                Finding(
                    "dependents_unchecked",
                    Severity.WARNING,
                    f"{len(self.unchecked)} tool(s) that call {self.callee!r} were not run "
                    f"against this version: their suites are past [limits] dependent_tests "
                    f"({self.budget} test cases): {', '.join(self.unchecked)}. `toolfoundry "
                    "tools verify` runs them",
                )
            )
        return tuple(out)


def candidate_version(
    draft: Draft, report: ForgeReport, history: Sequence[ToolVersion]
) -> ToolVersion:
    """The version ``draft`` (forged as ``report``) would be registered as, the next number
    after ``history``'s: what its dependents' suites call before it is registered."""
    return ToolVersion(
        id=0,
        name=draft.name,
        version=max(v.version for v in history) + 1,
        language=draft.language.value,
        code=draft.code,
        sha256=report.code_sha256 or "",
        description=draft.description,
        parameters=draft.parameters,
        returns=draft.returns,
        tests=[],
        fixtures=[],
        capabilities=draft.capabilities,
        capability_hash=report.capabilities_hash or "",
        level="primitive",
        status=VersionStatus.ACTIVE,
        author=draft.author or "",
        created_at=datetime.now(UTC),
        parent_version=None,
        findings=[],
        test_results=[],
        gate=GateRecord(),
    )


def check_dependents(
    registry: Registry,
    config: Config,
    candidate: ToolVersion,
    *,
    callees: Callable[[ToolVersion | None], ToolsProvider | None],
    python_runner: Callable[[], ToolRunner | None] = lambda: None,
) -> DependentsOutcome | None:
    """Run the suites of the active tools that call ``candidate``'s tool against it (see the
    module doc); None when no active tool calls it.

    Args:
        candidate: the new version as it would be registered (its number the next one).
        callees: the registry's tools as tests reach them, with a stand-in (the candidate)
            or without one (the current version), as ``Caller.test_callees`` gives them.
    """
    dependents = _dependents(registry, candidate.name, config.limits.inner_call_depth)
    if not dependents:
        return None
    budget = config.dependent_tests
    chosen: list[ToolVersion] = []
    unchecked: list[str] = []
    left = budget
    for v in dependents:
        size = len(v.tests) + (len(v.gate.suite.earlier) if v.gate.suite else 0)
        if size <= left:
            chosen.append(v)
            left -= size
        else:
            unchecked.append(f"{v.name}@{v.version}")
    broken: list[BrokenTest] = []
    names = [v.name for v in chosen]
    if names:
        against_new = _verifier(registry, config, lambda: callees(candidate), python_runner)
        for verified in against_new.verify(names).tools:
            if verified.outcome == UNAVAILABLE:
                continue
            broken += [
                BrokenTest(
                    verified.name, verified.version, r.name, r.reason or "it fails", _differs(r)
                )
                for r in verified.results
                if not r.passed
            ]
    before: list[BrokenTest] = []
    if broken:
        # a test failing against the current version too is not the new version's doing
        against_current = _verifier(registry, config, lambda: callees(None), python_runner)
        names = list(dict.fromkeys(b.name for b in broken))
        failing = {
            (t.name, r.name)
            for t in against_current.verify(names).tools
            for r in t.results
            if not r.passed
        }
        before = [b for b in broken if (b.name, b.test) in failing]
        broken = [b for b in broken if (b.name, b.test) not in failing]
    return DependentsOutcome(
        candidate.name,
        checked=tuple(f"{v.name}@{v.version}" for v in chosen),
        broken=tuple(broken),
        failing_before=tuple(before),
        unchecked=tuple(unchecked),
        budget=budget,
    )


# how much of a broken test's diff a finding shows
DIFF_CHARS = 300


def _differs(result: TestResult) -> str:
    """`` (-expected +actual)`` from a failed test's diff, on one line and cut short."""
    lines = [
        line.strip()
        for line in (result.diff or "").splitlines()[2:]
        if line[:1] in "-+" and line.strip() not in "-+"
    ]
    if not lines:
        return ""
    shown = " ".join(lines)
    shown = shown if len(shown) <= DIFF_CHARS else shown[: DIFF_CHARS - 3] + "..."
    return f" ({shown})"


def _verifier(
    registry: Registry,
    config: Config,
    callees: Callable[[], ToolsProvider | None],
    python_runner: Callable[[], ToolRunner | None],
) -> Verifier:
    return Verifier(registry, config, python_runner=python_runner, callees=callees)


def _dependents(registry: Registry, name: str, levels: int) -> list[ToolVersion]:
    """The active current versions that call ``name``, directly first, then the callers of
    those, up to ``levels`` levels; each once, by name within a level."""
    seen = {name}
    order: list[str] = []
    frontier = [name]
    for _ in range(max(levels, 0)):
        callers = registry.dependents(frontier)
        level = sorted(
            {
                d.name
                for found in callers.values()
                for d in found
                if d.current and d.status is VersionStatus.ACTIVE and d.name not in seen
            }
        )
        if not level:
            break
        seen.update(level)
        order += level
        frontier = level
    if not order:
        return []
    found = {v.name: v for v in registry.current_versions(names=order)}
    return [found[n] for n in order if n in found and found[n].status is VersionStatus.ACTIVE]
