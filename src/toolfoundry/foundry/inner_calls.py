"""Code mode on the foundry's side: a script's ``tools.NAME(args)`` is a real call of NAME.

:class:`InnerCalls` is the sandbox's ``ToolsProvider`` (``sandbox/host/protocols.py``). Each
request goes through the path of :meth:`Foundry.call` (``Caller``): the callee resolved to
its current active version (or the one asked for), the arguments through the JSON gate and
the callee's schema, the callee run under **its own** approved capabilities (its fetch
allowlist and credentials, its storage namespace), never its caller's, and the call counted
and audited with its caller named (``run:<id>`` or ``name@version``).

One outer call (a tool's call, or a run_js snippet) and every call beneath it share a
:class:`Chain`: the outer deadline, which is every inner call's deadline too; the count of
inner calls (``[limits] inner_calls``); and the records, written in one transaction when the
outer call ends instead of one commit per inner call. Depth is counted per level
(``inner_call_depth``): a cycle a -> b -> a ends there as ``depth_limit``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from toolfoundry.registry.calls import CallRecord, CallStatements
from toolfoundry.registry.records import ToolVersion
from toolfoundry.sandbox.host.protocols import ToolRequest
from toolfoundry.sandbox.policy import SandboxPolicy
from toolfoundry.spec import CallError, CallLimits, CallResult, ErrorKind, VersionStatus

# An inner call refused with one of these means its callee cannot be called now: a tool whose
# code it is fails ``dependency_unavailable``, naming that callee (call.py).
UNAVAILABLE_KINDS = frozenset(
    {ErrorKind.NOT_FOUND, ErrorKind.NOT_ACTIVE, ErrorKind.DEPENDENCY_UNAVAILABLE}
)


class CallPath(Protocol):
    """The foundry's call path as code mode uses it (``call.Caller``)."""

    def call_inner(
        self, request: ToolRequest, *, chain: Chain, depth: int, by: InnerCalls
    ) -> CallResult: ...


@dataclass(frozen=True)
class StandIn:
    """A version not yet registered that answers for its tool's calls in a test chain: a new
    version of a callee, tried with its dependents' suites before it is registered
    (foundry/dependents.py).

    Attributes:
        tool: the version as it would be registered (its number the next one).
        policy: the policy its calls run under (its own capabilities).
        validator: its arguments' validator.
    """

    tool: ToolVersion
    policy: SandboxPolicy
    validator: Any


@dataclass
class Chain:
    """What one outer call and every inner call beneath it share.

    Attributes:
        deadline: the outer call's ``time.monotonic()`` deadline, every inner call's too.
        limits: the outer call's limits (``inner_call_depth``, ``inner_calls``).
        actor: who the outer call is done for; the inner calls' audit actor.
        testing: the outer call is a draft's test case: nothing is recorded, and a callee
            that needs the network or storage is refused (a tool fixture answers for it).
        stand_in: a draft's version answering for its tool's current version (testing only).
        calls: inner calls made so far, at every depth.
        records: the inner calls to count and audit when the outer call ends.
        policies: the policy each callee runs under at each depth, made by its first call in
            the chain (``call.Caller._inner_policy``): its own, ending at the outer deadline,
            its ``tools`` one level deeper in this chain.
        resolved: each callee's (row id, number, status) as read while the database's change
            mark was ``mark`` (``call.Caller._resolve``): read again once anything commits.

    ``policies``, ``resolved`` and ``mark`` need no lock: a chain's calls run one at a time
    (an inner call is a synchronous host call; a caller waits for its callee), so one call of
    a callee at a given depth ends before the next begins.
    """

    deadline: float
    limits: CallLimits
    actor: str
    testing: bool = False
    stand_in: StandIn | None = None
    calls: int = 0
    records: list[CallRecord] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    policies: dict[tuple[str, int, int, bool], SandboxPolicy] = field(default_factory=dict)
    resolved: dict[tuple[str, int | None], tuple[int, int, VersionStatus]] = field(
        default_factory=dict
    )
    mark: int | None = None

    def take_call(self) -> int:
        """Count one more inner call; the new count."""
        with self.lock:
            self.calls += 1
            return self.calls

    def keep(self, record: CallRecord) -> None:
        with self.lock:
            self.records.append(record)

    def take_records(self) -> list[CallRecord]:
        with self.lock:
            records, self.records = self.records, []
            return records


@dataclass(frozen=True)
class RecordedCall:
    """One inner call a run made itself (depth 1), as its recording keeps it: what a test's
    tool fixture answers with (``foundry/code_runs.py``)."""

    tool: str
    args: dict[str, Any]
    version: int | None
    result: CallResult

    def to_fixture(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool, "args": self.args}
        if self.version is not None:
            out["version"] = self.version
        if self.result.error is None:
            out["value"] = self.result.value
        else:
            out["error"] = {
                "kind": self.result.error.kind.value,
                "message": self.result.error.message,
            }
        return out


class InnerCalls:
    """The ``tools`` of one caller: the code of ``label`` (``name@version``, ``run:<id>``).

    Args:
        caller: the foundry's call path.
        statements: where the records of a whole chain are written when it ends.
        limits: the limits a chain begun here gets.
        label: who calls, as the audit names it.
        caller_name: who calls, as usage counts it (``by:<caller_name>``).
        actor: who the outer call is done for.
        chain: the chain this caller's calls belong to; None begins one per call (an outer
            call's provider, kept with its version's policy).
        depth: the depth of this caller's own call (an outer call is depth 0).
        recording: where the calls this caller makes are kept (a run's own calls).
        testing: the calls of a draft's test cases (the forge's runner's ``callees``): real
            calls of pure callees, never recorded; a callee with network or storage refused.
        write_records: the chain's owner writes its records when the outer call ends; False
            leaves them in :attr:`last_chain` for the caller to write (a run keeps them with
            its own row, in one transaction).
    """

    def __init__(
        self,
        caller: CallPath,
        statements: CallStatements,
        limits: CallLimits,
        *,
        label: str,
        caller_name: str,
        actor: str,
        chain: Chain | None = None,
        depth: int = 0,
        recording: list[RecordedCall] | None = None,
        testing: bool = False,
        write_records: bool = True,
        stand_in: StandIn | None = None,
    ) -> None:
        self._caller = caller
        self._statements = statements
        self._limits = limits
        self.label = label
        self.caller_name = caller_name
        self.actor = actor
        self._chain = chain
        self._depth = depth
        self._recording = recording
        self._testing = testing
        self._write_records = write_records
        self._stand_in = stand_in
        self.last_chain: Chain | None = None
        # the last of this caller's calls refused because its callee cannot be called now
        # (read after one call of a provider made for that call alone: call.py)
        self.unavailable: tuple[str, CallError] | None = None

    def handler(self, *, deadline: float, caller: str | None) -> ToolsSession:
        """The handler of one call of this caller (see the sandbox's ``ToolsProvider``)."""
        self.unavailable = None  # a provider kept in a chain serves its callee's next call
        chain = self._chain
        owner = chain is None
        if chain is None:
            chain = Chain(
                deadline, self._limits, self.actor, testing=self._testing, stand_in=self._stand_in
            )
            self.last_chain = chain
        writes = owner and self._write_records and not chain.testing
        flush = self._statements.record_all if writes else None
        return ToolsSession(self, chain, self._depth + 1, flush, self._recording)

    def call(self, request: ToolRequest, chain: Chain, depth: int) -> CallResult:
        """One inner call at ``depth`` (the bounds are checked by the session)."""
        return self._caller.call_inner(request, chain=chain, depth=depth, by=self)


class ToolsSession:
    """The ``tools`` handler of one call: bounds, then the real call; the sandbox's
    ``ToolsHandler``."""

    def __init__(
        self,
        provider: InnerCalls,
        chain: Chain,
        depth: int,
        flush: Callable[[list[CallRecord]], None] | None,
        recording: list[RecordedCall] | None,
    ) -> None:
        self._provider = provider
        self._chain = chain
        self._depth = depth
        self._flush = flush
        self._recording = recording
        self._closed = False

    def call(self, request: ToolRequest) -> CallResult:
        """See the sandbox's ``ToolsHandler.call``: never raises."""
        refused = self._refusal()
        if refused is not None:
            return refused
        result = self._provider.call(request, self._chain, self._depth)
        if result.error is not None and result.error.kind in UNAVAILABLE_KINDS:
            self._provider.unavailable = (request.name, result.error)
        if self._recording is not None:
            self._recording.append(
                RecordedCall(request.name, request.args, request.version, result)
            )
        return result

    def _refusal(self) -> CallResult | None:
        chain, limits = self._chain, self._chain.limits
        if self._closed:
            return CallResult.failure(
                ErrorKind.RUNTIME_ERROR, "the calling code has already answered"
            )
        if self._depth > limits.inner_call_depth:
            message = (
                f"calls through tools nest at most {limits.inner_call_depth} deep "
                f"([limits] inner_call_depth); this one, from {self._provider.label}, would be "
                f"depth {self._depth} (a cycle of tools calling each other ends here)"
            )
            return CallResult.failure(ErrorKind.DEPTH_LIMIT, message)
        count = chain.take_call()
        if count > limits.inner_calls:
            message = (
                f"the outer call already made {limits.inner_calls} calls through tools "
                "([limits] inner_calls)"
            )
            return CallResult.failure(ErrorKind.CALL_LIMIT, message)
        if time.monotonic() >= chain.deadline:
            return CallResult.failure(ErrorKind.TIMEOUT, "the outer call's time budget is spent")
        return None

    def close(self) -> None:
        """The calling code has ended: refuse later calls; the chain's owner writes its
        records (one transaction for every inner call beneath the outer call)."""
        self._closed = True
        if self._flush is not None:
            records = self._chain.take_records()
            if records:
                self._flush(records)
