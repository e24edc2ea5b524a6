"""The capability policy: which tools activate on passing tests, which wait for a human.

Bounded autonomy by default: a tool that only computes activates as soon as its tests pass.
Per-tool ``localStorage`` counts as local (its namespace is the tool's own, so it can only
affect the tool itself) and activates too. Network hosts, credentials, storage shared across
tools, system access and the Python tier wait in ``pending_approval``. ``[policy]`` in
toolfoundry.toml makes it stricter (``approve = "all"``) or looser per capability.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from toolfoundry.sandbox.host.hosts import pattern_covered, pattern_problem
from toolfoundry.spec import Capabilities, StorageScope
from toolfoundry.spec.gate import CapabilityDecision as CapabilityDecision  # re-exported

APPROVE_MODES = ("risky", "all")
POLICY_KEYS = (
    "approve",
    "auto_approve_network",
    "auto_approve_credentials",
    "auto_approve_shared_storage",
    "auto_approve_python",
    "python_packages",
)


class CapabilityPolicyError(ValueError):
    """A ``[policy]`` table that cannot be used; the message lists every problem."""


@dataclass(frozen=True)
class CapabilityPolicy:
    """The capability policy: which capability sets wait for a human (``[policy]``).

    It decides approval only; what one run may use is the sandbox's ``SandboxPolicy``, and
    which hosts fetch reaches at call time is ``FetchPolicy`` (``[fetch]``).

    Attributes:
        approve: ``"risky"`` (default: only risky capabilities wait) or ``"all"`` (every new
            version waits for a human).
        auto_approve_network: host patterns a tool may fetch without approval.
        auto_approve_credentials: hosts whose configured credential a tool may use unreviewed.
        auto_approve_shared_storage: let tools share localStorage without approval.
        auto_approve_python: let Python-tier (system) tools activate without approval.
        python_packages: installed packages Python-tier tools may import (besides the
            stdlib allowlist of :mod:`toolfoundry.sandbox.process.allowlist`).
    """

    approve: str = "risky"
    auto_approve_network: tuple[str, ...] = ()
    auto_approve_credentials: tuple[str, ...] = ()
    auto_approve_shared_storage: bool = False
    auto_approve_python: bool = False
    python_packages: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.approve not in APPROVE_MODES:
            raise CapabilityPolicyError(f"policy.approve must be one of {APPROVE_MODES}")

    @classmethod
    def from_config(cls, table: Mapping[str, Any] | None) -> CapabilityPolicy:
        """Build from the ``[policy]`` table of toolfoundry.toml; defaults when absent.

        Raises:
            CapabilityPolicyError: listing every unknown key or bad value.
        """
        if not table:
            return cls()
        problems: list[str] = []
        for key in table:
            if key not in POLICY_KEYS:
                problems.append(f"unknown key policy.{key} (known: {', '.join(POLICY_KEYS)})")
        approve = table.get("approve", "risky")
        if approve not in APPROVE_MODES:
            problems.append(f"policy.approve must be one of {', '.join(APPROVE_MODES)}")
        hosts: dict[str, tuple[str, ...]] = {}
        for key in ("auto_approve_network", "auto_approve_credentials"):
            value = table.get(key, [])
            if not isinstance(value, list) or not all(isinstance(h, str) for h in value):
                problems.append(f"policy.{key} must be a list of host patterns")
                continue
            problems += [f"policy.{key}: {why}" for h in value if (why := pattern_problem(h))]
            hosts[key] = tuple(value)
        flags: dict[str, bool] = {}
        for key in ("auto_approve_shared_storage", "auto_approve_python"):
            value = table.get(key, False)
            if not isinstance(value, bool):
                problems.append(f"policy.{key} must be true or false")
            flags[key] = bool(value)
        packages = table.get("python_packages", [])
        if not isinstance(packages, list) or not all(
            isinstance(p, str) and p.isidentifier() for p in packages
        ):
            problems.append("policy.python_packages must be a list of top-level package names")
            packages = []
        if problems:
            raise CapabilityPolicyError("; ".join(problems))
        return cls(
            python_packages=tuple(packages),
            approve=approve,
            auto_approve_network=hosts.get("auto_approve_network", ()),
            auto_approve_credentials=hosts.get("auto_approve_credentials", ()),
            **flags,
        )

    def rule_text(self) -> str:
        """The approval rule this policy applies, in one sentence for a model, worked out by
        :meth:`decide` on each kind of capability (so it cannot say what the policy does not
        do): what activates as soon as its tests pass and what waits for a human."""
        host = "unlisted.invalid"  # a host no pattern but "*" covers
        network = "needs network"
        if self.auto_approve_network:
            network += f" (except to {', '.join(self.auto_approve_network)})"
        own, shared = (
            Capabilities(storage=StorageScope.TOOL),
            Capabilities(storage=StorageScope.SHARED),
        )
        kinds = [
            ("computes only", Capabilities(), "javascript"),
            ('uses its own storage (storage: "tool")', own, "javascript"),
            ("shares storage with other tools", shared, "javascript"),
            (network, Capabilities(network=(host,)), "javascript"),
            ("needs credentials", Capabilities(network=(host,), credentials=(host,)), "javascript"),
            ("runs in the Python tier", Capabilities(), "python"),
        ]
        verdicts = [(what, self.decide(caps, lang).needs_approval) for what, caps, lang in kinds]
        at_once = [what for what, waits in verdicts if not waits]
        waiting = [what for what, waits in verdicts if waits]
        parts = []
        if at_once:
            parts.append(f"A new tool that {_either(at_once)} activates as soon as its tests pass")
        if waiting:
            who = "one" if at_once else "A new tool"
            parts.append(f"{who} that {_either(waiting)} waits for a human's approval")
        return "; ".join(parts) + "."

    def decide(
        self, capabilities: Capabilities, language: str = "javascript"
    ) -> CapabilityDecision:
        """Decide whether a version with these capabilities needs a human's approval."""
        reasons: list[str] = []
        for host in capabilities.network:
            if not pattern_covered(host, self.auto_approve_network):
                reasons.append(f"network: the tool may send requests to {host}")
        for host in capabilities.credentials:
            if not pattern_covered(host, self.auto_approve_credentials):
                reasons.append(
                    f"credentials: the host adds a configured secret to requests to {host}"
                )
        if capabilities.storage is StorageScope.SHARED and not self.auto_approve_shared_storage:
            reasons.append(
                "storage: the tool reads and writes localStorage shared with other tools"
            )
        if capabilities.system and not self.auto_approve_python:
            reasons.append("system: the tool needs OS-level access")
        if language == "python" and not self.auto_approve_python:
            reasons.append("python: the tool runs in the Python tier under OS isolation")
        if self.approve == "all" and not reasons:
            reasons.append('policy: approve = "all" sends every new version to a human')
        return CapabilityDecision(bool(reasons), tuple(reasons))


def _either(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]
