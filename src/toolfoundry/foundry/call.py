"""Calling a registered version: resolve it, validate the arguments, run it, record usage.

What a version needs at call time (its argument validator and sandbox policy) is a pure
function of the immutable version and the configuration, so it is built once per version and
reused; only the version's status is read from the database on every call.

A call made by code through ``tools`` (code mode, ``inner_calls.py``) takes the same path
(:meth:`Caller.call_inner`): only its deadline (the outer one), its ``tools`` (the same chain,
one level deeper) and where its record goes (the chain's, written when the outer call ends)
differ; and its callee's status is read again only once something was committed since the
chain last read it (:meth:`Caller._resolve`), its policy made once per chain.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from toolfoundry.base.json_gate import GatedJson, InvalidJson, encode, gated
from toolfoundry.base.json_schema import CompiledSchema, InvalidSchema, compile_schema
from toolfoundry.base.lru import SizedLRU, text_cost
from toolfoundry.foundry.inner_calls import UNAVAILABLE_KINDS, Chain, InnerCalls, StandIn
from toolfoundry.registry.calls import CallRecord, CallStatements
from toolfoundry.registry.records import (
    AGENT_ACTOR,
    RegistryError,
    ToolVersion,
    is_store_error,
    store_error_text,
)
from toolfoundry.sandbox.host.fetch_settings import FetchSettings
from toolfoundry.sandbox.host.hosts import pattern_covered
from toolfoundry.sandbox.host.protocols import FetchProvider, StorageBackend
from toolfoundry.sandbox.policy import SandboxPolicy
from toolfoundry.sandbox.process.executor import Executor, ProcessLimits
from toolfoundry.spec import (
    CallLimits,
    CallResult,
    Capabilities,
    ErrorKind,
    Problem,
    StepResult,
    StepStatus,
    StorageScope,
    VersionStatus,
)
from toolfoundry.spec.limits import MIB
from toolfoundry.spec.names import NAMESPACE_SEPARATOR
from toolfoundry.spec.result import elapsed_ms

if TYPE_CHECKING:
    from toolfoundry.sandbox.host.fetch import FetchPolicy
    from toolfoundry.sandbox.host.protocols import ToolRequest

SHARED_NAMESPACE = "shared"
# What a model is shown of one call at most (the agent loop and every framework adapter):
# a model cannot use 1 MB of findings, and some frameworks refuse it.
MAX_MODEL_TEXT = 20_000


def arguments_validator(schema: Mapping[str, Any]) -> CompiledSchema | None:
    """A validator for a version's parameters, to keep with the version (None if invalid).

    The one validator of agent-made schemas (base/json_schema.py): patterns in linear time.
    """
    try:
        return compile_schema(schema)
    except InvalidSchema:
        return None


def argument_problems(
    schema: Mapping[str, Any], args: Any, *, validator: CompiledSchema | None = None
) -> list[Problem]:
    """Every way ``args`` breaks ``schema``, each located by a JSON path (``$.items[2]``).

    The JSON gate comes first (depth, finite numbers, valid Unicode, JSON types), so neither
    the validator nor a sandbox ever sees a 5000-digit integer or a lone surrogate.
    """
    return gated_arguments(schema, args, validator=validator)[1]


def gated_arguments(
    schema: Mapping[str, Any], args: Any, *, validator: CompiledSchema | None = None
) -> tuple[GatedJson | None, list[Problem]]:
    """``args`` through the gate and ``schema``: (the gated value, []) or (None, problems).

    The gated value carries the arguments' JSON text, which the sandbox takes as it is: one
    serialization and one gate pass per call, not one here and another in the engine.
    """
    if not isinstance(args, Mapping):
        return None, [Problem("$", f"arguments must be a JSON object, got {type(args).__name__}")]
    try:
        checked = gated(args if type(args) is dict else dict(args))
    except InvalidJson as exc:
        return None, [p.problem() for p in exc.problems]
    if validator is None:
        try:
            validator = compile_schema(schema)
        except InvalidSchema as exc:  # a version stored before create time checked this
            return None, [Problem("$", f"the tool's parameters schema is invalid: {exc}")]
    found = validator.problems(checked.value)
    return (None, found) if found else (checked, [])


def allowed_hosts(requested: Sequence[str], configured: Sequence[str] | None) -> tuple[str, ...]:
    """The tool's approved hosts that the configuration also allows (all when unconfigured)."""
    if configured is None:
        return tuple(requested)
    return tuple(h for h in requested if pattern_covered(h, tuple(configured)))


def fetch_policy(capabilities: Capabilities, settings: FetchSettings) -> FetchPolicy | None:
    """The fetch policy a call of a tool with these capabilities gets (None: no network).

    Network hosts are the approved ones intersected with ``[fetch] allow``; credentials are
    the configured bindings for hosts the tool was approved to use them on. Create time checks
    a draft's fixture URLs against this same policy, so a tool is only tested on requests its
    calls could make.
    """
    hosts = allowed_hosts(capabilities.network, settings.allow)
    if not hosts:
        return None
    # the fetch stack (ssl, the session, redaction) loads with the first tool that may fetch
    from toolfoundry.sandbox.host.fetch import FetchPolicy

    granted = set(capabilities.credentials)
    return FetchPolicy(
        allow=hosts,
        allow_http=settings.allow_http,
        allow_private=settings.allow_private,
        credentials=tuple(c for c in settings.credentials if c.host in granted),
        max_requests=settings.max_requests,
        secret_store=settings.secret_store,
    )


def sandbox_policy(
    name: str,
    capabilities: Capabilities,
    limits: CallLimits,
    fetch_settings: FetchSettings,
    storage: Callable[[], StorageBackend | None],
) -> SandboxPolicy:
    """The SandboxPolicy a call of this tool runs under: its capabilities, no more.

    Time, memory and output are ``limits`` (the ones its tests ran under); fetch is
    :func:`fetch_policy`'s; storage is the tool's own namespace, or the shared one, in the
    backend ``storage()`` gives (asked only of a tool that keeps storage).
    """
    fetch = fetch_policy(capabilities, fetch_settings)
    namespace = None
    if capabilities.storage is StorageScope.SHARED:
        namespace = SHARED_NAMESPACE
    elif capabilities.storage is StorageScope.TOOL:
        namespace = f"tool:{name}"
    return SandboxPolicy.under(
        limits,
        fetch=fetch,
        storage=storage() if namespace else None,
        storage_namespace=namespace,
        tool=name,
    )


# a version, its policy, its validator, and whether its code names ``tools`` (code mode)
Prepared = tuple[ToolVersion, SandboxPolicy, Any, bool]


def _prepared_cost(_: int, prepared: Prepared) -> int:
    tool = prepared[0]
    # the version's texts, its JSON parts (tests and results may be large) and the validator
    parts = encode(
        [tool.parameters, tool.returns, tool.tests, tool.fixtures, tool.test_results], default=str
    )
    return text_cost(tool.code, tool.description, parts, overhead=4096) + 4 * len(parts)


class RegistryReads(Protocol):
    """What a call asks of the whole registry (:class:`~toolfoundry.registry.Registry`), and
    only when it is refused as disabled or its tool keeps storage: everything else goes through
    the driver's :class:`CallStatements`, so a call loads no SQLAlchemy."""

    def get(self, name: str, version: int | None = None) -> ToolVersion: ...

    def disabled_by(self, name: str) -> str: ...

    @property
    def storage(self) -> StorageBackend: ...


class UpstreamCalls(Protocol):
    """Calls of upstream MCP servers' tools (``UPSTREAM.TOOL``): foundry/upstream_gate.py."""

    def call_inner(self, request: ToolRequest, *, chain: Chain, by: InnerCalls) -> CallResult: ...


class Caller:
    """Runs calls of one registry's versions under one set of limits and ``[fetch]``.

    A call resolves, reads and records through ``statements`` (on the driver); the rest of
    the registry (``registry()``, opened on first use) is asked only when a call is refused
    because the tool is disabled, or a tool keeps storage.
    """

    def __init__(
        self,
        statements: CallStatements,
        registry: Callable[[], RegistryReads],
        limits: CallLimits,
        fetch: FetchSettings,
        *,
        process_limits: ProcessLimits,
        python_executor: Callable[[], Executor | None],
    ) -> None:
        self._statements = statements
        self._registry = registry
        self._limits = limits
        self._fetch = fetch
        self._process_limits = process_limits
        self._python_executor = python_executor
        # per version id (immutable), bounded by bytes: a server sees versions without end
        self._versions: SizedLRU[int, Prepared] = SizedLRU(1024, 64 * MIB, _prepared_cost)
        # where code mode's calls of ``UPSTREAM.TOOL`` go (the foundry sets it when configured)
        self.upstream: UpstreamCalls | None = None

    def call(
        self, name: str, args: Any, *, version: int | None = None, by: str = AGENT_ACTOR
    ) -> CallResult:
        """See :meth:`toolfoundry.Foundry.call`."""
        started = time.perf_counter()
        number: int | None = None
        try:
            result, number = self._call(name, args, version, started, None, by)
            if number is not None:
                kind = result.error.kind.value if result.error else None
                self._record(name, number, result.duration_ms, kind, by)
        except Exception as exc:
            if not is_store_error(exc):
                raise
            result = store_failure(store_error_text(exc), ran=number is not None, started=started)
        return with_step(result, version=number)

    def call_inner(
        self, request: ToolRequest, *, chain: Chain, depth: int, by: InnerCalls
    ) -> CallResult:
        """A call made through ``tools`` at ``depth`` by ``by``'s code (``inner_calls.py``);
        its record joins the chain's, written when the outer call ends."""
        if self.upstream is not None and NAMESPACE_SEPARATOR in request.name:
            return self.upstream.call_inner(request, chain=chain, by=by)
        started = time.perf_counter()
        result, number = self._call(
            request.name, request.args, request.version, started, (chain, depth), chain.actor
        )
        if number is not None and not chain.testing:
            kind = result.error.kind.value if result.error else None
            chain.keep(
                CallRecord(
                    request.name,
                    number,
                    result.duration_ms,
                    kind,
                    chain.actor,
                    caller=by.label,
                    caller_name=by.caller_name,
                )
            )
        return result

    def _call(
        self,
        name: str,
        args: Any,
        version: int | None,
        started: float,
        inner: tuple[Chain, int] | None,
        by: str,
    ) -> tuple[CallResult, int | None]:
        """Resolve, check the status, validate and run: (the result, the version number
        that answered or refused, None when the name did not resolve)."""
        stand_in = inner[0].stand_in if inner is not None else None
        standing = stand_in is not None and version is None and name == stand_in.tool.name
        if stand_in is not None and standing:
            # a new version tried with its dependents' suites answers for the current one
            tool, policy, validator = stand_in.tool, stand_in.policy, stand_in.validator
            number, calls_tools = tool.version, True
        else:
            try:
                row_id, number, status = self._resolve(name, version, inner)
            except RegistryError as exc:
                refused = CallResult.failure(
                    ErrorKind.NOT_FOUND, exc.message, duration_ms=elapsed_ms(started)
                )
                return refused, None
            if status is not VersionStatus.ACTIVE:
                refused = CallResult.failure(
                    ErrorKind.NOT_ACTIVE,
                    self._inactive_message(name, number, status),
                    duration_ms=elapsed_ms(started),
                )
                return refused, number
            tool, policy, validator, calls_tools = self._prepared(row_id, name, number)
        if inner is not None and inner[0].testing and _reaches_out(tool):
            message = (
                f"{name!r} needs the network or storage, which a test never reaches: a tool "
                f'fixture answers for it ({{"tool": "{name}", "args": {{...}}, "value": ...}} '
                "in the test's fixtures)"
            )
            refused = CallResult.failure(
                ErrorKind.CAPABILITY_DENIED, message, duration_ms=elapsed_ms(started)
            )
            return refused, number
        checked, problems = gated_arguments(tool.parameters, args, validator=validator)
        if checked is None:
            result = CallResult.failure(
                ErrorKind.INVALID_ARGUMENTS,
                f"{len(problems)} problem(s) with the arguments of {name!r}",
                problems=problems,
                duration_ms=elapsed_ms(started),
            )
        elif tool.language == "python":
            deadline = inner[0].deadline if inner is not None else None
            result = self._call_python(tool, args, policy.fetch, started, deadline)
        else:
            from toolfoundry.sandbox import run_js

            own: InnerCalls | None = None  # this call's own tools, read after it ends
            if inner is not None:
                policy = self._inner_policy(policy, name, number, *inner, standing)
                own = policy.tools if isinstance(policy.tools, InnerCalls) else None
                if own is not None:  # kept in the chain: what an earlier call of it left
                    own.unavailable = None
            elif by != AGENT_ACTOR or calls_tools:
                # the kept policy's tools serve code that calls none, done for the agent
                own = self.inner_calls(name, number, actor=by)
                policy = dataclasses.replace(policy, tools=own)
            result = dependency_failure(name, run_js(tool.code, checked, policy), own)
        return result, number

    def _resolve(
        self, name: str, version: int | None, inner: tuple[Chain, int] | None
    ) -> tuple[int, int, VersionStatus]:
        """(row id, number, status) of the version a call names (``CallStatements.resolve``).

        An inner call reads it once per callee in its chain while nothing is committed to
        the database: the change mark (``CallStatements.change_mark``) is read first, on
        every inner call, and when it has moved (a disable, an approval, a new version, any
        write by anyone) every callee is read again. So a tool disabled during an outer call
        is refused from its next inner call on, as before, without a query per call. Where
        there is no mark (PostgreSQL), every call reads.
        """
        if inner is None:
            return self._statements.resolve(name, version)
        chain = inner[0]
        mark = self._statements.change_mark()  # before the read it vouches for
        if mark is None:
            return self._statements.resolve(name, version)
        key = (name, version)
        if mark == chain.mark:
            found = chain.resolved.get(key)
            if found is not None:
                return found
        else:
            chain.resolved.clear()
            chain.mark = mark
        found = self._statements.resolve(name, version)
        chain.resolved[key] = found
        return found

    def _inactive_message(self, name: str, number: int, status: VersionStatus) -> str:
        """Why version ``number`` of ``name``, resolved with ``status``, does not run."""
        registry = self._registry()
        if status is VersionStatus.DISABLED and registry.get(name).status is status:
            # a person disabled the tool: that holds for every version of it
            who = registry.disabled_by(name)
            return f"{name!r} is disabled (by {who}): no version of it runs until enabled"
        if status is VersionStatus.PENDING_APPROVAL:
            return pending_message(name, number)
        return f"{name!r} version {number} is {status.value}; only active versions run"

    def _inner_policy(
        self,
        policy: SandboxPolicy,
        name: str,
        number: int,
        chain: Chain,
        depth: int,
        stand_in: bool,
    ) -> SandboxPolicy:
        """The callee's own policy, ending at the outer deadline, its ``tools`` one level
        deeper in the same chain: made once per callee and depth in a chain (``stand_in``: a
        draft's version answering for its tool), then kept there for its later calls."""
        key = (name, number, depth, stand_in)
        kept = chain.policies.get(key)
        if kept is None:
            tools = self.inner_calls(name, number, chain=chain, depth=depth, actor=chain.actor)
            kept = dataclasses.replace(policy, tools=tools, deadline=chain.deadline)
            chain.policies[key] = kept
        return kept

    def test_callees(self, stand_in: ToolVersion | None = None) -> InnerCalls:
        """The registry's tools as a draft's test cases reach them (the forge's runner's
        ``callees``): real calls of pure tools, nothing recorded. ``stand_in``: a version not
        yet registered that answers for its tool's current version, at every depth (a new
        version of a callee, run with its dependents' suites)."""
        return InnerCalls(
            self,
            self._statements,
            self._limits,
            label="test",
            caller_name="test",
            actor=AGENT_ACTOR,
            testing=True,
            stand_in=None if stand_in is None else self._stand_in(stand_in),
        )

    def _stand_in(self, tool: ToolVersion) -> StandIn:
        policy = sandbox_policy(
            tool.name, tool.capabilities, self._limits, self._fetch, self._storage
        )
        return StandIn(tool, policy, arguments_validator(tool.parameters))

    def inner_calls(
        self,
        name: str,
        number: int,
        *,
        actor: str,
        chain: Chain | None = None,
        depth: int = 0,
    ) -> InnerCalls:
        """The ``tools`` of version ``number`` of ``name``'s code."""
        return InnerCalls(
            self,
            self._statements,
            self._limits,
            label=f"{name}@{number}",
            caller_name=name,
            actor=actor,
            chain=chain,
            depth=depth,
        )

    def _record(
        self, name: str, number: int, duration_ms: float, kind: str | None, by: str
    ) -> None:
        self._statements.record(name, number, duration_ms, kind, by)

    def _call_python(
        self,
        tool: ToolVersion,
        args: Any,
        fetch: FetchProvider | None,
        started: float,
        deadline: float | None = None,
    ) -> CallResult:
        executor = self._python_executor()
        if executor is None:
            return CallResult.failure(
                ErrorKind.CAPABILITY_DENIED,
                "the Python tier is not available here (no bubblewrap, no executor service)",
                duration_ms=elapsed_ms(started),
            )
        limits = self._process_limits
        if deadline is not None:  # an inner call: its wait in line and its run end in time
            left = deadline - time.monotonic()
            if left <= 0:
                return CallResult.failure(
                    ErrorKind.TIMEOUT,
                    "the outer call's time budget is spent",
                    duration_ms=elapsed_ms(started),
                )
            limits = dataclasses.replace(
                limits, timeout_s=min(limits.timeout_s, left), queue_s=left
            )
        return executor.run(tool.code, dict(args), limits, tool=tool.name, fetch=fetch)

    def _prepared(self, row_id: int, name: str, number: int) -> Prepared:
        cached = self._versions.get(row_id)
        if cached is None:
            tool = self._statements.version(name, number)
            policy = sandbox_policy(
                name, tool.capabilities, self._limits, self._fetch, self._storage
            )
            # its code's `tools`: each call of it begins a chain of its own
            tools = self.inner_calls(name, number, actor=AGENT_ACTOR)
            policy = dataclasses.replace(policy, tools=tools)
            validator = arguments_validator(tool.parameters)
            calls_tools = "tools" in tool.code  # the only way to the global (forge/uses.py)
            cached = self._versions.put(row_id, (tool, policy, validator, calls_tools))
        return cached

    def _storage(self) -> StorageBackend:
        return self._registry().storage


def pending_message(name: str, number: int) -> str:
    """Why a version waiting for approval does not run, and who may change that: the same
    words for a person at the CLI and for a model over MCP (which must not approve itself)."""
    return (
        f"{name!r} version {number} is pending_approval: a person must approve it before it "
        f"runs (toolfoundry approvals approve {name}@{number}, or the review page)"
    )


def dependency_failure(name: str, result: CallResult, tools: InnerCalls | None) -> CallResult:
    """``result`` of a call of tool ``name``, or, when it ended with the kind of one of its
    own calls through ``tools`` whose callee cannot be called now (disabled, not active,
    unknown, itself failing so), ``dependency_unavailable`` naming that callee: the tool is
    active, a tool it depends on is not (``details["callee"]``)."""
    error = result.error
    if error is None or error.kind not in UNAVAILABLE_KINDS or tools is None:
        return result
    if tools.unavailable is None:
        return result
    callee, cause = tools.unavailable
    message = (
        f"{name!r} depends on {callee!r}, which cannot be called now ({cause.kind.value}): "
        f"{cause.message}"
    )
    failed = CallResult.failure(
        ErrorKind.DEPENDENCY_UNAVAILABLE,
        message,
        logs=result.logs,
        duration_ms=result.duration_ms,
    )
    failed.details.update(result.details)
    failed.details["callee"] = callee
    return failed


def _reaches_out(tool: ToolVersion) -> bool:
    """Whether a tool needs the network or storage (what a test case never reaches)."""
    caps = tool.capabilities
    return bool(caps.network or caps.credentials) or caps.storage is not StorageScope.NONE


def with_step(result: CallResult, *, version: int | None = None) -> CallResult:
    """Attach the call's step outcome (and the version that answered) to its details."""
    if result.error is None:
        step = StepResult(StepStatus.COMPLETED)
    else:
        step = StepResult(
            StepStatus.BLOCKED, blockers=(result.error.kind.value,), message=result.error.message
        )
    # every CallResult gets its own details dict, and this one is ours: no copy needed
    result.details["step"] = step.to_dict()
    if version is not None:
        result.details["version"] = version
    return result


def model_payload(result: CallResult) -> dict[str, Any]:
    """The JSON a model sees for a call: ``value`` or ``error``, the step outcome, ``logs``.

    A meta-tool's own outcome (create_tool's step) stands for the call's when it succeeded.
    """
    step = result.details.get("step")
    if result.error is not None:
        if not isinstance(step, dict):
            step = {"status": StepStatus.BLOCKED.value, "blockers": [result.error.kind.value]}
        out: dict[str, Any] = {"error": result.error.to_dict(), "step": step}
    else:
        value = result.value
        if isinstance(value, dict) and isinstance(value.get("step"), dict):
            step = value["step"]
        if not isinstance(step, dict):
            step = {"status": StepStatus.COMPLETED.value}
        out = {"value": value, "step": step}
    if result.logs:
        out["logs"] = list(result.logs)
    return out


def model_text(payload: Mapping[str, Any], max_chars: int = MAX_MODEL_TEXT) -> str:
    """``payload`` as the JSON text a model reads (the one encoder), cut at ``max_chars``."""
    text = encode(payload, default=str, compact=False)
    if len(text) > max_chars:
        text = text[:max_chars] + " ...[truncated]"
    return text


def store_failure(exc: str, *, ran: bool, started: float) -> CallResult:
    """The call's answer when the registry database failed under it (a full disk, a server
    that does not answer): ``unavailable``. A call that ran but could not be recorded is not
    answered with its value either: no call goes unaudited."""
    if ran:
        message = (
            f"the call ran (its effects, if any, happened) but the registry database could not "
            f"record it ({exc}), so its result is withheld; the database must be writable again"
        )
    else:
        message = f"the registry database could not be read ({exc}): retry once it answers"
    return CallResult.failure(ErrorKind.UNAVAILABLE, message, duration_ms=elapsed_ms(started))
