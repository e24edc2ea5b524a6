"""What a human reviewer is shown about a version: the web page, its API and
``toolfoundry approvals`` all show this one packet (``tools show`` shows its suite)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict, cast

from toolfoundry.forge import code_diff, explain_capabilities
from toolfoundry.forge.approval import CapabilityExplained
from toolfoundry.foundry import Foundry
from toolfoundry.foundry.upstream_uses import UpstreamUseJson
from toolfoundry.registry import ApprovalHold, ToolVersion, VersionStatus
from toolfoundry.registry.records import DependentJson
from toolfoundry.sandbox.host.credentials import Credential, SecretStore
from toolfoundry.sandbox.host.netguard import FetchError
from toolfoundry.spec.gate import suite_tally


class SuiteResultJson(TypedDict, total=False):
    """How a test of the suite went when it ran: the keys its stored result has, of these
    (a result stored by an older release may lack some)."""

    passed: bool
    duration_ms: float
    reason: str
    diff: str | None


class SuiteEntry(TypedDict):
    """One test of the suite as the reviewer reads it: ``expected``, ``error`` and
    ``error_kind`` as the case has them; ``result`` how it went when it ran."""

    label: str
    version: int
    input: Any
    expected: NotRequired[Any]
    error: NotRequired[Any]
    error_kind: NotRequired[Any]
    # always given, after the case's keys (NotRequired only so they can come in that order)
    fixtures: NotRequired[list[Any]]
    result: NotRequired[SuiteResultJson | None]


class GatingSuite(TypedDict):
    """The tests a version was gated by, and the earlier tests it retired (with why)."""

    tests: list[SuiteEntry]
    retired: list[dict[str, str]]


class CapabilityChangeJson(CapabilityExplained):
    """A capability as the reviewer reads it, and whether it is ``added``, ``kept`` or
    ``removed`` since the approved version; a credential also whether it resolves now."""

    change: str


class CredentialChangeJson(CapabilityChangeJson):
    """A credential's change, and whether requests to its host would carry it now."""

    resolves: bool
    resolution: str


class CapabilityChanges(TypedDict):
    """A version's capabilities against the approved version (``against``, None if none)."""

    against: int | None
    details: list[CapabilityChangeJson]
    removed: list[CapabilityChangeJson]


class CredentialState(TypedDict):
    """Whether requests to a host would carry a credential now, and why (never the value)."""

    resolves: bool
    resolution: str


class UseEntry(TypedDict):
    """A tool a version's code calls: the version its tests ran against and the callee now."""

    tool: str
    tested_against: int | None
    found: str
    status: str | None
    current_version: int | None
    schema_hash: NotRequired[str]
    # an upstream tool, where its upstream is connected: whether it is still as tested
    # (foundry/upstream_uses.py: state, tested_schema_hash, schema_hash, message)
    upstream: NotRequired[UpstreamUseJson]


class ToolLinks(TypedDict):
    """What a version calls, and which versions call its tool (code mode)."""

    uses: list[UseEntry]
    used_by: list[DependentJson]


def tool_links(fd: Foundry, v: ToolVersion) -> ToolLinks:
    """The tools ``v``'s code calls (each with the version its tests ran against, and its
    status and version now), and the versions of other tools whose code calls ``v``'s tool
    (each tool's current version and those waiting for approval): who a reviewer approving
    ``v`` lets reach it, and whom a change of it can break. Three narrow reads; an upstream
    tool's state comes from its server's listing (when the upstreams are started: a report
    never starts one)."""
    uses = fd.registry.dependencies(v.name, v.version)
    upstream = fd.upstream_uses(uses)
    callees = [d.callee for d in uses if d.version is not None]  # the registry's tools
    now = {c.name: c for c in fd.registry.current_versions(names=callees)} if callees else {}
    entries: list[UseEntry] = []
    for d in uses:
        callee = now.get(d.callee)
        entry: UseEntry = {
            "tool": d.callee,
            "tested_against": d.version,
            "found": d.found,
            "status": callee.status.value if callee else None,
            "current_version": callee.version if callee else None,
        }
        if d.schema_hash is not None:
            entry["schema_hash"] = d.schema_hash
        if d.callee in upstream:
            entry["upstream"] = upstream[d.callee].to_dict()
        entries.append(entry)
    users = fd.registry.dependents([v.name]).get(v.name, [])
    return {"uses": entries, "used_by": [u.to_dict() for u in users if u.name != v.name]}


def gating_suite(v: ToolVersion) -> GatingSuite:
    """The tests ``v`` was gated by, each with its input, expected value (or expected error),
    its own fixtures and how it went; then the earlier tests it retired, with the reasons.

    The earlier tests come first, labelled ``vN:name`` after the version that added them (as
    the regression gate names them), then the version's own. Kept in the version's gate record
    (spec/gate.py); a version stored before suites were lists its own tests only.
    """
    suite, regression = v.gate.suite, v.gate.regression
    own_results = {r.get("name"): r for r in v.test_results}
    tests: list[SuiteEntry] = []
    for earlier in suite.earlier if suite else ():
        ran = regression.result(earlier.label) if regression else None
        tests.append(_entry(earlier.label, earlier.version, earlier.case, ran))
    for case in v.tests:
        tests.append(
            _entry(str(case.get("name")), v.version, case, own_results.get(case.get("name")))
        )
    retired = [{"test": r.test, "reason": r.reason} for r in suite.retired] if suite else []
    return {"tests": tests, "retired": retired}


def _entry(
    label: str, version: int, case: Mapping[str, Any], result: Mapping[str, Any] | None
) -> SuiteEntry:
    out: SuiteEntry = {"label": label, "version": version, "input": case.get("input")}
    if "expected" in case:
        out["expected"] = case["expected"]
    if "error" in case:
        out["error"] = case["error"]
    if "error_kind" in case:
        out["error_kind"] = case["error_kind"]
    out["fixtures"] = list(case.get("fixtures") or [])
    out["result"] = None
    if result is not None:
        keys = SuiteResultJson.__annotations__  # the stored result's keys a reviewer reads
        out["result"] = cast(SuiteResultJson, {k: result[k] for k in keys if k in result})
    return out


def capability_changes(v: ToolVersion, approved: ToolVersion | None) -> CapabilityChanges:
    """``v``'s capabilities against the version a reviewer or the policy already accepted:
    each of ``v``'s marked ``added`` or ``kept``, and those it no longer asks for (``removed``).
    Hosts, credentials, the storage scope and system access are each one entry."""
    mine = explain_capabilities(v.capabilities, v.language)
    theirs = explain_capabilities(approved.capabilities, approved.language) if approved else []
    keys = {(c["capability"], str(c["value"])) for c in theirs}
    own = {(c["capability"], str(c["value"])) for c in mine}
    return {
        "against": approved.version if approved else None,
        "details": [
            {**c, "change": "kept" if (c["capability"], str(c["value"])) in keys else "added"}
            for c in mine
        ],
        "removed": [
            {**c, "change": "removed"}
            for c in theirs
            if (c["capability"], str(c["value"])) not in own
        ],
    }


def credential_state(
    host: str, bindings: Sequence[Credential], store: SecretStore | None = None
) -> CredentialState:
    """Whether requests to ``host`` would carry a credential now: the binding in
    ``[[fetch.credentials]]`` and whether its value can be read (never the value itself)."""
    binding = next((c for c in bindings if c.binds(host)), None)
    if binding is None:
        return {
            "resolves": False,
            "resolution": f"no credential is configured for {host} ([[fetch.credentials]] in "
            "toolfoundry.toml): its requests go without one",
        }
    try:
        binding.value(store)  # the foundry's secret store, as the request would read it
    except FetchError as exc:
        return {"resolves": False, "resolution": f"does not resolve now: {exc.message}"}
    return {
        "resolves": True,
        "resolution": f"resolves now: the {binding.header} header from {binding.source()}",
    }


def text_diff(previous: str | None, current: str, name: str) -> str | None:
    """A unified diff of two texts, None when there is nothing to compare or no change."""
    if previous is None or previous == current:
        return None
    return code_diff(previous, current, name)


def _schema_text(schema: Any) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False)


def _approved(v: ToolVersion, history: list[ToolVersion]) -> ToolVersion | None:
    """The version ``v`` is reviewed against: the current one when it is active and another;
    else the newest earlier active version (the one ``v`` replaced), if any."""
    current = next((h for h in history if h.current), None)
    active = VersionStatus.ACTIVE
    if current is not None and current.version != v.version and current.status is active:
        return current
    earlier = [h for h in history if h.version < v.version and h.status is active]
    return earlier[-1] if earlier else None


def _identical_to(v: ToolVersion, history: list[ToolVersion]) -> int | None:
    """The newest other version with the same code and parameters (an empty diff), if any."""
    same = [
        h.version
        for h in history
        if h.version != v.version and h.sha256 == v.sha256 and h.parameters == v.parameters
    ]
    return same[-1] if same else None


def version_review(
    fd: Foundry,
    name: str,
    version: int,
    holds: dict[tuple[str, int], ApprovalHold] | None = None,
) -> dict[str, Any]:
    """One version in full, plus what a reviewer needs: the diff against the current
    version (for the current version itself: against the version it was made from; for a
    first version: against nothing), what each capability means and which are new since the
    approved version, the suite it was gated by, whether it is identical to another version,
    why the policy asked for a human, and what holds its approval back (``approval_hold``:
    superseded, or the tool disabled; registry/holds.py), read from ``holds`` when given.

    Raises:
        RegistryError: ``not_found``.
    """
    history = fd.history(name)  # one read serves every comparison below
    v = next((h for h in history if h.version == version), None)
    if v is None:
        v = fd.show(name, version)  # raises not_found, with the registry's own message
    by_number = {h.version: h for h in history}
    current = next((h for h in history if h.current), None)
    against, base = None, "none"
    if current is not None and current.version != v.version:
        against, base = current, "current"
    elif v.parent_version is not None and v.parent_version in by_number:
        # The current version itself: show what it changed from the version it was made from.
        against, base = by_number[v.parent_version], "parent"
    policy = v.gate.policy
    changes = capability_changes(v, _approved(v, history))
    fetch = fd.config.fetch
    details: list[CapabilityChangeJson] = [
        (
            CredentialChangeJson(
                **c, **credential_state(str(c["value"]), fetch.credentials, fetch.secret_store)
            )
            if c["capability"] == "credentials"
            else c
        )
        for c in changes["details"]
    ]
    hold = None
    if v.status is VersionStatus.PENDING_APPROVAL:
        hold = (holds if holds is not None else fd.registry.approval_holds(name)).get(
            (name, version)
        )
    return {
        **v.to_dict(),
        "reasons": list(policy.reasons) if policy else [],
        "capability_details": details,
        "capability_changes": {"against": changes["against"], "removed": changes["removed"]},
        "suite": gating_suite(v),
        "identical_to": _identical_to(v, history),
        "approval_hold": hold.to_dict() if hold is not None else None,
        "current_version": current.version if current else None,
        "diff_against": against.version if against else None,
        "diff_base": base,
        "diff": code_diff(
            against.code if against else None,
            v.code,
            "handler.py" if v.language == "python" else "handler.js",
        ),
        # what a model reads is reviewed like the code: a changed description or schema
        "description_diff": text_diff(
            against.description if against else None, v.description, "description"
        ),
        "parameters_diff": text_diff(
            _schema_text(against.parameters) if against else None,
            _schema_text(v.parameters),
            "parameters.json",
        ),
        "test_tally": suite_tally(v.test_results, v.gate).to_dict(),
        # the tools it calls, and the tools that call it (who an approval lets reach it)
        **tool_links(fd, v),
        # the active tool that passes this version's tests, and why the draft says it differs
        "distinct_from": v.gate.distinct_from.to_dict() if v.gate.distinct_from else None,
    }


def pending_reviews(fd: Foundry) -> list[dict[str, Any]]:
    """Every version awaiting a human, oldest first, as :func:`version_review` shows it."""
    waiting = fd.pending()
    holds = fd.registry.approval_holds() if waiting else {}
    return [version_review(fd, v.name, v.version, holds) for v in waiting]
