"""The registry: tools, immutable versions, the current-version pointer, approvals.

Every change is one transaction that takes the tool's write lock first (``BEGIN IMMEDIATE``
on SQLite, ``SELECT ... FOR UPDATE`` on the tool row on PostgreSQL), so version numbers are
assigned without gaps or duplicates under concurrent writers, and a version, its pointer
move, its search document and its audit rows become visible together or not at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from sqlalchemy import ColumnElement, func, insert, select, update
from sqlalchemy.engine import Connection, Engine, Row

from toolfoundry.base.json_gate import lone_surrogate_at
from toolfoundry.registry import audit as audit_log
from toolfoundry.registry import dependencies as dependency_rows
from toolfoundry.registry import embedder, lookalikes, upstream_approvals, write_probe
from toolfoundry.registry import holds as approval_rule
from toolfoundry.registry import review_facts as review
from toolfoundry.registry import reviews as library_reviews
from toolfoundry.registry import runs as agent_runs
from toolfoundry.registry import search as fulltext
from toolfoundry.registry import usage as usage_counters
from toolfoundry.registry import vectors as search_vectors
from toolfoundry.registry import versions as version_reads
from toolfoundry.registry.calls import CallStatements
from toolfoundry.registry.code_runs import CodeRunRow
from toolfoundry.registry.codecs import as_utc, now
from toolfoundry.registry.engine import (
    EngineConnections,
    create_registry_engine,
    migrate,
    upsert_insert,
    write_options,
)
from toolfoundry.registry.faults import crash_point
from toolfoundry.registry.gate_codec import stored_gate_record
from toolfoundry.registry.kept_runs import RUNS_KEPT
from toolfoundry.registry.records import (
    AGENT_ACTOR,
    Approval,
    ApprovalHold,
    AuditEntry,
    AuditEvent,
    Dependency,
    Dependent,
    LastFailure,
    NewVersion,
    RegistryError,
    SearchHit,
    ToolListing,
    ToolVersion,
    UsageStats,
)
from toolfoundry.registry.review_facts import ReviewFacts
from toolfoundry.registry.reviews import ReviewDue, ReviewRow
from toolfoundry.registry.runs import RunRow
from toolfoundry.registry.schema import approvals, tools, versions
from toolfoundry.registry.storage import SqlStorage
from toolfoundry.spec import ToolSpec, VersionStatus
from toolfoundry.spec.gate import suite_tally


class Registry:
    """Persistent, versioned tool store over SQLite or PostgreSQL (one code path)."""

    def __init__(self, engine: Engine, *, embeddings: bool = True) -> None:
        self._engine = engine
        # hybrid search's vectors (registry/vectors.py); embeddings=False: BM25 alone
        self.vectors = search_vectors.VectorIndex(
            embedder.load if embeddings else lambda: None, self._write
        )
        self.storage = SqlStorage(engine)
        # the call path's statements, on the driver (Foundry.open may make its own on a file)
        self._connections = EngineConnections(engine)
        self.calls = CallStatements(self._connections)

    @classmethod
    def open(cls, url: str, *, embeddings: bool = True) -> Registry:
        """Connect to ``url`` and apply any pending migrations (``embeddings=False``: search
        without the embedding model even where it is installed)."""
        engine = create_registry_engine(url)
        migrate(engine)
        return cls(engine, embeddings=embeddings)

    @property
    def engine(self) -> Engine:
        """The database, once this process's calls are all in it (on PostgreSQL they reach
        it through a journal, ``registry/call_journal.py``): whatever reads through it sees
        every call made before."""
        calls = getattr(self, "calls", None)
        if calls is not None:
            calls.flush()
        return self._engine

    def close(self) -> None:
        """Stop the search vectors' background pass, write the journaled call records, then
        release pooled connections."""
        self.vectors.close()
        self.calls.close()
        self._connections.close()
        self._engine.dispose()

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        engine = self.engine  # this process's calls are counted before anything reads them
        options = write_options(engine)
        with engine.connect().execution_options(**options) as conn, conn.begin():
            yield conn

    @contextmanager
    def _read(self) -> Iterator[Connection]:
        with self.engine.connect() as conn, conn.begin():
            yield conn

    # -- versions and the pointer ---------------------------------------------------------

    def add_version(self, new: NewVersion, *, actor: str = "user") -> ToolVersion:
        """Register ``new`` as the tool's next version, atomically.

        An active version becomes current. A pending one becomes current only when the tool
        has no current version yet (so a pending update never takes a working tool away).
        The version's code hash and capability-set hash are computed here by the functions
        the approval check uses, so any version registered here can be approved. ``actor`` is
        who registers it (the audit rows' actor); ``new.author`` is only what the draft says
        of itself, kept on the version and in the ``created`` row's detail.

        Raises:
            RegistryError: ``invalid_status`` (only active or pending versions are
                registered), ``invalid_text`` (a lone surrogate in the code or description),
                ``disabled`` (a person disabled the tool: it gets no version until enabled).
        """
        if new.status not in (VersionStatus.ACTIVE, VersionStatus.PENDING_APPROVAL):
            raise RegistryError("invalid_status", f"cannot register a {new.status} version")
        for field, text in (("code", new.code), ("description", new.description)):
            at = lone_surrogate_at(text)
            if at is not None:  # SQLite and PostgreSQL cannot store it as text
                raise RegistryError(
                    "invalid_text", f"the {field} holds a lone surrogate at index {at}"
                )
        who = actor
        self.vectors.prepare(new.name, new.description)  # the model runs outside the lock
        with self._write() as conn:
            tool = self._lock_tool(conn, new.name, create=True)
            if tool.current_status == VersionStatus.DISABLED.value:
                by_whom = self._disabled_by(conn, new.name)
                raise RegistryError(
                    "disabled", f"{new.name!r} is disabled (by {by_whom}); enable it first"
                )
            crash_point("after_tool_row")
            number = (
                conn.execute(
                    select(func.max(versions.c.version)).where(versions.c.tool_id == tool.id)
                ).scalar()
                or 0
            ) + 1
            inserted = conn.execute(
                insert(versions).values(
                    tool_id=tool.id,
                    version=number,
                    language=new.language,
                    code=new.code,
                    sha256=new.sha256,
                    description=new.description,
                    parameters=new.parameters,
                    returns=new.returns,
                    tests=new.tests,
                    fixtures=new.fixtures,
                    capabilities=new.capabilities.to_dict(),
                    capability_hash=new.capability_hash,
                    level=new.level,
                    status=new.status.value,
                    author=new.author,
                    created_at=now(),
                    parent_version=new.parent_version,
                    findings=new.findings,
                    test_results=new.test_results,
                    extra=stored_gate_record(new.gate),
                )
            )
            crash_point("after_version_insert")
            version_id = inserted.inserted_primary_key[0]  # type: ignore[index]
            dependency_rows.write(conn, version_id, new.uses)
            audit_log.append(
                conn,
                new.name,
                number,
                AuditEvent.CREATED,
                who,
                {"sha256": new.sha256, "author": new.author},
            )
            retired = new.gate.suite.retired if new.gate.suite else ()
            if retired:  # the tests it no longer passes on purpose, and why
                detail = {"retired": [{"test": r.test, "reason": r.reason} for r in retired]}
                audit_log.append(conn, new.name, number, AuditEvent.TESTS_RETIRED, who, detail)
            # the one count every surface shows: its own tests and the earlier ones that ran
            own = [{"passed": _passed(r)} for r in new.test_results]
            tally = suite_tally(own, new.gate)
            audit_log.append(conn, new.name, number, AuditEvent.TESTED, who, tally.to_dict())
            if new.status is VersionStatus.ACTIVE or tool.current_version is None:
                self._point(
                    conn, tool.id, new.name, number, new.status, new.description, new.parameters
                )
                crash_point("after_pointer_move")
            if new.status is VersionStatus.ACTIVE:
                audit_log.append(conn, new.name, number, AuditEvent.ACTIVATED, who, {})
            crash_point("before_commit")
        crash_point("after_commit")
        return self.get(new.name, number)

    def _lock_tool(self, conn: Connection, name: str, *, create: bool = False) -> Row[Any]:
        made = 0
        if create:
            insert_ = upsert_insert(conn.dialect.name)
            at = now()
            made = conn.execute(
                insert_(tools)
                .values(name=name, created_at=at, updated_at=at)
                .on_conflict_do_nothing(index_elements=[tools.c.name])
            ).rowcount
        row = conn.execute(select(tools).where(tools.c.name == name).with_for_update()).first()
        if row is None:
            raise RegistryError("not_found", f"no tool named {name!r}")
        if made:  # a new tool: its name's lookalike keys, written once, with the tool row
            lookalikes.remember(conn, row.id, name)
        return row

    def _point(
        self,
        conn: Connection,
        tool_id: int,
        name: str,
        number: int,
        status: VersionStatus,
        description: str,
        parameters: dict[str, Any],
    ) -> None:
        conn.execute(
            update(tools)
            .where(tools.c.id == tool_id)
            .values(current_version=number, current_status=status.value, updated_at=now())
        )
        fulltext.index(conn, tool_id, name, description, parameters, status.value)
        self.vectors.write(conn, tool_id, name, description, status.value)

    def _set_status(
        self, conn: Connection, tool: Row[Any], number: int, status: VersionStatus
    ) -> None:
        conn.execute(
            update(versions)
            .where(versions.c.tool_id == tool.id, versions.c.version == number)
            .values(status=status.value)
        )
        if tool.current_version == number:
            conn.execute(
                update(tools).where(tools.c.id == tool.id).values(current_status=status.value)
            )
            fulltext.set_status(conn, tool.id, status.value)
            search_vectors.set_status(conn, tool.id, status.value)

    def _version_in(self, conn: Connection, name: str, number: int | None) -> ToolVersion:
        return version_reads.one(conn, name, number)

    def resolve(self, name: str, version: int | None = None) -> tuple[int, int, VersionStatus]:
        """(row id, number, status) of the named or current version: the per-call lookup.
        Every version of a disabled tool resolves as ``disabled``.

        Raises:
            RegistryError: ``not_found`` for an unknown tool or version.
        """
        return self.calls.resolve(name, version)

    def get(self, name: str, version: int | None = None) -> ToolVersion:
        """The named version, or the current one; raises ``RegistryError('not_found')``."""
        with self._read() as conn:
            return self._version_in(conn, name, version)

    def history(self, name: str) -> list[ToolVersion]:
        """Every version of a tool, oldest first (raises ``not_found`` for unknown tools)."""
        with self._read() as conn:
            return version_reads.history(conn, name)

    def versions_of(self, name: str) -> list[ToolVersion]:
        """Every version of a tool, oldest first; [] for an unknown name (what a create asks
        of its draft's name: no "did you mean", which would read every tool's name)."""
        with self._read() as conn:
            return version_reads.versions_of(conn, name)

    def current_versions(
        self,
        *,
        status: VersionStatus | None = None,
        names: Sequence[str] | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[ToolVersion]:
        """The current version of every tool, by name, in one query (optionally only those
        with ``status``, or only the named ones; ``limit`` of them after skipping
        ``offset``)."""
        with self._read() as conn:
            return version_reads.current(
                conn, status=status, names=names, limit=limit, offset=offset
            )

    def listing(
        self,
        *,
        status: VersionStatus | None = None,
        limit: int | None = None,
        offset: int = 0,
    ) -> list[ToolListing]:
        """Every tool's current version as a listing shows it (name, version, status,
        capabilities, description, pending versions, ...), by name, in one read: the narrow
        columns only, so no code, schema, test or result is read or decoded (``tools list``).
        Optionally only those with ``status``; ``limit`` of them after skipping ``offset``."""
        with self._read() as conn:
            return version_reads.listing(conn, status=status, limit=limit, offset=offset)

    def active_specs(
        self, names: Sequence[str] | None = None, *, examples: bool = False
    ) -> list[ToolSpec]:
        """The ToolSpec of every active tool's current version (or of the named ones among
        them), by name, in one read of only the columns a spec is made of: each equals
        ``v.spec`` of :meth:`current_versions` with ``status=ACTIVE`` (catalogues, MCP).
        ``examples``: with the arguments of up to three passing tests each (this reads the
        tests too)."""
        with self._read() as conn:
            return version_reads.specs(
                conn, status=VersionStatus.ACTIVE, names=names, examples=examples
            )

    def lookalike(self, name: str) -> str | None:
        """The first tool by name, other than ``name``, that ``name`` passes for
        (spec/names.py:name_keys): one probe of the stored keys (registry/lookalikes.py)."""
        with self._read() as conn:
            return lookalikes.twin(conn, name)

    def pending(self) -> list[ToolVersion]:
        """Versions waiting for a human decision, oldest first."""
        with self._read() as conn:
            return version_reads.pending(conn)

    def pending_numbers(self, name: str) -> list[int]:
        """The numbers of ``name``'s versions waiting for a human decision, ascending."""
        with self._read() as conn:
            return _pending_numbers(conn, tools.c.name == name)

    def pending_by_tool(self) -> dict[str, list[int]]:
        """Every tool with versions waiting for a human: its name -> their numbers, ascending
        (one narrow query, for listings that flag such tools)."""
        with self._read() as conn:
            return {n: list(v) for n, v in version_reads.pending_by_tool(conn).items()}

    def find_active_by_sha(self, sha256: str, *, exclude: str | None = None) -> ToolVersion | None:
        """A current, active tool whose code has this hash (duplicate detection)."""
        with self._read() as conn:
            return version_reads.active_with_sha(conn, sha256, exclude)

    def active_set(self) -> list[tuple[str, int]]:
        """(name, current version) of every tool whose current version is active, by name.

        One narrow row per tool and no JSON: cheap enough for a server to poll.
        """
        with self._read() as conn:
            return version_reads.active_set(conn)

    # -- dependencies (code mode) ---------------------------------------------------------

    def dependencies(self, name: str, version: int | None = None) -> list[Dependency]:
        """The tools version ``version`` of ``name`` (the current one by default) calls, each
        with the version its tests ran against; [] for a tool that calls none (or unknown)."""
        with self._read() as conn:
            return dependency_rows.of_named(conn, name, version)

    def uses_of(self, names: Sequence[str]) -> dict[str, list[Dependency]]:
        """What the current version of each named tool calls, by name (one query; the tools
        that call nothing are left out)."""
        with self._read() as conn:
            return dependency_rows.of_current(conn, names)

    def dependents(self, names: Sequence[str]) -> dict[str, list[Dependent]]:
        """The versions whose code calls each named tool: each tool's current version and
        its versions waiting for approval, by callee (one query; uncalled tools left out)."""
        with self._read() as conn:
            return dependency_rows.dependents(conn, names)

    # -- decisions and lifecycle ----------------------------------------------------------

    def decide(
        self, name: str, version: int | None, *, approve: bool, by: str, reason: str
    ) -> ToolVersion:
        """Approve (activate and make current) or reject a pending version.

        ``version`` None means the tool's one pending version. The approval row binds the
        approver, time, reason, code hash and capability-set hash. An approval the rule of
        registry/holds.py holds back is refused with the hold's kind; a rejection never is.

        Raises:
            RegistryError: ``not_pending``; ``ambiguous_version`` when ``version`` is None
                and more than one version is pending (checked under the tool's write lock,
                so a version that arrives meanwhile is never the one decided);
                ``superseded`` (a newer version has been active) and ``disabled`` (a person
                disabled the tool) for an approval.
        """
        with self._write() as conn:
            tool = self._lock_tool(conn, name)
            if version is None:
                numbers = _pending_numbers(conn, tools.c.id == tool.id)
                if not numbers:
                    raise RegistryError("not_pending", f"{name!r} has no version awaiting approval")
                if len(numbers) > 1:
                    listed = ", ".join(f"v{n}" for n in numbers)
                    raise RegistryError(
                        "ambiguous_version",
                        f"{name!r} has {len(numbers)} versions awaiting approval ({listed}): "
                        "name one",
                    )
                version = numbers[0]
            target = self._version_in(conn, name, version)
            if target.status is not VersionStatus.PENDING_APPROVAL:
                raise RegistryError(
                    "not_pending", f"{name!r} version {version} is {target.status.value}"
                )
            if approve:
                hold = approval_rule.holds(conn, tools.c.id == tool.id).get((name, version))
                if hold is not None:
                    raise RegistryError(hold.kind.value, hold.message)
            conn.execute(
                insert(approvals).values(
                    version_id=target.id,
                    approver=by,
                    decided_at=now(),
                    decision="approved" if approve else "rejected",
                    reason=reason,
                    code_sha256=target.sha256,
                    capability_hash=target.capability_hash,
                )
            )
            detail = {"reason": reason, "sha256": target.sha256}
            if approve:
                self._set_status(conn, tool, version, VersionStatus.ACTIVE)
                self._point(
                    conn,
                    tool.id,
                    name,
                    version,
                    VersionStatus.ACTIVE,
                    target.description,
                    target.parameters,
                )
                audit_log.append(conn, name, version, AuditEvent.APPROVED, by, detail)
                audit_log.append(conn, name, version, AuditEvent.ACTIVATED, by, {})
            else:
                self._set_status(conn, tool, version, VersionStatus.REJECTED)
                audit_log.append(conn, name, version, AuditEvent.REJECTED, by, detail)
            return self._version_in(conn, name, version)

    def approval_holds(self, name: str | None = None) -> dict[tuple[str, int], ApprovalHold]:
        """The pending versions (of ``name``, or of every tool) that :meth:`decide` would
        refuse to approve, by (name, version), with why (registry/holds.py): what the
        approvals queue shows before the click."""
        with self._read() as conn:
            return approval_rule.holds(conn, None if name is None else tools.c.name == name)

    def approvals(self, name: str) -> list[Approval]:
        """Every decision made on the tool's versions, oldest first."""
        query = (
            select(approvals, versions.c.version, tools.c.name)
            .join(versions, versions.c.id == approvals.c.version_id)
            .join(tools, tools.c.id == versions.c.tool_id)
            .where(tools.c.name == name)
            .order_by(approvals.c.id)
        )
        with self._read() as conn:
            rows = conn.execute(query).all()
        return [
            Approval(
                r.name,
                r.version,
                r.approver,
                as_utc(r.decided_at),
                r.decision,
                r.reason,
                r.code_sha256,
                r.capability_hash,
            )
            for r in rows
        ]

    def rollback(self, name: str, to: int, *, by: str = "user") -> ToolVersion:
        """Move the pointer to an earlier active version; nothing is deleted.

        Rolling a disabled tool back switches it on again, so only a person may: ``by``
        :data:`AGENT_ACTOR` is refused with ``disabled``.
        """
        with self._write() as conn:
            tool = self._lock_tool(conn, name)
            if tool.current_status == VersionStatus.DISABLED.value and by == AGENT_ACTOR:
                who = self._disabled_by(conn, name)
                raise RegistryError(
                    "disabled",
                    f"{name!r} was disabled by {who}; only a person can switch it back on "
                    "(toolfoundry tools enable, or a rollback by a person)",
                )
            target = self._version_in(conn, name, to)
            if target.status is not VersionStatus.ACTIVE:
                raise RegistryError(
                    "not_active",
                    f"cannot roll back to {name!r} version {to}: it is {target.status.value}",
                )
            self._point(
                conn, tool.id, name, to, target.status, target.description, target.parameters
            )
            audit_log.append(
                conn, name, to, AuditEvent.ROLLED_BACK, by, {"from": tool.current_version, "to": to}
            )
            return self._version_in(conn, name, to)

    def set_enabled(self, name: str, enabled: bool, *, by: str = "user") -> ToolVersion:
        """Disable the current active version, or enable a disabled current version."""
        want, have = (
            (VersionStatus.ACTIVE, VersionStatus.DISABLED)
            if enabled
            else (VersionStatus.DISABLED, VersionStatus.ACTIVE)
        )
        with self._write() as conn:
            tool = self._lock_tool(conn, name)
            current = self._version_in(conn, name, None)
            if current.status is not have:
                raise RegistryError(
                    "invalid_status",
                    f"{name!r} version {current.version} is {current.status.value}, "
                    f"not {have.value}",
                )
            self._set_status(conn, tool, current.version, want)
            event = AuditEvent.ENABLED if enabled else AuditEvent.DISABLED
            audit_log.append(conn, name, current.version, event, by, {})
            return self._version_in(conn, name, None)

    def disabled_by(self, name: str) -> str:
        """Who disabled the tool last (the actor of its newest ``disabled`` audit row)."""
        with self._read() as conn:
            return self._disabled_by(conn, name)

    def _disabled_by(self, conn: Connection, name: str) -> str:
        return approval_rule.disabled_by(conn, {name})[name]

    # -- calls, usage, audit, search ------------------------------------------------------

    def record_call(
        self,
        name: str,
        version: int,
        *,
        duration_ms: float,
        error_kind: str | None,
        actor: str = "agent",
    ) -> None:
        """Count a call and append its ``called`` audit row, in one short transaction.

        Every call is its own audit row (not an aggregate): who called which version when,
        and how it ended, is what an audit of an agent's tools needs; usage keeps the totals.
        """
        self.calls.record(name, version, duration_ms, error_kind, actor)

    def usage(self, name: str) -> UsageStats:
        """Calls, failures by kind, p50/p95 duration and last use of a tool."""
        with self._read() as conn:
            return usage_counters.stats(conn, name)

    def usage_series(self, name: str, days: int = 30) -> usage_counters.UsageSeries:
        """Calls per day over the last ``days`` days (UTC) and the duration histogram, for the
        tool page's charts."""
        today = now().date()  # UTC
        with self._read() as conn:
            return usage_counters.series(conn, name, days, today)

    def usage_of(self, names: Sequence[str]) -> dict[str, UsageStats]:
        """:meth:`usage` of each of ``names`` in one transaction (tools never called cost
        no query, so a listing of hundreds of tools stays fast)."""
        with self._read() as conn:
            return usage_counters.stats_of(conn, names)

    def last_failures(self, name: str | None = None) -> dict[str, LastFailure]:
        """The newest failed call of every tool that failed (or only of ``name``), by name."""
        with self._read() as conn:
            return usage_counters.last_failures(conn, name)

    def audit(self, name: str | None = None, *, limit: int | None = None) -> list[AuditEntry]:
        """Audit rows, oldest first, for one tool or all."""
        with self._read() as conn:
            return audit_log.entries(conn, name, limit)

    # -- upstream tools (registry/upstream_approvals.py) --------------------------------------

    def decide_upstream(
        self,
        tool: str,
        *,
        approve: bool,
        schema_hash: str,
        schema: dict[str, Any],
        by: str,
        reason: str = "",
    ) -> None:
        """Record a person's approval (or revocation) of the upstream tool ``tool``
        (``UPSTREAM.TOOL``) for the input schema whose hash is ``schema_hash``."""
        with self._write() as conn:
            upstream_approvals.decide(
                conn,
                tool,
                approve=approve,
                schema_hash=schema_hash,
                schema=schema,
                by=by,
                reason=reason,
            )

    def upstream_decisions(
        self, tools: Sequence[str] | None = None
    ) -> dict[str, list[upstream_approvals.UpstreamDecision]]:
        """Every decision about each upstream tool named (all when None), oldest first."""
        with self._read() as conn:
            return upstream_approvals.decisions(conn, tools)

    def review_facts(self) -> ReviewFacts:
        """What a periodic review reads (registry/review_facts.py): every tool's current
        status, capabilities and call counters, the pending versions and the test
        retirements, in four set queries of one transaction, whatever the number of tools."""
        with self._read() as conn:
            return review.review_facts(conn)

    def parent_fixtures(self, names: Sequence[str]) -> dict[str, list[Any]]:
        """The draft-level fixtures of the version each named tool's current version was
        made from, by name (one query; tools without a parent are left out)."""
        with self._read() as conn:
            return review.parent_fixtures(conn, names)

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        active_only: bool = True,
        floor: float = fulltext.RELEVANCE_FLOOR,
    ) -> list[SearchHit]:
        """Ranked search over names, descriptions and parameter docs (hybrid with the
        embedding model): strong hits first, then weak ones (relevance under ``floor``, or too
        little alike; 0 makes every word match strong), the first with its parameters
        schema. Tools still without a vector get theirs from a background pass (started
        here when needed); meanwhile they rank by BM25 alone."""
        self.vectors.backfill()
        with self._read() as conn:
            return fulltext.search(
                conn, query, k, active_only=active_only, floor=floor, vectors=self.vectors
            )

    def check_writable(self) -> None:
        """Make the smallest real write the store has (registry/write_probe.py): what
        ``/healthz`` asks, since a database that answers reads may refuse every write.

        Raises:
            StoreError: it cannot be written (a full disk, a read-only store).
        """
        with self._write() as conn:
            write_probe.probe(conn)

    # -- reviews of the library -----------------------------------------------------------

    def claim_review(
        self, due: ReviewDue, *, runner: str, fingerprint: str, runtime: dict[str, Any]
    ) -> ReviewRow | None:
        """Start a review of the library when ``due(newest review, now)`` names why, under a
        lock every process sharing the database takes (registry/reviews.py), else None."""
        with self._write() as conn:
            return library_reviews.claim(
                conn, due, runner=runner, fingerprint=fingerprint, runtime=runtime
            )

    def finish_review(
        self, review_id: int, summary: Mapping[str, object], findings: Mapping[str, object]
    ) -> None:
        """Store what a claimed review found (the oldest past the newest 100 are deleted)."""
        with self.engine.begin() as conn:
            library_reviews.finish(conn, review_id, summary, findings)

    def abandon_review(self, review_id: int) -> None:
        """Forget a claimed review that will not finish (registry/reviews.py:abandon)."""
        with self.engine.begin() as conn:
            library_reviews.abandon(conn, review_id)

    def last_review(self, *, finished: bool = True) -> ReviewRow | None:
        """The newest review of the library (only among finished ones by default)."""
        with self._read() as conn:
            return library_reviews.newest(conn, finished=finished)

    # -- agent runs -----------------------------------------------------------------------

    def save_run(self, row: RunRow, *, kept: int = RUNS_KEPT) -> None:
        """Store an agent run, replacing what was stored of it before (one transaction); a new
        run deletes the runs past the age or the count (``kept``) kept (registry/kept_runs.py)."""
        with self.engine.begin() as conn:
            agent_runs.save(conn, row, kept)

    def run_transcript(self, run_id: str) -> dict[str, Any] | None:
        """The stored transcript of an agent run, or None when there is no such run."""
        with self._read() as conn:
            return agent_runs.transcript(conn, run_id)

    def recent_runs(self, limit: int = 20) -> list[dict[str, Any]]:
        """Summary columns of the newest agent runs (no transcripts), newest first."""
        with self._read() as conn:
            return agent_runs.recent(conn, limit)

    # -- code-mode runs -------------------------------------------------------------------

    def save_code_run(self, row: CodeRunRow) -> None:
        """Keep a run_js snippet's run; runs past the count and age kept are deleted
        (registry/kept_runs.py), in the same transaction (``calls.record_all``, which keeps
        a run with its inner calls' records)."""
        self.calls.record_all([], run=row)

    def code_run(self, run_id: str) -> CodeRunRow | None:
        """A kept run, or None when there is no such run (or it is no longer kept)."""
        return self.calls.code_run(run_id)


def _passed(result: Any) -> bool:
    if isinstance(result, dict):
        return bool(result.get("passed", result.get("ok", False)))
    return bool(getattr(result, "passed", False))


def _pending_numbers(conn: Connection, which_tool: ColumnElement[bool]) -> list[int]:
    query = (
        select(versions.c.version)
        .join(tools, tools.c.id == versions.c.tool_id)
        .where(which_tool, versions.c.status == VersionStatus.PENDING_APPROVAL.value)
        .order_by(versions.c.version)
    )
    return [int(n) for n in conn.execute(query).scalars()]
