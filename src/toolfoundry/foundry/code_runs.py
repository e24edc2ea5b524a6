"""Code-mode runs: a run_js snippet run through a foundry, kept, and made into a tool.

:func:`run_snippet` runs the module with the registry's ``tools`` (its calls audited as
``run:<id>``), records what a test needs to replay it (its arguments and result, the answer of
each call it made through ``tools``, each response its own fetches got) and keeps the run in
the registry (bounded in count and age: ``registry/code_runs.py``). :func:`draft_from_run`
turns a kept, successful run into a draft's code and first test: the recorded tool answers and
fetches become that test's fixtures, so the test replays the run without the network and
without depending on what the callees answer later.
"""

from __future__ import annotations

import base64
import dataclasses
import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NotRequired

from typing_extensions import TypedDict

from toolfoundry.base.json_gate import InvalidJson, encode
from toolfoundry.foundry.inner_calls import CallPath, InnerCalls, RecordedCall
from toolfoundry.registry.code_runs import CodeRunRow
from toolfoundry.registry.codecs import now
from toolfoundry.sandbox.host.protocols import FetchHandler, FetchProvider
from toolfoundry.sandbox.policy import SandboxPolicy
from toolfoundry.spec import CallResult
from toolfoundry.spec.limits import MIB

if TYPE_CHECKING:  # names for annotations only: a run loads neither the forge nor pydantic
    from toolfoundry.forge.draft_json import CaseJson, FixtureJson
    from toolfoundry.registry import Registry
    from toolfoundry.registry.calls import CallStatements
    from toolfoundry.spec import CallLimits
    from toolfoundry.spec.result import CallErrorJson

# A run's recording (arguments, result, inner answers, fetches) is kept up to this size as
# JSON; a larger one keeps only the run's summary and code, and cannot become a tool's test.
RECORDING_BYTES = 1 * MIB
RUN_CALLER = "run_js"  # the caller usage counts for a snippet's inner calls (by:run_js)


class RecordingJson(TypedDict):
    """What a test needs to replay a run: its arguments, each inner call's answer (a tool
    fixture), each fetch's response (a fetch fixture), and its value or error."""

    args: Any
    calls: list[dict[str, Any]]
    fetches: list[FixtureJson]
    value: NotRequired[Any]
    error: NotRequired[CallErrorJson]


class RunError(ValueError):
    """A run cannot become a tool: unknown, failed, or not recorded; the message says which."""


def new_run_id() -> str:
    """A fresh run id: 16 hex digits (64 random bits)."""
    return secrets.token_hex(8)


def run_snippet(
    caller: CallPath,
    statements: CallStatements,
    limits: CallLimits,
    code: str,
    args: Any,
    policy: SandboxPolicy,
    *,
    by: str,
) -> CallResult:
    """Run ``code`` under ``policy`` with the registry's tools, keep the run; the result's
    ``details["run_id"]`` names it."""
    from toolfoundry.sandbox import run_js

    run_id = new_run_id()
    calls: list[RecordedCall] = []
    tools = InnerCalls(
        caller,
        statements,
        limits,
        label=f"run:{run_id}",
        caller_name=RUN_CALLER,
        actor=by,
        recording=calls,
        write_records=False,  # written below with the run's row: one transaction
    )
    fetches = _RecordingFetch(policy.fetch) if policy.fetch is not None else None
    policy = dataclasses.replace(policy, tools=tools, fetch=fetches)
    started = time.monotonic()
    result = run_js(code, {} if args is None else args, policy)
    recording = _recording(args, result, calls, fetches)
    records = tools.last_chain.take_records() if tools.last_chain is not None else []
    statements.record_all(
        records,
        run=CodeRunRow(
            id=run_id,
            started_at=now(),
            actor=by,
            ok=result.ok,
            error_kind=result.error.kind.value if result.error else None,
            duration_ms=round((time.monotonic() - started) * 1000.0, 3),
            inner_calls=int(result.details.get("inner_calls", 0)),
            code=code if isinstance(code, str) else "",
            recording=recording,
        ),
    )
    result.details["run_id"] = run_id
    return result


def _recording(
    args: Any, result: CallResult, calls: list[RecordedCall], fetches: _RecordingFetch | None
) -> RecordingJson | None:
    """What a test needs to replay the run, or None when it is larger than kept."""
    out: RecordingJson = {
        "args": {} if args is None else args,
        "calls": [c.to_fixture() for c in calls],
        "fetches": fetches.fixtures if fetches is not None else [],
    }
    if result.error is None:
        out["value"] = result.value
    else:
        out["error"] = result.error.to_dict()
    try:
        size = len(encode(out).encode("utf-8"))
    except InvalidJson:
        return None
    return out if size <= RECORDING_BYTES else None


def draft_from_run(registry: Registry, run_id: object, draft: Mapping[str, Any]) -> dict[str, Any]:
    """``draft`` (a mapping with ``from_run`` in place of ``code``) with the run's module as
    its code and the run as its first test (named ``run <id>``), before the draft's own.

    Raises:
        RunError: no such run kept, the run failed, or its recording was too large to keep.
    """
    if not isinstance(run_id, str) or not run_id:
        raise RunError("from_run must be the run_id a run_js call returned")
    run = registry.code_run(run_id)
    if run is None:
        raise RunError(
            f"no run {run_id!r} is kept (runs are kept for 7 days, the newest 1000): run the "
            "snippet again with run_js and use the run_id it returns"
        )
    if not run.ok:
        raise RunError(
            f"run {run_id} failed ({run.error_kind}): only a run that returned a value can "
            "become a tool's test"
        )
    if run.recording is None:
        raise RunError(
            f"run {run_id} was too large to record (over {RECORDING_BYTES // MIB} MiB of "
            "arguments, result and inner answers): give code and tests instead"
        )
    recorded = run.recording
    test: CaseJson = {
        "name": f"run {run_id}",
        "input": recorded.get("args", {}),
        "expected": recorded.get("value"),
    }
    fixtures = [*recorded.get("calls", []), *recorded.get("fetches", [])]
    if fixtures:
        test["fixtures"] = fixtures
    out = {k: v for k, v in draft.items() if k != "from_run"}
    out["code"] = run.code
    out["tests"] = [test, *list(draft.get("tests") or [])]
    return out


class _RecordingFetch:
    """A FetchProvider that keeps each answered request as a fetch fixture (the script saw
    exactly these answers: redacted by the policy it wraps)."""

    def __init__(self, inner: FetchProvider) -> None:
        self._inner = inner
        self.fixtures: list[FixtureJson] = []

    @property
    def max_requests(self) -> int:
        return self._inner.max_requests

    def handler(self, *, deadline: float, tool: str | None) -> FetchHandler:
        return _RecordingSession(self, self._inner.handler(deadline=deadline, tool=tool))


class _RecordingSession:
    def __init__(self, owner: _RecordingFetch, inner: FetchHandler) -> None:
        self._owner = owner
        self._inner = inner

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        answer = self._inner.handle(request)
        if "error" not in answer:
            try:
                body = base64.b64decode(str(answer.get("body", ""))).decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                return answer  # a fixture body is text: a binary answer is not kept
            self._owner.fixtures.append(
                {
                    "url": str(request.get("url", "")),
                    "method": str(request.get("method", "GET")).upper(),
                    "status": int(answer.get("status", 200)),
                    "headers": {str(k): str(v) for k, v in answer.get("headers", [])},
                    "body": body,
                }
            )
        return answer
