"""What the registry stores and returns: plain, immutable records."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any, NamedTuple

from typing_extensions import TypedDict

from toolfoundry.registry.gate_codec import stored_gate_record
from toolfoundry.spec import (
    Capabilities,
    ToolSpec,
    VersionStatus,
    capabilities_hash,
    code_sha256,
)
from toolfoundry.spec.gate import GateRecord
from toolfoundry.spec.tool import MAX_EXAMPLES

# The actor of everything an agent does through the meta-tools (MCP, the agent loop): the one
# actor that may never undo a person's decision, such as re-enabling a tool a person disabled.
AGENT_ACTOR = "agent"


class AuditEvent(StrEnum):
    """Every kind of row in the append-only audit log."""

    CREATED = "created"
    TESTED = "tested"
    APPROVED = "approved"
    REJECTED = "rejected"
    ACTIVATED = "activated"
    ROLLED_BACK = "rolled_back"
    DISABLED = "disabled"
    ENABLED = "enabled"
    CALLED = "called"
    TESTS_RETIRED = "tests_retired"


@dataclass(frozen=True)
class Dependency:
    """A tool a version's code calls (code mode), as the version was tested against it.

    Attributes:
        callee: the registry tool's name, or an upstream server's tool as ``UPSTREAM.TOOL``.
        version: the registry tool's version that was current (and active) when the
            dependent was tested; None for an upstream tool.
        schema_hash: an upstream tool's input schema hash when the dependent was tested;
            None for a registry tool.
        found: ``code`` (read from the code) or ``uses`` (named in the draft's ``uses``).
    """

    callee: str
    version: int | None
    schema_hash: str | None = None
    found: str = "code"


class DependentJson(TypedDict):
    """A dependent's JSON form (``used_by``)."""

    name: str
    version: int
    status: str
    current: bool
    tested_against: int | None


@dataclass(frozen=True)
class Dependent:
    """A version of another tool whose code calls this one: its tool's current version, or
    one waiting for approval.

    Attributes:
        tested_against: the version of the callee its tests ran against.
    """

    name: str
    version: int
    status: VersionStatus
    current: bool
    tested_against: int | None

    def to_dict(self) -> DependentJson:
        return {
            "name": self.name,
            "version": self.version,
            "status": self.status.value,
            "current": self.current,
            "tested_against": self.tested_against,
        }


@dataclass(frozen=True)
class NewVersion:
    """A version that passed the forge, ready to be registered.

    Attributes:
        status: ``active`` or ``pending_approval`` (the forge's verdict).
        gate: what gated it beyond its own tests (suite, regression run, policy decision).
        uses: the tools its code calls, each with the version its tests ran against.
    """

    name: str
    code: str
    description: str
    parameters: dict[str, Any]
    status: VersionStatus
    language: str = "javascript"
    returns: dict[str, Any] | None = None
    tests: list[Any] = field(default_factory=list)
    fixtures: list[Any] = field(default_factory=list)
    capabilities: Capabilities = field(default_factory=Capabilities)
    level: str = "primitive"
    author: str = "agent"
    parent_version: int | None = None
    findings: list[Any] = field(default_factory=list)
    test_results: list[Any] = field(default_factory=list)
    gate: GateRecord = field(default_factory=GateRecord)
    uses: tuple[Dependency, ...] = ()

    @property
    def sha256(self) -> str:
        """The code hash an approval binds (:func:`toolfoundry.spec.code_sha256`)."""
        return code_sha256(self.code)

    @property
    def capability_hash(self) -> str:
        """The capability-set hash an approval binds, of these capabilities in this language
        (:func:`toolfoundry.spec.capabilities_hash`, the forge's own)."""
        return capabilities_hash(self.capabilities, self.language)


def tool_spec(
    name: str,
    description: str,
    parameters: dict[str, Any],
    returns: dict[str, Any] | None,
    level: str,
    capabilities: Capabilities,
    version: int,
    examples: list[dict[str, Any]] | None = None,
) -> ToolSpec:
    """The ToolSpec of a version's fields: :attr:`ToolVersion.spec` and the narrow read of
    only these columns (:meth:`Registry.active_specs`) both build it here."""
    return ToolSpec(
        name,
        description,
        parameters,
        level=level,
        capabilities=capabilities,
        version=version,
        returns=returns,
        examples=examples,
    )


# An example longer than this (encoded) would cost a catalogue more than it teaches.
EXAMPLE_CHARS = 1000


def example_arguments(tests: Any, results: Any) -> list[dict[str, Any]]:
    """The arguments of a version's first passing tests that expect a value (not an error),
    at most ``spec.tool.MAX_EXAMPLES``, each at most :data:`EXAMPLE_CHARS` encoded."""
    passed = {
        r.get("name") for r in results or () if isinstance(r, dict) and r.get("passed") is True
    }
    out: list[dict[str, Any]] = []
    for case in tests or ():
        if len(out) == MAX_EXAMPLES:
            break
        if not isinstance(case, dict) or "error" in case or case.get("name") not in passed:
            continue
        arguments = case.get("input")
        if isinstance(arguments, dict) and len(json.dumps(arguments)) <= EXAMPLE_CHARS:
            out.append(arguments)
    return out


@dataclass(frozen=True)
class ToolVersion:
    """One registered, immutable version of a tool (only ``status`` ever changes).

    ``gate`` is what gated it beyond its own tests (spec/gate.py); ``to_dict`` shows it in its
    stored form under ``extra``.
    """

    id: int
    name: str
    version: int
    language: str
    code: str
    sha256: str
    description: str
    parameters: dict[str, Any]
    returns: dict[str, Any] | None
    tests: list[Any]
    fixtures: list[Any]
    capabilities: Capabilities
    capability_hash: str
    level: str
    status: VersionStatus
    author: str
    created_at: datetime
    parent_version: int | None
    findings: list[Any]
    test_results: list[Any]
    gate: GateRecord
    current: bool = False

    @property
    def spec(self) -> ToolSpec:
        """The ToolSpec this version presents to catalogs and models."""
        return tool_spec(
            self.name,
            self.description,
            self.parameters,
            self.returns,
            self.level,
            self.capabilities,
            self.version,
        )

    def summary(self) -> dict[str, Any]:
        """A JSON-ready listing row (no code, tests or results)."""
        return _summary(self)

    def to_dict(self) -> dict[str, Any]:
        """Everything, JSON-ready (what ``tools show --json`` prints)."""
        out = self.summary()
        out.update(
            language=self.language,
            description=self.description,
            parameters=self.parameters,
            returns=self.returns,
            level=self.level,
            code=self.code,
            tests=self.tests,
            fixtures=self.fixtures,
            capability_hash=self.capability_hash,
            findings=self.findings,
            test_results=self.test_results,
            extra=stored_gate_record(self.gate),
        )
        return out


class ToolListing(NamedTuple):
    """A tool's current version as a listing shows it (:meth:`Registry.listing`): no code,
    schemas, tests or results, so 10 000 of them are read without decoding any of those.
    A named tuple, not a frozen dataclass: as immutable, and about six times as fast to build.

    Attributes:
        pending_versions: the numbers of the tool's versions waiting for a human, ascending
            (the current one among them when it is itself pending).
    """

    name: str
    version: int
    status: VersionStatus
    sha256: str
    capabilities: Capabilities
    author: str
    created_at: datetime
    parent_version: int | None
    description: str
    pending_versions: tuple[int, ...] = ()

    @property
    def current(self) -> bool:
        """Always true: a listing row is the tool's current version."""
        return True

    def summary(self) -> dict[str, Any]:
        """The same JSON-ready row as :meth:`ToolVersion.summary`."""
        return _summary(self)


def _summary(v: ToolVersion | ToolListing) -> dict[str, Any]:
    """The listing row of a version, full or narrow (one home for its keys and their order)."""
    return {
        "name": v.name,
        "version": v.version,
        "status": v.status.value,
        "current": v.current,
        "sha256": v.sha256,
        "capabilities": v.capabilities.to_dict(),
        "author": v.author,
        "created_at": v.created_at.isoformat(),
        "parent_version": v.parent_version,
    }


@dataclass(frozen=True)
class Approval:
    """A human decision bound to the exact code hash and capability set it was made on."""

    name: str
    version: int
    approver: str
    decided_at: datetime
    decision: str
    reason: str
    code_sha256: str
    capability_hash: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "approver": self.approver,
            "decided_at": self.decided_at.isoformat(),
            "decision": self.decision,
            "reason": self.reason,
            "code_sha256": self.code_sha256,
            "capability_hash": self.capability_hash,
        }


class HoldKind(StrEnum):
    """Why an approval is held back (registry/holds.py); the error kind it is refused with."""

    SUPERSEDED = "superseded"  # a newer version has been active
    DISABLED = "disabled"  # a person disabled the tool


class ApprovalHoldJson(TypedDict):
    """An approval hold's JSON form (``approval_hold`` in the queue and the review packet)."""

    kind: str
    message: str
    by_version: int | None


@dataclass(frozen=True)
class ApprovalHold:
    """Why the registry will not approve a pending version now (registry/holds.py).

    Attributes:
        kind: ``superseded`` (a newer version has been active) or ``disabled`` (a person
            disabled the tool); the error kind an approval is refused with.
        message: one sentence for the reviewer, with what to do instead.
        by_version: the newer version that went live, for ``superseded``.
    """

    kind: HoldKind
    message: str
    by_version: int | None = None

    def to_dict(self) -> ApprovalHoldJson:
        return {"kind": self.kind.value, "message": self.message, "by_version": self.by_version}


@dataclass(frozen=True)
class AuditEntry:
    """One row of the audit log. ``caller`` names who made a call through code mode's
    ``tools`` (``run:<id>``, ``name@version``); None for anything else."""

    id: int
    at: datetime
    tool: str
    version: int | None
    event: AuditEvent
    actor: str
    detail: dict[str, Any]
    caller: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "at": self.at.isoformat(),
            "tool": self.tool,
            "version": self.version,
            "event": self.event.value,
            "actor": self.actor,
            "detail": self.detail,
        }
        if self.caller is not None:
            out["caller"] = self.caller
        return out


@dataclass(frozen=True)
class UsageStats:
    """Calls, failures by kind, duration percentiles (from a histogram) and last use.

    ``callers`` counts the calls made by code through ``tools``, by caller (a tool's name,
    or ``run_js``); the others were made directly.
    """

    name: str
    calls: int
    failures: dict[str, int]
    p50_ms: float | None
    p95_ms: float | None
    mean_ms: float | None
    last_used: datetime | None
    callers: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "name": self.name,
            "calls": self.calls,
            "failures": dict(self.failures),
            "p50_ms": self.p50_ms,
            "p95_ms": self.p95_ms,
            "mean_ms": self.mean_ms,
            "last_used": self.last_used.isoformat() if self.last_used else None,
        }
        if self.callers:
            out["callers"] = dict(self.callers)
        return out


@dataclass(frozen=True)
class LastFailure:
    """The newest failed call of a tool: its error kind and when it happened."""

    name: str
    kind: str
    at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "at": self.at.isoformat()}


@dataclass(frozen=True)
class SearchHit:
    """One search result, best first (strong hits before weak ones).

    Attributes:
        score: what the hits are ordered by, higher is better, comparable only within one
            search: with the embedding model, similarity plus a share of relevance; without
            it, the full-text rank (bm25 on SQLite, ts_rank on PostgreSQL).
        relevance: the share of the query's information the tool's words cover, 0..1
            (registry/search.py): 1.0 when it has every word of the query.
        strength: ``strong`` (the tool shares enough of the need, in words or in meaning) or
            ``weak`` (the closest there is, sharing little: read it before relying on it).
        matched: the query's words the tool's name, description or parameters have.
        similarity: cosine similarity of the query and the tool's name and description
            (None without the embedding model).
        parameters: the version's JSON Schema, for the top hit only (so a model can call it
            without asking again); None for the others.
    """

    name: str
    version: int
    description: str
    status: str
    score: float
    relevance: float = 1.0
    parameters: dict[str, Any] | None = None
    strength: str = "strong"
    matched: tuple[str, ...] = ()
    similarity: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "status": self.status,
            "strength": self.strength,
            "score": self.score,
            "relevance": self.relevance,
            "matched": list(self.matched),
        }
        if self.similarity is not None:
            out["similarity"] = self.similarity
        if self.parameters is not None:
            out["parameters"] = self.parameters
        return out


class RegistryError(Exception):
    """A registry operation that cannot be done; ``kind`` is machine-readable."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


class DriverError(Exception):
    """The database failed under a statement run on the driver alone (the call path, and
    opening a SQLite file); ``orig`` is the driver's own error. Caught as one of
    :data:`toolfoundry.registry.StoreError`, like SQLAlchemy's errors on every other path."""

    def __init__(self, orig: Exception) -> None:
        super().__init__(str(orig))
        self.orig = orig


def is_store_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the database failing (:data:`toolfoundry.registry.StoreError`: a
    :class:`DriverError`, or SQLAlchemy's base error once SQLAlchemy is loaded), told apart
    without importing SQLAlchemy, so the call path can catch it and stay light."""
    if isinstance(exc, DriverError):
        return True
    errors = sys.modules.get("sqlalchemy.exc")
    return errors is not None and isinstance(exc, errors.SQLAlchemyError)


def store_error_text(exc: BaseException) -> str:
    """The database's own words for a store error (the driver's message, without
    SQLAlchemy's wrapping and its link)."""
    orig = getattr(exc, "orig", None)
    return str(orig if orig is not None else exc)
