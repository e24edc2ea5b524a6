"""The public ``Foundry``: create tools from drafts, call them, review, version and find them.

    fd = Foundry.open()                        # ./.toolfoundry/registry.db unless told otherwise
    r = fd.create_tool(draft)                  # forge (check, test, policy) -> registry
    out = fd.call("slugify", {"text": "Hi"})   # validate -> sandbox -> usage + audit

Data flows one way: draft -> forge -> registry -> call -> sandbox. The facade holds no
state of its own beyond caches of immutable versions.

The lazy boundary is here, and only here: a script that opens and calls loads no SQLAlchemy,
pydantic, tree-sitter or forge (tests/performance/test_startup_imports.py; the import contract
``call-path-light`` keeps the call path's own imports so). What such a script does not need
loads on first use, in this module's accessors: :attr:`Foundry.registry` (SQLAlchemy),
``_intake`` (create: the forge), :meth:`~Foundry.verify`, :meth:`~Foundry.report`,
:meth:`~Foundry.diff` (difflib), :meth:`~Foundry.show_tool`, :meth:`~Foundry.catalog`, the
approval's binding check and the Python tier. The modules behind them import at top level.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from toolfoundry.base.collector import gc_paused
from toolfoundry.config import Config, load_config
from toolfoundry.foundry import telemetry
from toolfoundry.foundry.call import Caller, with_step
from toolfoundry.registry import (
    AGENT_ACTOR,
    AuditEntry,
    RegistryError,
    SearchHit,
    ToolVersion,
    UsageStats,
    VersionStatus,
    resolve_url,
    sqlite_file,
)
from toolfoundry.registry.calls import CallStatements
from toolfoundry.registry.records import is_store_error, store_error_text
from toolfoundry.registry.write_failures import FailedWrites
from toolfoundry.sandbox.process.executor import Executor, ProcessLimits
from toolfoundry.spec import CallResult, ErrorKind, StepResult, StepStatus, ToolSpec
from toolfoundry.spec.status import StepJson

if TYPE_CHECKING:  # loaded by the periodic checks only; the forge by the first create_tool
    from toolfoundry.forge import Draft, ToolRunner
    from toolfoundry.foundry.callees import UpstreamCallees
    from toolfoundry.foundry.create import CreateResult, Intake
    from toolfoundry.foundry.report import ReviewReport
    from toolfoundry.foundry.upstream_gate import UpstreamEntry, UpstreamGate
    from toolfoundry.foundry.upstream_uses import UpstreamUse
    from toolfoundry.foundry.verify import ToolVerification, Verifier, VerifyReport
    from toolfoundry.registry import Dependency, Registry
    from toolfoundry.sandbox.host.credentials import SecretStore
    from toolfoundry.sandbox.policy import SandboxPolicy
    from toolfoundry.upstream import UpstreamServers


class DecisionJson(TypedDict):
    """What ``approvals approve/reject --json`` and the HTTP API answer for a decision."""

    name: str
    version: int | None
    status: str | None
    step: StepJson


@dataclass(frozen=True)
class Decision:
    """What ``approve``/``reject`` did: the version's new status, and the step outcome."""

    name: str
    version: int | None
    status: str | None
    step: StepResult

    def to_dict(self) -> DecisionJson:
        return {
            "name": self.name,
            "version": self.version,
            "status": self.status,
            "step": self.step.to_dict(),
        }


def ambiguous_step(name: str, waiting: list[int]) -> StepResult:
    """The blocked step of a decision that names no version while several are pending."""
    listed = ", ".join(f"v{n}" for n in sorted(waiting))
    message = (
        f"{name!r} has {len(waiting)} versions awaiting approval ({listed}): "
        f"name the one you reviewed, as {name}@VERSION"
    )
    details = {"pending_versions": sorted(waiting)}
    return StepResult(StepStatus.BLOCKED, None, ("ambiguous_version",), message, details)


class Foundry:
    """The foundry over one registry and one configuration."""

    def __init__(
        self,
        registry: Registry | sqlite_file.RegistryFile,
        config: Config | None = None,
        *,
        executor: Executor | None = None,
        secret_store: SecretStore | None = None,
    ) -> None:
        """A foundry over ``registry``: an open :class:`Registry`, or a SQLite file at the
        current schema (what :meth:`open` gives it), whose calls run on the driver and whose
        :class:`Registry` (SQLAlchemy, ~0.2 s to import) opens on first use (:attr:`registry`),
        so a process that opens and calls loads none of it. ``secret_store`` answers the
        ``secret`` keys of ``[[fetch.credentials]]`` and ``[[upstream.credentials]]`` (None:
        the directory ``TOOLFOUNDRY_SECRETS_DIR`` names, if set; sandbox/host/credentials.py)."""
        if isinstance(registry, sqlite_file.RegistryFile):
            self._registry: Registry | None = None
            self._file: sqlite_file.RegistryFile | None = registry
            self._statements = CallStatements(registry.connections)
        else:
            self._registry, self._file, self._statements = registry, None, registry.calls
        self._opening = threading.Lock()
        self.failed_writes = FailedWrites()  # what /healthz reports (registry/write_failures.py)
        self._executor = executor
        self._owns_executor = executor is None
        self._python_probed = False
        self._python_probing = threading.Lock()  # one probe and one pool, however many callers
        # format -> (the active (name, version) set it was rendered from, the text)
        self._catalogs: dict[str, tuple[list[tuple[str, int]], str]] = {}
        config = config or Config()
        if secret_store is None:
            from toolfoundry.sandbox.host.credentials import environment_store

            secret_store = environment_store()
        self.secret_store = secret_store
        # the [[upstream]] servers, connected on first use (serve: at start); kept until a
        # restart, whatever a reloaded configuration says
        self.upstreams: UpstreamServers | None = None
        if config.upstreams:
            from toolfoundry.upstream import UpstreamServers

            self.upstreams = UpstreamServers(config.upstreams, secret_store=secret_store)
        self._upstream_gate: UpstreamGate | None = None
        self.reconfigure(config)

    def reconfigure(self, config: Config) -> None:
        """Use ``config`` from the next call, create or decision on (``serve`` reloading its
        toolfoundry.toml: foundry/config_reload.py); one already running keeps the old one.

        The registry stays open and the Python tier's worker pool keeps the settings it was
        started with (``[registry]``, ``python_total_mib``, ``python_queue_s``,
        ``python_packages`` take a new Foundry).
        """
        if self.secret_store is not None and config.fetch.secret_store is not self.secret_store:
            # one store for both kinds of credentials: the fetch ones read it at send time
            fetch = dataclasses.replace(config.fetch, secret_store=self.secret_store)
            config = dataclasses.replace(config, fetch=fetch)
        self.config = config
        # calls and the forge's test runs take the same config.limits (one CallLimits)
        self._caller = Caller(
            self._statements,
            lambda: self.registry,
            config.limits,
            config.fetch,
            process_limits=self._process_limits(),
            python_executor=self.python_executor,
        )
        if self.upstreams is not None:
            from toolfoundry.foundry.upstream_gate import UpstreamGate

            gate = UpstreamGate(
                self.upstreams, lambda: self.registry, self._statements, config.limits
            )
            self._upstream_gate = self._caller.upstream = gate
        self._made_intake: Intake | None = None

    @property
    def _intake(self) -> Intake:
        """The create path, built on first use: the forge it loads (pydantic, tree-sitter,
        the test runner) is not needed to call or list tools. Stateless, so a race only builds
        one twice; one built under a configuration replaced meanwhile is used once, not kept."""
        intake = self._made_intake
        if intake is None:
            from toolfoundry.foundry.create import Intake

            config = self.config
            intake = Intake(
                self.registry,
                config,
                python_runner=self._python_runner,
                callees=self._caller.test_callees,
                stand_in_callees=self._caller.test_callees,
                upstream=self._upstream_callees,
            )
            if self.config is config:
                self._made_intake = intake
        return intake

    def _upstream_callees(self) -> UpstreamCallees | None:
        """The upstream tools a draft's code may call (foundry/callees.py), if any."""
        if self._upstream_gate is None:
            return None
        from toolfoundry.foundry.callees import GateCallees

        return GateCallees(self._upstream_gate)

    @classmethod
    def open(
        cls,
        url: str | None = None,
        *,
        config: Config | str | Path | None = None,
        executor: Executor | None = None,
        secret_store: SecretStore | None = None,
    ) -> Foundry:
        """Open (creating and migrating when needed) the registry and read the configuration.

        Args:
            url: a SQLite file's path, ``sqlite:///PATH`` or ``postgresql://`` (``postgres://``)
                URL; else ``TOOLFOUNDRY_DB``, else ``[registry] url`` of the
                configuration, else SQLite under ``./.toolfoundry/``.
            config: a :class:`Config`, or the path of a toolfoundry.toml (default: the one in
                the working directory, when present).
            executor: runs Python-tier tools (default: :meth:`python_executor`'s choice).
            secret_store: answers the ``secret`` keys of ``[[fetch.credentials]]`` and
                ``[[upstream.credentials]]`` (default: ``TOOLFOUNDRY_SECRETS_DIR``'s files).

        Raises:
            toolfoundry.config.ConfigError: the configuration cannot be used.
            toolfoundry.registry.engine.SchemaMismatch: the database was written by a newer
                toolfoundry (a schema revision this one does not know).
        """
        if not isinstance(config, Config):
            config = load_config(config)
        if url is None and not os.environ.get("TOOLFOUNDRY_DB"):
            url = config.registry_url
        url = resolve_url(url)
        path = sqlite_file.file_of(url)
        if path is not None:
            connections = sqlite_file.Connections(path)
            if connections.schema_revision() == sqlite_file.SCHEMA_HEAD:
                return cls(
                    sqlite_file.RegistryFile(url, connections),
                    config,
                    executor=executor,
                    secret_store=secret_store,
                )
            connections.close()
        from toolfoundry.registry import Registry

        return cls(Registry.open(url), config, executor=executor, secret_store=secret_store)

    @property
    def registry(self) -> Registry:
        """The registry this foundry reads and writes (opened on first use over a file: one
        opening, however many threads ask at once)."""
        registry = self._registry
        if registry is None:
            assert self._file is not None
            with self._opening:
                registry = self._registry
                if registry is None:
                    from toolfoundry.registry import Registry

                    registry = self._registry = Registry.open(self._file.url)
        return registry

    def close(self) -> None:
        """Release database connections (and the Python tier's warm workers we started), and
        end the upstream servers' sessions."""
        if self.upstreams is not None:
            self.upstreams.close()
        if self._owns_executor and self._executor is not None:
            self._executor.close()
            self._executor = None
        if self._registry is not None:
            self._registry.close()
        if self._file is not None:
            self._file.connections.close()

    def python_executor(self) -> Executor | None:
        """The Python tier's executor: the one given, else ``TOOLFOUNDRY_EXECUTOR`` (an
        executor service URL, token in ``TOOLFOUNDRY_EXECUTOR_TOKEN``), else a warm pool of
        bubblewrap jails; None when none is available (Python drafts are then refused).

        Probed once, under a lock: callers that come while the probe runs wait for its
        verdict (a tier still being probed is not an unavailable one), and an unavailable
        tier is not probed again per call.
        """
        if self._python_probed:
            return self._executor
        with self._python_probing:
            if self._executor is None and not self._python_probed:
                from toolfoundry.sandbox.process import Admission, default_executor
                from toolfoundry.spec.limits import MIB

                # calls and draft test runs share one budget ([limits] python_total_mib)
                total = self.config.python_total_mib * MIB
                admission = Admission(total, self.config.python_queue_s)
                self._executor = default_executor(
                    self.config.policy.python_packages, admission=admission
                )
            self._python_probed = True  # set last: a reader that sees it sees the verdict
        return self._executor

    def _python_runner(self) -> ToolRunner | None:
        from toolfoundry.forge.sandbox_runner import PythonRunner

        executor = self.python_executor()
        return PythonRunner(executor, self._process_limits()) if executor else None

    def _process_limits(self) -> ProcessLimits:
        packages = self.config.policy.python_packages
        return ProcessLimits(allowed_packages=packages).bounded_by(self.config.limits)

    def __enter__(self) -> Foundry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- creating ------------------------------------------------------------------------

    def create_tool(
        self, draft: Draft | Mapping[str, Any] | str | bytes, *, by: str = "user"
    ) -> CreateResult:
        """Forge a draft and register it as the tool's next version.

        Never raises for bad input: a malformed or failing draft gives a ``rejected`` result
        with structured findings, and the store is left unchanged.

        Args:
            draft: the draft (a Draft, a mapping, or its JSON text).
            by: who creates it, the audit log's actor (the MCP meta-tool passes
                ``"agent"``, the CLI the login name, the HTTP API ``"api"``); the draft's own
                ``author`` is kept on the version, never taken as the actor.
        """
        instruments = telemetry.instruments()
        if instruments is None:
            return self._create(draft, by)
        return instruments.create(draft, lambda: self._create(draft, by))

    def _create(self, draft: Draft | Mapping[str, Any] | str | bytes, by: str) -> CreateResult:
        try:
            made = self._intake.create(draft, by=by)
        except Exception as exc:  # the database failed under the forge: nothing was judged
            if not is_store_error(exc):
                raise
            from toolfoundry.foundry.create import store_unavailable

            self.failed_writes.note(store_error_text(exc))
            return store_unavailable(draft, exc)
        if made.version is not None and not made.unchanged:  # a version was stored
            self.failed_writes.cleared()
        return made

    # -- calling -------------------------------------------------------------------------

    def call(
        self,
        name: str,
        args: Any,
        *,
        version: int | None = None,
        call_id: str | None = None,
        by: str = AGENT_ACTOR,
    ) -> CallResult:
        """Validate ``args`` against the version's schema, run it in the sandbox, record usage.

        Returns a CallResult whose ``details["step"]`` is the step outcome and, once the name
        resolved, ``details["version"]`` the version that answered; failures carry
        ``not_found``, ``not_active``, ``invalid_arguments`` (every problem with its JSON
        path) or what the sandbox reported. ``call_id`` is the model's id for this call, when
        there is one (it labels the call's trace span, ``gen_ai.tool.call.id``). ``by`` is
        who calls, the audit row's actor: ``"agent"`` unless a person called (the CLI's
        ``call`` passes the login name).
        """
        gate = self._upstream_gate
        if gate is not None and "." in name and version is None:  # UPSTREAM.TOOL
            return with_step(gate.call(name, args, by=by))
        instruments = telemetry.instruments()
        if instruments is None:
            result = self._caller.call(name, args, version=version, by=by)
        else:
            result = instruments.call(
                name, lambda: self._caller.call(name, args, version=version, by=by), call_id=call_id
            )
        if result.error is not None and result.error.kind is ErrorKind.UNAVAILABLE:
            self.failed_writes.note(result.error.message)
        elif "version" in result.details:  # resolved, so recorded: the store took a write
            self.failed_writes.cleared()
        return result

    def run_js(
        self,
        code: str,
        args: Any = None,
        *,
        by: str = AGENT_ACTOR,
        policy: SandboxPolicy | None = None,
    ) -> CallResult:
        """Run a one-off ES module with the registry's tools, and keep the run.

        Inside it, ``await tools.NAME(args)`` calls NAME's current active version and
        ``await tools.call(name, args, {version})`` any version: each a real call (the
        callee's schema, its own approved capabilities, usage, and an audit row naming the
        run), within this run's time budget and ``[limits] inner_call_depth`` and
        ``inner_calls``. A failed inner call throws a ``ToolError`` (``kind``, ``message``,
        ``tool``). The run is kept (``details["run_id"]``): ``create_tool`` with
        ``from_run`` makes it a tool whose first test is this run.

        Args:
            code: the ES module; it exports ``handler(args)`` or a default value.
            args: the arguments passed to ``handler`` (``{}`` when None).
            by: who runs it, the inner calls' audit actor.
            policy: the run's own limits and capabilities (default: ``[limits]``, no network,
                no storage); its ``tools`` are always the registry's.
        """
        from toolfoundry.foundry.code_runs import run_snippet
        from toolfoundry.sandbox.policy import SandboxPolicy

        policy = policy or SandboxPolicy.under(self.config.limits)
        limits = self.config.limits
        return run_snippet(self._caller, self._statements, limits, code, args, policy, by=by)

    # -- reviewing and versions ----------------------------------------------------------

    def approve(
        self, name: str, version: int | None = None, *, by: str, reason: str = ""
    ) -> Decision:
        """Approve a pending version: it becomes active and current. The approval binds
        ``by``, the time, ``reason``, the code hash and the capability-set hash.

        ``version`` None is accepted only while exactly one version of the tool is pending
        (the step's message names it); with more than one the step is blocked
        ``ambiguous_version`` and its message lists them, since a version that arrived after
        the reviewer looked must not be approved in their name."""
        return self._decide(name, version, approve=True, by=by, reason=reason)

    def reject(self, name: str, version: int | None = None, *, by: str, reason: str) -> Decision:
        """Reject a pending version; the current version, if any, stays as it is."""
        return self._decide(name, version, approve=False, by=by, reason=reason)

    def _decide(
        self, name: str, version: int | None, *, approve: bool, by: str, reason: str
    ) -> Decision:
        instruments = telemetry.instruments()
        if instruments is None:
            return self._decide_now(name, version, approve=approve, by=by, reason=reason)
        return instruments.decide(
            name,
            version,
            approve=approve,
            by=by,
            run=lambda: self._decide_now(name, version, approve=approve, by=by, reason=reason),
        )

    def _decide_now(
        self, name: str, version: int | None, *, approve: bool, by: str, reason: str
    ) -> Decision:
        try:
            if version is None:
                waiting = self.registry.pending_numbers(name)
                if len(waiting) > 1:
                    return Decision(name, None, None, ambiguous_step(name, waiting))
                version = waiting[0] if waiting else None
            if approve and version is not None:
                # the stored code and capabilities must still be what was forged and hashed
                target = self.registry.get(name, version)
                record = {"code_sha256": target.sha256, "capabilities_hash": target.capability_hash}
                from toolfoundry.forge import check_approval

                check = check_approval(
                    record,
                    code=target.code,
                    capabilities=target.capabilities,
                    language=target.language,
                )
                if not check.valid:
                    message = "; ".join(check.problems)
                    blocked = StepResult(StepStatus.BLOCKED, None, ("binding_mismatch",), message)
                    return Decision(name, version, target.status.value, blocked)
            decided = self.registry.decide(name, version, approve=approve, by=by, reason=reason)
        except RegistryError as exc:
            step = StepResult(StepStatus.BLOCKED, blockers=(exc.kind,), message=exc.message)
            return Decision(name, version, None, step)
        verb = "approved and active" if approve else "rejected"
        step = StepResult(StepStatus.COMPLETED, message=f"{name} v{decided.version} {verb}")
        return Decision(name, decided.version, decided.status.value, step)

    def pending(self) -> list[ToolVersion]:
        """Versions waiting for a human, oldest first."""
        return self.registry.pending()

    def show(self, name: str, version: int | None = None) -> ToolVersion:
        """One version (the current one by default); raises RegistryError ``not_found``."""
        return self.registry.get(name, version)

    def show_tool(self, name: str, version: int | None = None) -> dict[str, Any]:
        """What a model reads before improving a tool (the ``show_tool`` meta-tool's answer):
        the version (current by default) with its code, schemas, capabilities and status, the
        suite it was gated by (earlier versions' tests included, each with input, expected
        value and fixtures), the tool's usage and its last error. Raises RegistryError
        ``not_found``."""
        from toolfoundry.foundry.card import tool_card

        return tool_card(self, name, version)

    def history(self, name: str) -> list[ToolVersion]:
        """Every version of a tool, oldest first."""
        return self.registry.history(name)

    def diff(self, name: str, a: int, b: int) -> str:
        """Unified diff from version ``a`` to ``b`` of code, description, schema, capabilities."""
        from toolfoundry.registry.diffs import version_diff  # difflib, for this alone

        return version_diff(self.registry.get(name, a), self.registry.get(name, b))

    def rollback(self, name: str, to: int, *, by: str = "user") -> ToolVersion:
        """Make an earlier active version current again (audited; nothing is deleted)."""
        return self.registry.rollback(name, to, by=by)

    def disable(self, name: str, *, by: str = "user") -> ToolVersion:
        """Stop a tool from being called or listed until it is enabled."""
        return self.registry.set_enabled(name, False, by=by)

    def enable(self, name: str, *, by: str = "user") -> ToolVersion:
        """Re-enable a disabled tool."""
        return self.registry.set_enabled(name, True, by=by)

    # -- upstream MCP servers (foundry/upstream_gate.py) -----------------------------------

    def upstream_tools(self) -> list[UpstreamEntry]:
        """Every tool the ``[[upstream]]`` servers list, with its policy and standing
        (``allowed``, ``approved``, ``needs_approval``, ``schema_changed``, ``denied``), by
        name; empty when none is configured. Starts connecting on first use."""
        return [] if self._upstream_gate is None else self._upstream_gate.entries()

    def upstream_tool(self, name: str) -> UpstreamEntry | None:
        """One upstream tool (``UPSTREAM.TOOL``), or None when no upstream lists it now."""
        return None if self._upstream_gate is None else self._upstream_gate.entry(name)

    def approve_upstream(
        self, name: str, *, by: str, reason: str = "", schema_hash: str | None = None
    ) -> UpstreamEntry:
        """Approve an upstream tool (``UPSTREAM.TOOL``) for its current input schema; a
        changed schema needs a new approval. ``schema_hash`` is the hash the person saw:
        when the schema changed since, nothing is recorded (``ValueError``).

        Raises:
            LookupError: no upstream lists ``name`` now.
            ValueError: the schema changed since the person looked.
        """
        return self._decide_upstream(name, True, by, reason, schema_hash)

    def revoke_upstream(
        self, name: str, *, by: str, reason: str, schema_hash: str | None = None
    ) -> UpstreamEntry:
        """Withdraw the approval of an upstream tool: its calls wait for a person again."""
        return self._decide_upstream(name, False, by, reason, schema_hash)

    def _decide_upstream(
        self, name: str, approve: bool, by: str, reason: str, schema_hash: str | None
    ) -> UpstreamEntry:
        if self._upstream_gate is None:
            raise LookupError("no [[upstream]] server is configured")
        return self._upstream_gate.decide(
            name, approve=approve, by=by, reason=reason, schema_hash=schema_hash
        )

    def upstream_uses(
        self, uses: Sequence[Dependency], *, wait_s: float = 0.0
    ) -> dict[str, UpstreamUse]:
        """Whether each upstream tool among ``uses`` (a version's dependencies) is still what
        its tests ran against (foundry/upstream_uses.py), waiting at most ``wait_s`` seconds
        for an upstream's first connection; empty where upstreams are configured but not
        started (a report never starts a server)."""
        gate = self._upstream_gate
        if gate is not None and not gate.servers.started and wait_s <= 0:
            return {}
        from toolfoundry.foundry.upstream_uses import upstream_uses

        return upstream_uses(gate, uses, wait_s=wait_s)

    # -- finding and describing ----------------------------------------------------------

    def search(
        self, query: str, k: int = 5, *, include_inactive: bool = False, floor: float | None = None
    ) -> list[SearchHit]:
        """Tools ranked by full-text relevance to ``query`` (active ones unless told), those
        sharing too little of it left out (``floor``, default
        :data:`toolfoundry.registry.search.RELEVANCE_FLOOR`; 0 keeps every match). The first
        hit carries its parameters schema, so a caller can call it straight away."""
        if floor is None:
            return self.registry.search(query, k, active_only=not include_inactive)
        return self.registry.search(query, k, active_only=not include_inactive, floor=floor)

    def tools(
        self, *, include_inactive: bool = True, limit: int | None = None, offset: int = 0
    ) -> list[ToolVersion]:
        """The current version of every tool, by name (one registry query).

        Args:
            include_inactive: also tools whose current version is pending or disabled.
            limit: at most this many (default: all).
            offset: skip this many first (for paging with ``limit``).
        """
        return self.registry.current_versions(
            status=None if include_inactive else VersionStatus.ACTIVE, limit=limit, offset=offset
        )

    def active_specs(self, *, examples: bool = False) -> list[ToolSpec]:
        """ToolSpecs of every active tool's current version, by name (for catalogs and MCP):
        one read of only the columns a spec is made of (:meth:`Registry.active_specs`;
        ``examples``: with each tool's example arguments, from its passing tests)."""
        return self.registry.active_specs(examples=examples)

    def signatures(self, names: Sequence[str]) -> dict[str, str]:
        """The TypeScript signature of each named active tool, by name: what ``tools.NAME``
        takes and gives in code mode (its part of the ``typescript`` catalogue format)."""
        from toolfoundry.catalog.typescript import declaration

        specs = self.registry.active_specs(names) if names else []
        return {spec.name: declaration(spec).signature for spec in specs}

    def catalog(self, format: str = "json") -> str:
        """The active tools rendered as ``json|openai|responses|anthropic|gemini|mcp|skill``.

        The text is kept per format and given again while the set of active (name, version)
        pairs is unchanged (a version's content never changes), so asking again reads one
        narrow row per tool instead of deriving every tool. It is built with the cyclic
        collector paused (``gc_paused``: every tool's spec and projection).

        ``typescript`` also types the ``[[upstream]]`` servers' tools that are not denied
        (``tools.UPSTREAM.TOOL``), rendered afresh each time since their servers change them.
        """
        from toolfoundry.catalog import render

        if format == "typescript" and self.upstreams is not None:
            upstream = [e.tool.spec() for e in self.upstream_tools() if e.standing != "denied"]
            return render(format, [*self.active_specs(), *upstream])
        active = self.registry.active_set()
        kept = self._catalogs.get(format)
        if kept is not None and kept[0] == active:
            return kept[1]
        from toolfoundry.catalog.formats import EXAMPLE_FORMATS

        with gc_paused():
            text = render(format, self.active_specs(examples=format in EXAMPLE_FORMATS))
        self._catalogs[format] = (active, text)
        return text

    def usage(self, name: str) -> UsageStats:
        """Calls, failures by kind, p50/p95 duration and last use."""
        return self.registry.usage(name)

    def audit(self, name: str | None = None, *, limit: int | None = None) -> list[AuditEntry]:
        """The audit log (one tool's, or all), oldest first."""
        return self.registry.audit(name, limit=limit)

    # -- periodic checks -----------------------------------------------------------------

    def verify(
        self,
        names: Sequence[str] | None = None,
        *,
        progress: Callable[[ToolVerification], None] | None = None,
    ) -> VerifyReport:
        """Re-run the accumulated test suite of each active tool (or of ``names``) in the
        sandbox as it is now, under ``config.limits`` (foundry/verify.py); ``progress`` is
        called with each tool's result as it finishes. Records nothing.

        Raises:
            RegistryError: ``not_found`` when a named tool does not exist.
        """
        return self.verifier().verify(names, progress=progress)

    def verifier(self, *, python: bool = True, tool_budget_s: float | None = None) -> Verifier:
        """The runner of the tools' suites that :meth:`verify` uses (foundry/verify.py): under
        ``config.limits``, with the Python tier unless ``python`` is false (those tools are
        then ``unavailable``), their ``tools`` calls reaching the registry's pure tools as at
        create time, each tool's suite bounded by ``tool_budget_s``, the upstream tools they
        call checked against the ``[[upstream]]`` servers' listings."""
        from toolfoundry.foundry.verify import Verifier

        return Verifier(
            self.registry,
            self.config,
            python_runner=self._python_runner if python else lambda: None,
            callees=self._caller.test_callees,
            tool_budget_s=tool_budget_s,
            upstream=lambda: self._upstream_gate,
        )

    def report(self, *, unused_days: int = 30) -> ReviewReport:
        """What a periodic review needs (foundry/report.py): active tools unused for
        ``unused_days``, failure rates, capabilities held, pending versions, retired tests."""
        from toolfoundry.foundry.report import build_report

        return build_report(self.registry.review_facts(), unused_days=unused_days)
