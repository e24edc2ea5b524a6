"""The gate in front of upstream MCP servers' tools: policy, approval, schema, usage, audit.

A call of ``UPSTREAM.TOOL`` (a snippet's ``tools.UPSTREAM.TOOL(args)``, a tool's code, a
client's ``call_tool`` or, with ``[serve] expose_upstream``, its own name) goes through
:class:`UpstreamGate`, in this order:

1. the upstream is configured and lists the tool (``not_found`` otherwise; ``unavailable`` while
   an upstream never listed anything yet);
2. its policy (upstream/policy.py): ``deny`` is ``capability_denied``; ``approve`` needs a
   person's approval **of the current input schema's hash** (``not_active`` until then, and
   again when the server changes the schema);
3. the arguments pass the JSON gate and the tool's input schema (``invalid_arguments``);
4. the call, by the earlier of the caller's deadline (a snippet's outer budget) and the
   upstream's ``timeout_s``: a server that is down, dies mid-call or does not answer in time is
   ``unavailable``; its answer passes the JSON gate with its credentials redacted;
5. the call is counted in usage and audited like a registry tool's, with its caller (the
   version column stays empty), and counts against the outer call's ``inner_calls``.

A draft's test never reaches an upstream: its tool fixtures answer for it.
"""

from __future__ import annotations

import dataclasses
import difflib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from toolfoundry.base.json_gate import encode
from toolfoundry.foundry.call import gated_arguments
from toolfoundry.registry.calls import CallRecord, CallStatements
from toolfoundry.registry.records import AGENT_ACTOR
from toolfoundry.spec import CallLimits, CallResult, ErrorKind
from toolfoundry.spec.names import did_you_mean
from toolfoundry.spec.result import elapsed_ms
from toolfoundry.upstream.listing import UpstreamTool
from toolfoundry.upstream.policy import Rule, Verdict, verdict
from toolfoundry.upstream.servers import UpstreamServers

if TYPE_CHECKING:
    from toolfoundry.foundry.inner_calls import Chain, InnerCalls
    from toolfoundry.registry import Registry
    from toolfoundry.registry.upstream_approvals import UpstreamDecision
    from toolfoundry.sandbox.host.protocols import ToolRequest


class Standing(StrEnum):
    """Where an upstream tool stands with the gate."""

    ALLOWED = "allowed"  # its policy lets it run
    APPROVED = "approved"  # a person approved its current input schema
    NEEDS_APPROVAL = "needs_approval"  # never approved (or the approval was revoked)
    SCHEMA_CHANGED = "schema_changed"  # approved for an earlier input schema: asks again
    DENIED = "denied"  # its policy denies it

    @property
    def callable(self) -> bool:
        return self in (Standing.ALLOWED, Standing.APPROVED)


@dataclass(frozen=True)
class UpstreamEntry:
    """One upstream tool with its policy and approval state (what search, show_tool, the
    review page and the MCP listing show).

    Attributes:
        tool: the tool as listed.
        verdict: its policy's rule and why.
        standing: where it stands now.
        approved_schema: the input schema a person last approved, when it differs from the
            current one (``schema_changed``): what the review page diffs against.
        decision: the newest decision about it, if any.
    """

    tool: UpstreamTool
    verdict: Verdict
    standing: Standing
    approved_schema: dict[str, Any] | None
    decision: UpstreamDecision | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.tool.name,
            "upstream": self.tool.upstream,
            "description": self.tool.description,
            "parameters": self.tool.input_schema,
            "annotations": self.tool.annotations,
            "schema_hash": self.tool.schema_hash,
            "policy": self.verdict.rule.value,
            "policy_reason": self.verdict.reason,
            "standing": self.standing.value,
            "decision": None if self.decision is None else self.decision.to_dict(),
        }


def schema_diff(approved: dict[str, Any] | None, current: dict[str, Any]) -> str:
    """The change from the approved input schema to the current one, as a unified diff ("" when
    none was approved): what the review page and ``toolfoundry upstream show`` show."""
    if approved is None:
        return ""
    before = encode(approved, indent=2).splitlines()
    after = encode(current, indent=2).splitlines()
    return "\n".join(difflib.unified_diff(before, after, "approved", "now", lineterm=""))


def standing_of(
    tool: UpstreamTool, rule: Verdict, decisions: list[UpstreamDecision]
) -> tuple[Standing, dict[str, Any] | None]:
    """Where ``tool`` stands under ``rule`` given the decisions about it (oldest first), and
    the schema last approved when it was another one."""
    if rule.rule is Rule.DENY:
        return Standing.DENIED, None
    if rule.rule is Rule.ALLOW:
        return Standing.ALLOWED, None
    latest = decisions[-1] if decisions else None
    if latest is not None and latest.approved and latest.schema_hash == tool.schema_hash:
        return Standing.APPROVED, None
    earlier = [d for d in decisions if d.approved and d.schema_hash != tool.schema_hash]
    if earlier and (latest is None or latest.approved):
        return Standing.SCHEMA_CHANGED, earlier[-1].schema
    return Standing.NEEDS_APPROVAL, None


class UpstreamGate:
    """Calls of upstream tools for one foundry (see the module doc).

    Args:
        servers: the upstream connections.
        registry: the registry (approvals), opened on first use.
        statements: where direct calls are recorded.
        limits: the call limits (``output_bytes`` bounds an answer).
    """

    def __init__(
        self,
        servers: UpstreamServers,
        registry: Callable[[], Registry],
        statements: CallStatements,
        limits: CallLimits,
    ) -> None:
        self.servers = servers
        self._registry = registry
        self._statements = statements
        self._limits = limits

    # ---- what there is -------------------------------------------------------------------

    def entries(self) -> list[UpstreamEntry]:
        """Every listed upstream tool with its policy and standing, by name."""
        tools = self.servers.start().tools()
        if not tools:
            return []
        decisions = self._registry().upstream_decisions([t.name for t in tools])
        return [self._entry(t, decisions.get(t.name, [])) for t in tools]

    def entry(self, name: str) -> UpstreamEntry | None:
        """One upstream tool's entry, or None when no upstream lists it now."""
        found = self.servers.start().find(name)
        if found is None or found[1] is None:
            return None
        decisions = self._registry().upstream_decisions([name]).get(name, [])
        return self._entry(found[1], decisions)

    def entries_for(self, names: Sequence[str]) -> dict[str, UpstreamEntry]:
        """The entries of those of ``names`` an upstream lists now, by name (one read)."""
        servers = self.servers.start()
        listed = [t for n in names if (found := servers.find(n)) and (t := found[1])]
        if not listed:
            return {}
        decisions = self._registry().upstream_decisions([t.name for t in listed])
        return {t.name: self._entry(t, decisions.get(t.name, [])) for t in listed}

    def _entry(self, tool: UpstreamTool, decisions: list[UpstreamDecision]) -> UpstreamEntry:
        settings = self.servers.settings_of(tool.upstream)
        assert settings is not None
        rule = verdict(settings, tool)
        standing, approved = standing_of(tool, rule, decisions)
        return UpstreamEntry(tool, rule, standing, approved, decisions[-1] if decisions else None)

    # ---- decisions -----------------------------------------------------------------------

    def decide(
        self, name: str, *, approve: bool, by: str, reason: str = "", schema_hash: str | None = None
    ) -> UpstreamEntry:
        """Approve (or revoke) ``name`` for its current input schema. ``schema_hash`` is the
        hash the person saw: when the server changed the schema since, nothing is recorded.

        Raises:
            LookupError: no upstream lists ``name`` now.
            ValueError: the schema changed since the person looked.
        """
        entry = self.entry(name)
        if entry is None:
            raise LookupError(f"no upstream lists {name!r} now")
        tool = entry.tool
        if schema_hash is not None and schema_hash != tool.schema_hash:
            raise ValueError(
                f"{name}'s input schema changed since it was shown (now {tool.schema_hash[:12]}): "
                "look at it again before deciding"
            )
        self._registry().decide_upstream(
            name,
            approve=approve,
            schema_hash=tool.schema_hash,
            schema=tool.input_schema,
            by=by,
            reason=reason,
        )
        refreshed = self.entry(name)
        assert refreshed is not None
        return refreshed

    # ---- calls ---------------------------------------------------------------------------

    def call(self, name: str, args: Any, *, by: str = AGENT_ACTOR) -> CallResult:
        """A direct call (``Foundry.call``, MCP ``call_tool``): within the upstream's
        ``timeout_s``, recorded at once."""
        started = time.perf_counter()
        result, listed = self._call(name, args, None, started)
        if listed:
            kind = result.error.kind.value if result.error else None
            self._statements.record_all([CallRecord(name, None, result.duration_ms, kind, by)])
        return result

    def call_inner(self, request: ToolRequest, *, chain: Chain, by: InnerCalls) -> CallResult:
        """A call through ``tools`` (code mode): by the outer deadline, its record joining
        the chain's (written when the outer call ends)."""
        started = time.perf_counter()
        if chain.testing:
            message = (
                f"{request.name!r} is an upstream server's tool, which a test never reaches: a "
                f'tool fixture answers for it ({{"tool": "{request.name}", "args": {{...}}, '
                '"value": ...}} in the test\'s fixtures)'
            )
            return CallResult.failure(
                ErrorKind.CAPABILITY_DENIED, message, duration_ms=elapsed_ms(started)
            )
        result, listed = self._call(request.name, request.args, chain.deadline, started)
        if listed:
            kind = result.error.kind.value if result.error else None
            chain.keep(
                CallRecord(
                    request.name,
                    None,
                    result.duration_ms,
                    kind,
                    chain.actor,
                    caller=by.label,
                    caller_name=by.caller_name,
                )
            )
        return result

    def _call(
        self, name: str, args: Any, deadline: float | None, started: float
    ) -> tuple[CallResult, bool]:
        """The call's result, and whether it reached a listed tool (only those are counted
        and audited, as a registry call is once its name resolved)."""
        servers = self.servers.start()
        upstream = name.partition(".")[0]
        found = servers.find(name)
        if found is None:
            known = [s.name for s in servers.settings]
            message = (
                f"no upstream server {upstream!r} is configured{did_you_mean(upstream, known)}"
            )
            return self._refused(ErrorKind.NOT_FOUND, message, started)
        settings, tool = found
        if tool is None:  # maybe not listed yet: its first connection may still be made
            servers.wait_for(upstream, min(settings.timeout_s, _left(deadline)))
            found = servers.find(name)
            assert found is not None
            settings, tool = found
        if tool is None:
            listed = [t.tool for t in servers.tools() if t.upstream == upstream]
            if not listed and not servers.ready(upstream):
                message = f"{name}: upstream {upstream!r} is {servers.describe_down(upstream)}"
                return self._refused(ErrorKind.UNAVAILABLE, message, started)
            tool_name = name.partition(".")[2]
            close = did_you_mean(tool_name, listed)
            message = f"upstream {upstream!r} lists no tool {tool_name!r}{close}"
            return self._refused(ErrorKind.NOT_FOUND, message, started)
        return self._gated_call(settings.timeout_s, tool, args, deadline, started), True

    @staticmethod
    def _refused(kind: ErrorKind, message: str, started: float) -> tuple[CallResult, bool]:
        return CallResult.failure(kind, message, duration_ms=elapsed_ms(started)), False

    def _gated_call(
        self,
        timeout_s: float,
        tool: UpstreamTool,
        args: Any,
        deadline: float | None,
        started: float,
    ) -> CallResult:
        settings = self.servers.settings_of(tool.upstream)
        assert settings is not None
        decisions: list[UpstreamDecision] = []
        if verdict(settings, tool).rule is Rule.APPROVE:  # only then do decisions matter
            decisions = self._registry().upstream_decisions([tool.name]).get(tool.name, [])
        entry = self._entry(tool, decisions)
        refused = _refusal(entry)
        if refused is not None:
            return CallResult.failure(refused[0], refused[1], duration_ms=elapsed_ms(started))
        checked, problems = gated_arguments(tool.input_schema, args, validator=tool.validator)
        if checked is None:
            return CallResult.failure(
                ErrorKind.INVALID_ARGUMENTS,
                f"{len(problems)} problem(s) with the arguments of {tool.name!r}",
                problems=problems,
                duration_ms=elapsed_ms(started),
            )
        own = time.monotonic() + timeout_s
        result = self.servers.call(
            tool,
            checked.value,
            deadline=own if deadline is None else min(deadline, own),
            output_bytes=self._limits.output_bytes,
        )
        return dataclasses.replace(result, duration_ms=elapsed_ms(started))


def _left(deadline: float | None) -> float:
    return 30.0 if deadline is None else max(0.0, deadline - time.monotonic())


def _refusal(entry: UpstreamEntry) -> tuple[ErrorKind, str] | None:
    """Why the gate refuses a call of ``entry``'s tool now, or None."""
    name, standing = entry.tool.name, entry.standing
    if standing is Standing.DENIED:
        return (
            ErrorKind.CAPABILITY_DENIED,
            f"{name} is denied by the policy ({entry.verdict.reason})",
        )
    if standing is Standing.NEEDS_APPROVAL:
        return ErrorKind.NOT_ACTIVE, (
            f"{name} needs a person's approval before it runs ({entry.verdict.reason}): "
            "a person approves it on the review page (/ui/upstream)"
        )
    if standing is Standing.SCHEMA_CHANGED:
        return ErrorKind.NOT_ACTIVE, (
            f"{name}'s input schema changed since a person approved it: it waits for a new "
            "approval (the review page shows the change)"
        )
    return None
