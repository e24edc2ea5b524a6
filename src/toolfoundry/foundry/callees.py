"""A draft's callees (code mode) resolved against the registry, before any of its code runs.

Each tool the draft's code calls (forge/uses.py: read from the code, or named in ``uses``) must
be an active tool now: an unknown one, or one that is pending, rejected or disabled, refuses the
draft with a finding located where the draft names it (the line of the call, or ``$.uses[i]``).
So must the draft not close a cycle: a tool whose callees (through the current versions'
recorded dependencies) lead back to it would end every call at the depth limit. What passes
becomes the version's dependencies, each with the callee's current version: the one its tests
run against. An upstream server's tool (``UPSTREAM.TOOL``) is resolved by the foundry's
upstreams (its input schema's hash is what the tests ran against).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from toolfoundry.forge import Draft, Finding, ForgeReport
from toolfoundry.forge.uses import Use, draft_uses
from toolfoundry.registry import Dependency, Registry, RegistryError, VersionStatus
from toolfoundry.spec import StepResult, StepStatus
from toolfoundry.spec.names import NAMESPACE_SEPARATOR, did_you_mean, is_qualified

if TYPE_CHECKING:  # the upstream package loads only where upstreams are configured
    from toolfoundry.foundry.upstream_gate import UpstreamGate

# How many levels of callees' callees a cycle is looked for through (far past any depth a
# call can nest to: [limits] inner_call_depth is at most 16).
CYCLE_LEVELS = 64


class UpstreamCallees(Protocol):
    """What the foundry's upstream servers tell the forge about ``UPSTREAM.TOOL``."""

    def resolve(self, name: str) -> tuple[str | None, str, str]:
        """(the input schema's hash, "", "") for an upstream tool a call may reach now; else
        (None, the finding's rule, why): ``unknown_callee`` when no configured upstream lists
        it, ``inactive_callee`` when its policy denies it or it waits for a person."""
        ...


class GateCallees:
    """:class:`UpstreamCallees` over the foundry's upstream gate (foundry/upstream_gate.py):
    a dependent records the input schema's hash its tests ran against."""

    def __init__(self, gate: UpstreamGate) -> None:
        self._gate = gate

    def resolve(self, name: str) -> tuple[str | None, str, str]:
        entry = self._gate.entry(name)
        if entry is None:
            return None, "unknown_callee", f"no configured upstream lists {name!r} now"
        if not entry.standing.callable:
            why = f"{name!r} is {entry.standing.value} ({entry.verdict.reason})"
            return None, "inactive_callee", why
        return entry.tool.schema_hash, "", ""


@dataclass(frozen=True)
class Callees:
    """The draft's callees as the registry has them.

    Attributes:
        uses: one dependency per callee, with the version its tests run against.
        findings: why the draft is refused (empty when it is not).
    """

    uses: tuple[Dependency, ...] = ()
    findings: tuple[Finding, ...] = ()

    @property
    def blockers(self) -> tuple[str, ...]:
        """The step's blockers: each finding's rule, once."""
        return tuple(dict.fromkeys(f.rule for f in self.findings))

    def refusal(self, name: str) -> ForgeReport:
        """The report of the draft ``name`` these callees refuse: rejected, each reason a
        located finding (the line of the call, or ``$.uses[i]``)."""
        shown = "; ".join(f.message for f in self.findings[:3])
        more = f" (and {len(self.findings) - 3} more)" if len(self.findings) > 3 else ""
        step = StepResult(StepStatus.BLOCKED, blockers=self.blockers, message=shown + more)
        return ForgeReport(name, VersionStatus.REJECTED, step, findings=self.findings)


def resolve_callees(
    registry: Registry, draft: Draft, *, upstream: UpstreamCallees | None = None
) -> Callees:
    """Resolve every tool ``draft``'s code calls; see the module doc."""
    uses = draft_uses(draft)
    if not uses:
        return Callees()
    found: list[Dependency] = []
    findings: list[Finding] = []
    for use in uses:
        if is_qualified(use.name):
            dependency, finding = _upstream(use, upstream)
        else:
            dependency, finding = _registry_tool(registry, use, draft.name)
        if finding is not None:
            findings.append(finding)
        elif dependency is not None:
            found.append(dependency)
    if not findings:
        findings += _cycles(registry, draft.name, [u for u in uses if not is_qualified(u.name)])
    return Callees(tuple(found), tuple(findings))


def _registry_tool(
    registry: Registry, use: Use, name: str
) -> tuple[Dependency | None, Finding | None]:
    if use.name == name:
        return None, use.finding(
            "dependency_cycle",
            f"the code calls {name!r}, the tool itself: a tool that calls itself through "
            "`tools` ends every call at the depth limit; recurse inside the code instead",
        )
    try:
        _, number, status = registry.resolve(use.name)
    except RegistryError:
        known = [n for n, _ in registry.active_set()]
        return None, use.finding(
            "unknown_callee",
            f"the code calls {use.name!r}, which is not a tool of this registry: create it "
            "first, or call a tool that exists (search_tools finds them)"
            f"{did_you_mean(use.name, known)}",
        )
    if status is not VersionStatus.ACTIVE:
        return None, use.finding(
            "inactive_callee",
            f"the code calls {use.name!r}, whose current version v{number} is {status.value}: "
            "a tool can only depend on an active tool (its tests run against it); wait until "
            f"{use.name!r} is active, or call another tool",
        )
    return Dependency(use.name, number, None, use.found), None


def _upstream(
    use: Use, upstream: UpstreamCallees | None
) -> tuple[Dependency | None, Finding | None]:
    if upstream is None:
        server = use.name.split(NAMESPACE_SEPARATOR, 1)[0]
        return None, use.finding(
            "unknown_callee",
            f"the code calls {use.name!r}, a tool of the upstream server {server!r}, and no "
            "upstream server is configured ([[upstream]] in toolfoundry.toml)",
        )
    digest, rule, why = upstream.resolve(use.name)
    if digest is None:
        return None, use.finding(rule, f"the code calls {use.name!r}, which it cannot: {why}")
    return Dependency(use.name, None, digest, use.found), None


def _cycles(registry: Registry, name: str, uses: Sequence[Use]) -> list[Finding]:
    """A finding for each direct callee from which the current versions' dependencies lead
    back to ``name``, showing the cycle."""
    out: list[Finding] = []
    for use in uses:
        path = _path_back(registry, use.name, name)
        if path is not None:
            shown = " -> ".join([name, *path, name])
            out.append(
                use.finding(
                    "dependency_cycle",
                    f"calling {use.name!r} closes a cycle of tools calling each other ({shown}):"
                    " every call of it would end at the depth limit; break the cycle",
                )
            )
    return out


def _path_back(registry: Registry, start: str, target: str) -> list[str] | None:
    """The tools from ``start`` to one whose current version calls ``target`` (breadth
    first, one query a level), or None when none leads there."""
    parents: dict[str, str | None] = {start: None}
    frontier = [start]
    for _ in range(CYCLE_LEVELS):
        if not frontier:
            return None
        nxt: list[str] = []
        for tool, deps in registry.uses_of(frontier).items():
            for dependency in deps:
                if dependency.callee == target:
                    path = [tool]
                    while (parent := parents[path[-1]]) is not None:
                        path.append(parent)
                    return path[::-1]
                if dependency.callee not in parents and not is_qualified(dependency.callee):
                    parents[dependency.callee] = tool
                    nxt.append(dependency.callee)
        frontier = nxt
    return None
