"""What each version of a tool changed from the version it was made from: ``tool_history`` and
``toolfoundry tools history`` say it per version, so a model or a person reads a tool's story
without diffing versions one by one.

A version is compared with its parent (the version that was current when it was made), or, for
one stored without a parent, the version before it; the first version is compared with nothing
(everything in it is new). Tests are compared by content: an own test that no test of the
parent's accumulated suite equals was added (or changed); the retired ones are those the
version's gate record retired.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict

from toolfoundry.registry import ToolVersion
from toolfoundry.spec import Capabilities


class VersionChangesJson(TypedDict):
    """The JSON form: ``against`` is the version compared with (null for the first)."""

    against: int | None
    changed: list[str]
    capabilities_added: list[str]
    capabilities_removed: list[str]
    tests_added: list[str]
    tests_retired: list[str]


@dataclass(frozen=True)
class VersionChanges:
    """What one version changed.

    Attributes:
        against: the version it is compared with (None: the first version).
        changed: which of ``code``, ``description``, ``parameters``, ``returns``,
            ``capabilities``, ``language`` differ.
        capabilities_added: capabilities it asks for that ``against`` did not
            (``network api.example.com``, ``storage tool``, ``system``...).
        capabilities_removed: those it no longer asks for.
        tests_added: its own tests that are new or changed (by name).
        tests_retired: earlier tests it retired (``v3:name``).
    """

    against: int | None
    changed: tuple[str, ...] = ()
    capabilities_added: tuple[str, ...] = ()
    capabilities_removed: tuple[str, ...] = ()
    tests_added: tuple[str, ...] = ()
    tests_retired: tuple[str, ...] = ()

    def text(self) -> str:
        """One line for a person: ``code, parameters; tests +T3 -v1:T1``."""
        if self.against is None:
            return "first version"
        parts = [", ".join(self.changed)] if self.changed else []
        caps = [f"+{c}" for c in self.capabilities_added]
        caps += [f"-{c}" for c in self.capabilities_removed]
        if caps:
            parts.append("capabilities " + " ".join(caps))
        tests = [f"+{t}" for t in self.tests_added] + [f"-{t}" for t in self.tests_retired]
        if tests:
            parts.append("tests " + " ".join(tests))
        return "; ".join(parts) or f"nothing (same as v{self.against})"

    def to_dict(self) -> VersionChangesJson:
        """JSON-ready form."""
        return {
            "against": self.against,
            "changed": list(self.changed),
            "capabilities_added": list(self.capabilities_added),
            "capabilities_removed": list(self.capabilities_removed),
            "tests_added": list(self.tests_added),
            "tests_retired": list(self.tests_retired),
        }


def version_changes(history: Sequence[ToolVersion]) -> dict[int, VersionChanges]:
    """Each version's changes (by version number), from the tool's whole history."""
    by_number = {v.version: v for v in history}
    out: dict[int, VersionChanges] = {}
    for v in history:
        base = by_number.get(v.parent_version) if v.parent_version is not None else None
        if base is None:
            base = max((h for h in history if h.version < v.version), key=_number, default=None)
        out[v.version] = changes(base, v)
    return out


def changes(base: ToolVersion | None, v: ToolVersion) -> VersionChanges:
    """What ``v`` changed from ``base`` (None: ``v`` is a first version, all of it new)."""
    mine = _capability_labels(v.capabilities, v.language)
    if base is None:
        return VersionChanges(
            against=None,
            capabilities_added=tuple(mine),
            tests_added=tuple(str(t.get("name")) for t in _cases(v.tests)),
        )
    theirs = _capability_labels(base.capabilities, base.language)
    fields = {
        "code": (v.code, base.code),
        "description": (v.description, base.description),
        "parameters": (v.parameters, base.parameters),
        "returns": (v.returns, base.returns),
        "capabilities": (mine, theirs),
        "language": (v.language, base.language),
    }
    known = [*_cases(base.tests)]
    if base.gate.suite is not None:
        known += [e.case for e in base.gate.suite.earlier]
    suite = v.gate.suite
    return VersionChanges(
        against=base.version,
        changed=tuple(name for name, (a, b) in fields.items() if a != b),
        capabilities_added=tuple(c for c in mine if c not in theirs),
        capabilities_removed=tuple(c for c in theirs if c not in mine),
        tests_added=tuple(str(t.get("name")) for t in _cases(v.tests) if t not in known),
        tests_retired=tuple(r.test for r in suite.retired) if suite is not None else (),
    )


def _number(v: ToolVersion) -> int:
    return v.version


def _cases(tests: Sequence[Any]) -> list[Mapping[str, Any]]:
    return [t for t in tests if isinstance(t, Mapping)]


def _capability_labels(caps: Capabilities, language: str) -> list[str]:
    """Each capability as one short label (a host, a storage scope, system access)."""
    labels = [f"network {h}" for h in caps.network]
    labels += [f"credentials {h}" for h in caps.credentials]
    if caps.storage.value != "none":
        labels.append(f"storage {caps.storage.value}")
    if caps.system or language == "python":
        labels.append("system")
    return labels
