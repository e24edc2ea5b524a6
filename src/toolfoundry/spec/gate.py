"""What gated a version: the forge's decisions as the registry keeps them, typed.

The forge decides (forge/pipeline.py); the foundry records the decision with the version as a
:class:`GateRecord` (foundry/create.py); the registry stores and reads it with one codec
(registry/codecs.py: ``gate_record``, ``stored_gate_record``); the review packet, ``show_tool``
and ``tools verify`` read it back. Test cases and test results inside it stay in their JSON
(draft) form, like a version's own ``tests`` and ``test_results``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict


class CapabilityDecisionJson(TypedDict):
    """The capability policy's decision as the create report (``policy``) shows it."""

    needs_approval: bool
    reasons: list[str]


@dataclass(frozen=True)
class DistinctFrom:
    """A draft's word that it is not a duplicate of an active tool that passes its tests.

    Attributes:
        name: the active tool it differs from.
        why: how it differs, for the reviewers (the review page shows it).
    """

    name: str
    why: str

    def to_dict(self) -> dict[str, str]:
        """The JSON (draft) form."""
        return {"name": self.name, "why": self.why}


@dataclass(frozen=True)
class Retirement:
    """An earlier test a version no longer passes on purpose, and why.

    Attributes:
        test: the test as the suite names it (``v3:name``), or as the draft named it.
        reason: why it no longer holds (``(no reason given)`` for a bare name).
    """

    test: str
    reason: str


@dataclass(frozen=True)
class CapabilityDecision:
    """Whether a human must approve, and why (one reason per risky capability)."""

    needs_approval: bool
    reasons: tuple[str, ...] = ()

    def to_dict(self) -> CapabilityDecisionJson:
        """JSON-ready form."""
        return {"needs_approval": self.needs_approval, "reasons": list(self.reasons)}


# What ``changes_tests`` names: a test name (``"T1"``, ``"v3:T1"``), a 0-based index into the
# previous version's own tests, or a name with the reason it is retired.
TestChange = str | int | Retirement


@dataclass(frozen=True)
class EarlierTest:
    """A test of an earlier version that gated this one: its case (draft form) and the first
    version that had it (its label is ``v<version>:<name>``)."""

    version: int
    case: Mapping[str, Any]

    @property
    def label(self) -> str:
        """How results, refusals and ``changes_tests`` name it: ``v3:name``."""
        return f"v{self.version}:{self.case.get('name')}"


@dataclass(frozen=True)
class GateSuite:
    """The accumulated suite a version was gated by, beyond its own tests."""

    earlier: tuple[EarlierTest, ...] = ()
    retired: tuple[Retirement, ...] = ()


@dataclass(frozen=True)
class RegressionRecord:
    """The regression gate's run of the accumulated suite against the version's code.

    Attributes:
        previous_version: the active version it was compared with.
        failed: labels of the earlier tests it failed (empty when it passed).
        changed: names of the tests ``changes_tests`` retired.
        unknown_changes: what ``changes_tests`` named that is no earlier test.
        suite: labels of the earlier tests that ran.
        results: each run's result, JSON form (``name``, ``passed``, ``reason``, ``diff``...).
    """

    previous_version: int
    passed: bool
    failed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    unknown_changes: tuple[str | int, ...] = ()
    retired: tuple[Retirement, ...] = ()
    suite: tuple[str, ...] = ()
    results: tuple[Mapping[str, Any], ...] = ()

    def result(self, label: str) -> Mapping[str, Any] | None:
        """The result of the earlier test ``label``, when it ran."""
        return next((r for r in self.results if r.get("name") == label), None)


@dataclass(frozen=True)
class GateRecord:
    """Everything that gated one version, beyond its own tests and their results.

    Attributes:
        changes_tests: what the draft said it retires, in its order.
        suite: the earlier tests kept and retired; None for a version stored before suites
            were kept (its suite is rebuilt from the tool's history).
        regression: the regression run, for an update of an active version.
        policy: the capability policy's decision.
        distinct_from: what the draft said to differ from the active tool that passes its
            tests (the duplicate check let it through on that word).
    """

    changes_tests: tuple[TestChange, ...] = ()
    suite: GateSuite | None = None
    regression: RegressionRecord | None = None
    policy: CapabilityDecision | None = None
    distinct_from: DistinctFrom | None = None


@dataclass(frozen=True)
class SuiteTally:
    """How many tests gated a version and passed: its own and the earlier versions' that ran.

    The one count every surface shows (create's message, the approval queue, the review page,
    the audit's ``tested`` row): a count of the own tests alone undersells what gated it.
    """

    passed: int
    total: int
    own: int
    earlier: int

    def to_dict(self) -> dict[str, int]:
        """The JSON form."""
        return {
            "passed": self.passed,
            "total": self.total,
            "own": self.own,
            "earlier": self.earlier,
        }


def suite_tally(own_results: Sequence[Mapping[str, Any]], gate: GateRecord | None) -> SuiteTally:
    """The tally of ``own_results`` (the version's test results, JSON form) and of the
    regression run recorded in ``gate``."""
    earlier = tuple(gate.regression.results) if gate is not None and gate.regression else ()
    runs = (*own_results, *earlier)
    passed = sum(1 for r in runs if r.get("passed"))
    return SuiteTally(passed, len(runs), len(own_results), len(earlier))
