"""Whether the upstream tools a version calls are still what its tests ran against.

A dependency on an upstream server's tool (``UPSTREAM.TOOL``, registry/dependencies.py) records
the hash of the input schema the dependent was tested with. The server may change that schema,
stop listing the tool, or be removed from toolfoundry.toml; its policy or a revoked approval may
stop its calls. :func:`upstream_uses` says which, for ``tools verify`` (foundry/verify.py: a
changed, vanished or blocked callee fails the dependent), the scheduled library review (through
verify) and the tool view of the review page and ``show_tool`` (foundry/review.py).

An upstream that is down and never listed anything in this process cannot be asked: its uses
are ``unchecked``, which fails nothing (the next verify asks again).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, TypedDict

from toolfoundry.registry.records import Dependency
from toolfoundry.spec.names import NAMESPACE_SEPARATOR

if TYPE_CHECKING:
    from toolfoundry.foundry.upstream_gate import UpstreamGate


class UseState(StrEnum):
    """Where an upstream callee stands against what the dependent was tested with."""

    UNCHANGED = "unchanged"  # listed, same input schema, callable
    CHANGED = "changed"  # listed with another input schema than the tests ran against
    VANISHED = "vanished"  # its upstream is not configured, or no longer lists it
    BLOCKED = "blocked"  # listed as tested, but its policy denies it or it waits for a person
    UNCHECKED = "unchecked"  # its upstream is down and never listed: not known

    @property
    def fails(self) -> bool:
        """Whether the dependent fails verification (its real calls would fail, or reach a
        tool its tests never saw)."""
        return self in (UseState.CHANGED, UseState.VANISHED, UseState.BLOCKED)


class UpstreamUseJson(TypedDict):
    """One upstream callee's state as ``tools verify --json`` and ``show_tool`` give it."""

    tool: str
    state: str
    tested_schema_hash: str | None
    schema_hash: str | None
    message: str


@dataclass(frozen=True)
class UpstreamUse:
    """One upstream tool a version calls, now.

    Attributes:
        tool: ``UPSTREAM.TOOL``.
        state: see :class:`UseState`.
        tested_hash: the input schema's hash its tests ran against.
        schema_hash: the hash the upstream lists now (None when it does not list it).
        message: one sentence for a person.
    """

    tool: str
    state: UseState
    tested_hash: str | None
    schema_hash: str | None
    message: str

    def to_dict(self) -> UpstreamUseJson:
        return {
            "tool": self.tool,
            "state": self.state.value,
            "tested_schema_hash": self.tested_hash,
            "schema_hash": self.schema_hash,
            "message": self.message,
        }


def upstream_uses(
    gate: UpstreamGate | None, uses: Iterable[Dependency], *, wait_s: float
) -> dict[str, UpstreamUse]:
    """The state of each upstream callee among ``uses``, by name. An upstream whose first
    connection is under way is waited for, at most ``wait_s`` seconds (0: not at all)."""
    wanted = {d.callee: d.schema_hash for d in uses if d.version is None}
    if not wanted:
        return {}
    if gate is None:
        why = "no [[upstream]] server is configured"
        return {n: UpstreamUse(n, UseState.VANISHED, h, None, why) for n, h in wanted.items()}
    servers = gate.servers.start()
    if wait_s > 0:
        for upstream in sorted({n.partition(NAMESPACE_SEPARATOR)[0] for n in wanted}):
            servers.wait_for(upstream, wait_s)
    entries = gate.entries_for(list(wanted))
    out: dict[str, UpstreamUse] = {}
    for name, tested in wanted.items():
        upstream, _, tool = name.partition(NAMESPACE_SEPARATOR)
        entry = entries.get(name)
        if entry is not None:
            now = entry.tool.schema_hash
            if tested is not None and now != tested:
                why = (
                    f"its input schema changed since the tests ran (tested {tested[:12]}, "
                    f"now {now[:12]}): check the calls, then make a new version"
                )
                out[name] = UpstreamUse(name, UseState.CHANGED, tested, now, why)
            elif not entry.standing.callable:
                why = f"it is {entry.standing.value} ({entry.verdict.reason})"
                out[name] = UpstreamUse(name, UseState.BLOCKED, tested, now, why)
            else:
                out[name] = UpstreamUse(name, UseState.UNCHANGED, tested, now, "as tested")
            continue
        if servers.settings_of(upstream) is None:
            why = f"no upstream {upstream!r} is configured ([[upstream]] in toolfoundry.toml)"
            out[name] = UpstreamUse(name, UseState.VANISHED, tested, None, why)
        elif not servers.ready(upstream) and not any(
            t.upstream == upstream for t in servers.tools()
        ):
            why = f"upstream {upstream!r} is {servers.describe_down(upstream)}: not checked"
            out[name] = UpstreamUse(name, UseState.UNCHECKED, tested, None, why)
        else:
            why = f"upstream {upstream!r} no longer lists {tool!r}"
            out[name] = UpstreamUse(name, UseState.VANISHED, tested, None, why)
    return out
