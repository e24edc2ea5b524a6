"""A version's gate record (spec/gate.py) as the registry stores it: the one codec.

Stored in ``tf_versions.extra`` as ``{"changes_tests": [...], "suite": {"earlier", "retired"},
"regression": {...} | null, "policy": {...} | null}``. A row written before a key existed reads
with that part's default (no ``suite``: None, and the foundry rebuilds it from the tool's
history); an empty record is stored as ``{}``. No migration: the stored form is the one the
forge has always written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolfoundry.spec.gate import (
    CapabilityDecision,
    DistinctFrom,
    EarlierTest,
    GateRecord,
    GateSuite,
    RegressionRecord,
    Retirement,
    TestChange,
)


def gate_record(stored: Any) -> GateRecord:
    """The typed gate record of a stored ``extra`` value (``{}`` and None give the empty one)."""
    if not isinstance(stored, Mapping) or not stored:
        return GateRecord()
    suite = stored.get("suite")
    regression = stored.get("regression")
    policy = stored.get("policy")
    distinct = stored.get("distinct_from")
    return GateRecord(
        distinct_from=DistinctFrom(str(distinct.get("name")), str(distinct.get("why")))
        if isinstance(distinct, Mapping)
        else None,
        changes_tests=tuple(_change(c) for c in stored.get("changes_tests") or ()),
        suite=None
        if not isinstance(suite, Mapping)
        else GateSuite(
            earlier=tuple(
                EarlierTest(int(e["version"]), e["test"]) for e in suite.get("earlier") or ()
            ),
            retired=_retirements(suite.get("retired")),
        ),
        regression=None if not isinstance(regression, Mapping) else _regression(regression),
        policy=None
        if not isinstance(policy, Mapping)
        else CapabilityDecision(
            bool(policy.get("needs_approval")), tuple(policy.get("reasons") or ())
        ),
    )


def stored_gate_record(record: GateRecord) -> dict[str, Any]:
    """The stored form of ``record`` (what :func:`gate_record` reads back as an equal record)."""
    if record == GateRecord():
        return {}
    out: dict[str, Any] = {
        "changes_tests": [
            {"test": c.test, "reason": c.reason} if isinstance(c, Retirement) else c
            for c in record.changes_tests
        ]
    }
    if record.suite is not None:
        out["suite"] = {
            "earlier": [{"version": e.version, "test": dict(e.case)} for e in record.suite.earlier],
            "retired": _stored_retirements(record.suite.retired),
        }
    out["regression"] = None if record.regression is None else _stored_regression(record.regression)
    out["policy"] = None if record.policy is None else record.policy.to_dict()
    if record.distinct_from is not None:
        out["distinct_from"] = record.distinct_from.to_dict()
    return out


def _change(stored: Any) -> TestChange:
    if isinstance(stored, Mapping):
        return Retirement(str(stored.get("test")), str(stored.get("reason") or ""))
    return stored if isinstance(stored, int) else str(stored)


def _retirements(stored: Any) -> tuple[Retirement, ...]:
    return tuple(Retirement(str(r.get("test")), str(r.get("reason"))) for r in stored or ())


def _stored_retirements(retired: tuple[Retirement, ...]) -> list[dict[str, str]]:
    return [{"test": r.test, "reason": r.reason} for r in retired]


def _regression(stored: Mapping[str, Any]) -> RegressionRecord:
    return RegressionRecord(
        previous_version=int(stored["previous_version"]),
        passed=bool(stored.get("passed")),
        failed=tuple(stored.get("failed") or ()),
        changed=tuple(stored.get("changed") or ()),
        unknown_changes=tuple(stored.get("unknown_changes") or ()),
        retired=_retirements(stored.get("retired")),
        suite=tuple(stored.get("suite") or ()),
        results=tuple(stored.get("results") or ()),
    )


def _stored_regression(r: RegressionRecord) -> dict[str, Any]:
    return {
        "previous_version": r.previous_version,
        "passed": r.passed,
        "failed": list(r.failed),
        "changed": list(r.changed),
        "unknown_changes": list(r.unknown_changes),
        "retired": _stored_retirements(r.retired),
        "suite": list(r.suite),
        "results": [dict(x) for x in r.results],
    }
