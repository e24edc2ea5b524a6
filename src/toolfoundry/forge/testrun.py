"""Running a draft's example cases, each in a pristine sandbox with the network cut.

The forge talks to the sandbox through :class:`ToolRunner`, a callable that runs code with
arguments under limits and fetch fixtures; :class:`SandboxRunner` is the real one (run_js).
Every case runs under the tool's own call limits (:class:`~toolfoundry.spec.CallLimits`, the
configured ``[limits]``), so what passes here fits what a call may use.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar, NotRequired, Protocol, TypeVar

from typing_extensions import TypedDict

from toolfoundry.forge.cases import TestCase
from toolfoundry.forge.draft_fields import validate_instance
from toolfoundry.forge.fixtures import Fixture, merge_fixtures
from toolfoundry.forge.tool_fixtures import ToolFixture
from toolfoundry.spec import (
    CallError,
    CallLimits,
    CallResult,
    Capabilities,
    ErrorKind,
    Problem,
    StepResult,
    StepStatus,
)
from toolfoundry.spec.result import CallErrorJson
from toolfoundry.spec.tool import JsonSchema

MAX_DIFF_CHARS = 4000
T = TypeVar("T")


# cases run at once; the engine is thread-safe and wasm calls drop the GIL
CASES_AT_ONCE = 2


class CaseResultJson(TypedDict):
    """A test result's JSON form (``reason``, ``logs`` and ``regression`` only when set)."""

    name: str
    passed: bool
    duration_ms: float
    actual: Any
    error: CallErrorJson | None
    diff: str | None
    reason: NotRequired[str]
    logs: NotRequired[list[str]]
    regression: NotRequired[bool]


class ToolRunner(Protocol):
    """Runs tool code once with JSON arguments, in a fresh sandbox, and never raises.

    ``tool_fixtures`` answer the code's inner calls through ``tools`` (code mode); a runner
    whose tier has no ``tools`` ignores them.
    """

    def __call__(
        self,
        code: str,
        args: Mapping[str, Any],
        *,
        limits: CallLimits,
        fixtures: Sequence[Fixture],
        capabilities: Capabilities,
        tool: str | None,
        tool_fixtures: Sequence[ToolFixture] = (),
    ) -> CallResult: ...


@dataclass(frozen=True)
class TestResult:
    """How one test case went.

    Attributes:
        name: the case's name.
        passed: whether the case passed.
        duration_ms: the sandboxed call's own time (the process's sandbox set-up excluded).
        actual: the value the tool returned (None when it failed).
        error: the call's error (kind, message), when it failed.
        diff: a unified diff of expected vs actual JSON (sorted keys, indented), when they differ.
        reason: one sentence on why the case failed, for the model to act on.
        logs: what the tool logged with console.
        regression: whether it is an earlier version's test, run by the regression gate (a
            create's results list both; the flag tells them apart).
    """

    __test__: ClassVar[bool] = False  # not a pytest class, despite the name

    name: str
    passed: bool
    duration_ms: float
    actual: Any = None
    error: CallError | None = None
    diff: str | None = None
    reason: str = ""
    logs: tuple[str, ...] = ()
    regression: bool = False

    def to_dict(self) -> CaseResultJson:
        """JSON-ready form."""
        out: CaseResultJson = {
            "name": self.name,
            "passed": self.passed,
            "duration_ms": round(self.duration_ms, 3),
            "actual": self.actual,
            "error": self.error.to_dict() if self.error else None,
            "diff": self.diff,
        }
        if self.reason:
            out["reason"] = self.reason
        if self.logs:
            out["logs"] = list(self.logs)
        if self.regression:
            out["regression"] = True
        return out


def stored_result(data: Mapping[str, Any]) -> TestResult:
    """A test result as a version's record keeps it (:meth:`TestResult.to_dict`), typed again."""
    error = data.get("error")
    return TestResult(
        name=str(data.get("name")),
        passed=bool(data.get("passed")),
        duration_ms=float(data.get("duration_ms") or 0.0),
        actual=data.get("actual"),
        error=None if not isinstance(error, Mapping) else stored_error(error),
        diff=data.get("diff"),
        reason=str(data.get("reason") or ""),
        logs=tuple(data.get("logs") or ()),
        regression=bool(data.get("regression")),
    )


def stored_error(data: Mapping[str, Any]) -> CallError:
    """A call error in its JSON form (``{"kind", "message", "problems"}``), typed again; a
    kind this release does not know reads as ``runtime_error``."""
    kind = data.get("kind")
    known = {k.value: k for k in ErrorKind}
    problems = tuple(
        Problem(str(p.get("path")), str(p.get("message")))
        for p in data.get("problems") or ()
        if isinstance(p, Mapping)
    )
    return CallError(
        known.get(str(kind), ErrorKind.RUNTIME_ERROR), str(data.get("message")), problems
    )


def json_equal(a: Any, b: Any) -> bool:
    """Deep JSON equality: 1 equals 1.0 (one number type in JS), but true never equals 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and bool(a == b)


def json_diff(expected: Any, actual: Any) -> str:
    """A unified diff of sorted, indented JSON (capped in length)."""

    def lines(value: Any) -> list[str]:
        return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=repr).split(
            "\n"
        )

    diff = "\n".join(
        difflib.unified_diff(lines(expected), lines(actual), "expected", "actual", lineterm="")
    )
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + "\n... (diff truncated)"
    return diff


def judge(case: TestCase, result: CallResult) -> tuple[bool, str | None, str]:
    """Decide a case from its call result: (passed, diff, reason)."""
    if case.error is not None:
        if result.ok:
            return (
                False,
                None,
                f"expected an error containing {case.error!r}, but the call returned a value",
            )
        assert result.error is not None
        if case.error.lower() not in result.error.message.lower():
            return (
                False,
                None,
                f"expected an error containing {case.error!r}, got {result.error.kind.value}: "
                f"{result.error.message}",
            )
        if case.error_kind is not None and result.error.kind is not case.error_kind:
            return (
                False,
                None,
                f"expected error kind {case.error_kind.value}, got {result.error.kind.value}",
            )
        return True, None, ""
    if not result.ok:
        assert result.error is not None
        return False, None, f"the call failed: {result.error.kind.value}: {result.error.message}"
    if json_equal(case.expected, result.value):
        return True, None, ""
    return False, json_diff(case.expected, result.value), "the returned value differs from expected"


# Failures that say nothing about the code: no sandbox to run it, the Python tier's pool-wide
# budget stayed full (sandbox/process/admission.py), or the registry database cannot be read or
# written (a full disk). A draft is not judged by them.
NOT_JUDGED = (ErrorKind.SANDBOX_UNAVAILABLE, ErrorKind.OVERLOADED, ErrorKind.UNAVAILABLE)


def unavailable_step(message: str, kind: ErrorKind = ErrorKind.SANDBOX_UNAVAILABLE) -> StepResult:
    """The step of a draft no sandbox could test: ``unavailable``, with the kind of why
    (``sandbox_unavailable``, or ``overloaded``: retry later)."""
    return StepResult(StepStatus.UNAVAILABLE, message=message, details={"kind": kind.value})


def unavailable_error(step: StepResult) -> CallError | None:
    """The error (``sandbox_unavailable``, ``overloaded`` or ``unavailable``) a draft's step
    stands for, else None."""
    kind = step.details.get("kind")
    if step.status is StepStatus.UNAVAILABLE and kind in {k.value for k in NOT_JUDGED}:
        return CallError(ErrorKind(kind), step.message)
    return None


def failed_tests_message(results: Sequence[TestResult]) -> str | None:
    """``"2 of 5 test(s) failed: a, b"``, or None when every one passed (create and verify)."""
    failed = [r.name for r in results if not r.passed]
    if not failed:
        return None
    return f"{len(failed)} of {len(results)} test(s) failed: {', '.join(failed)}"


def sandbox_unavailable(results: Iterable[TestResult]) -> StepResult | None:
    """The step when the sandbox could not run the cases at all, else None.

    Such a result says nothing about the code (even a case expecting an error may have
    "passed" on it), so the draft is not judged by any of them.
    """
    for result in results:
        if result.error is None:
            continue
        for not_judged in NOT_JUDGED:
            if result.error.kind is not_judged:
                return unavailable_step(result.error.message, not_judged)
    return None


def run_case(
    runner: ToolRunner,
    code: str,
    case: TestCase,
    *,
    limits: CallLimits,
    fixtures: Sequence[Fixture] = (),
    capabilities: Capabilities | None = None,
    tool: str | None = None,
    label: str | None = None,
    returns: JsonSchema | None = None,
) -> TestResult:
    """Run one case; the case's own fixtures win over ``fixtures`` for the same request. A
    value the call returns must also match ``returns`` (the tool's declared return schema),
    whatever the case expects."""
    started = time.perf_counter()
    try:
        result = runner(
            code,
            case.input,
            limits=limits,
            fixtures=merge_fixtures(case.fixtures, fixtures),
            capabilities=capabilities or Capabilities(),
            tool=tool,
            tool_fixtures=case.tool_fixtures,
        )
    except Exception as exc:  # a runner must not raise; if one does, the case fails, loudly
        result = CallResult.failure("runtime_error", f"the test runner failed: {exc!r}")
    # The call's own time, as the sandbox measured it: the process's one-off set-up (compiling
    # the guest on a cold cache, seconds) is not the tool's, and a model reads this number as
    # the speed of its code. Only a result that carries no time falls back to the wall clock.
    elapsed = result.duration_ms or (time.perf_counter() - started) * 1000
    try:
        passed, diff, reason = judge(case, result)
    except RecursionError:
        passed, diff, reason = False, None, "the returned value nests too deeply to compare"
    broken = returns_problem(result.value, returns) if result.ok and returns else None
    if broken is not None:
        passed, reason = False, "; ".join(r for r in (reason, broken) if r)
    return TestResult(
        name=label or case.name,
        passed=passed,
        duration_ms=elapsed,
        actual=result.value if result.ok else None,
        error=result.error,
        diff=diff,
        reason=reason,
        logs=result.logs,
    )


def returns_problem(value: Any, returns: JsonSchema) -> str | None:
    """Why ``value`` breaks the declared return schema (each problem located inside the
    value, ``$`` being the value itself), or None when it matches."""
    problems: list[Problem] = []
    validate_instance(value, returns, "$", problems)
    if not problems:
        return None
    shown = "; ".join(f"{p.path}: {p.message}" for p in problems[:3])
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return f"the returned value does not match returns: {shown}{more}"


def in_parallel(
    work: Callable[[T], TestResult], items: Sequence[T], parallel: int
) -> tuple[TestResult, ...]:
    """Apply ``work`` to every item, ``parallel`` at a time, keeping the items' order."""
    if parallel <= 1 or len(items) <= 1:
        return tuple(work(item) for item in items)
    with ThreadPoolExecutor(max_workers=min(parallel, len(items))) as pool:
        return tuple(pool.map(work, items))


def run_cases(
    runner: ToolRunner,
    code: str,
    cases: Iterable[TestCase],
    *,
    limits: CallLimits,
    fixtures: Sequence[Fixture] = (),
    capabilities: Capabilities | None = None,
    tool: str | None = None,
    returns: JsonSchema | None = None,
) -> tuple[TestResult, ...]:
    """Run every case (never stopping at the first failure), :data:`CASES_AT_ONCE` at a time;
    each returned value must match ``returns`` when given."""

    def work(case: TestCase) -> TestResult:
        return run_case(
            runner,
            code,
            case,
            limits=limits,
            fixtures=fixtures,
            capabilities=capabilities,
            tool=tool,
            returns=returns,
        )

    return in_parallel(work, list(cases), CASES_AT_ONCE)
