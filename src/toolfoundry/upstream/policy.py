"""Which upstream tools run freely, which wait for a person, which never run.

One rule, applied to each listed tool, first match wins:

1. the tool is in the upstream's ``deny`` list: **deny** (never called, never listed);
2. in its ``approve`` list: **approve** (callable once a person approved it);
3. in its ``allow`` list: **allow**;
4. the upstream's ``policy`` is ``allow``, ``approve`` or ``deny``: that;
5. otherwise (``policy = "annotations"``, the default) from the tool's annotations: a tool
   that says ``readOnlyHint: true`` is **allowed**; one that says both ``destructiveHint:
   false`` and ``openWorldHint: false`` (it only adds, and only to its own world) is
   **allowed**; every other tool **waits for approval**, since MCP's own defaults for a tool
   that says nothing are "destructive" and "open world".

An approval binds the upstream's name, the tool's name and its input schema's hash: when the
server changes the schema, the tool waits for a person again (foundry/upstream_gate.py).
Annotations are trusted because a person chose to configure that server; for a server whose
hints you do not trust, set ``policy = "approve"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from toolfoundry.upstream.listing import UpstreamTool
from toolfoundry.upstream.settings import UpstreamPolicy, UpstreamSettings


class Rule(StrEnum):
    """What the policy decides for one tool."""

    ALLOW = "allow"
    APPROVE = "approve"
    DENY = "deny"


@dataclass(frozen=True)
class Verdict:
    """The rule for one tool, and why (as a report or a refusal says it)."""

    rule: Rule
    reason: str


def verdict(settings: UpstreamSettings, tool: UpstreamTool) -> Verdict:
    """The policy's rule for ``tool`` of the upstream ``settings`` configures."""
    where = f"[[upstream]] {settings.name}"
    for rule, listed in (
        (Rule.DENY, settings.deny),
        (Rule.APPROVE, settings.approve),
        (Rule.ALLOW, settings.allow),
    ):
        if tool.tool in listed:
            return Verdict(rule, f"{where}: {rule.value} lists it")
    if settings.policy is not UpstreamPolicy.ANNOTATIONS:
        return Verdict(Rule(settings.policy.value), f"{where}: policy = {settings.policy.value!r}")
    if tool.hint("readOnlyHint") is True:
        return Verdict(Rule.ALLOW, "read-only (readOnlyHint)")
    if tool.hint("destructiveHint") is False and tool.hint("openWorldHint") is False:
        return Verdict(Rule.ALLOW, "neither destructive nor open-world (its annotations)")
    if tool.hint("destructiveHint") is True:
        return Verdict(Rule.APPROVE, "destructive (destructiveHint)")
    return Verdict(
        Rule.APPROVE, "may change things (no readOnlyHint: MCP's default is destructive)"
    )
