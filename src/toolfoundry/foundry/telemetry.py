"""OpenTelemetry traces and metrics of the foundry's operations, when opentelemetry-api is there.

Spans (the GenAI semantic conventions for tool execution where they apply):

- ``execute_tool <name>`` for every call: ``gen_ai.operation.name=execute_tool``,
  ``gen_ai.tool.name``, ``gen_ai.tool.call.id`` (when the caller knows it), ``error.type`` (the
  call's kind, e.g. ``invalid_arguments``) and ``toolfoundry.tool.version``.
- ``create_tool <name>`` for every draft, with one event per forge step it reached
  (``static_check``, ``tests``, ``regression``, ``policy``, ``registration``) carrying the step's
  outcome, and ``toolfoundry.create.status`` / ``toolfoundry.create.blockers``.
- ``approve_tool <name>`` / ``reject_tool <name>`` for every human decision.

Metrics: ``toolfoundry.tool.calls`` and ``toolfoundry.tool.failures`` (counters, by tool and
``error.type``), ``toolfoundry.tool.duration`` (histogram, seconds), ``toolfoundry.tool.creations``
(by status) and ``toolfoundry.tool.approvals`` (by action and outcome). What the last review of
the library found (foundry/review_schedule.py, handed over by :func:`publish_review`):
``toolfoundry.review.tools`` (gauge, by ``toolfoundry.review.finding``: ``verified``, ``passed``,
``failing``, ``unfinished``, ``not_run``, ``unused``, ``capabilities``, ``waiting``) and
``toolfoundry.review.finished`` (gauge, the Unix time it finished).

OpenTelemetry is imported only once the process uses it (its API costs 30-60 ms to import,
a fifth of a short script's open and call): :func:`instruments` is None, and the facade takes
its plain path (two dictionary reads per operation), until :func:`configure` is called, or
the application has imported ``opentelemetry.trace`` or ``opentelemetry.metrics`` (the only
ways to set a global provider), or names a provider in ``OTEL_PYTHON_TRACER_PROVIDER`` /
``OTEL_PYTHON_METER_PROVIDER``. Before any of these nothing could receive a span, so none is
lost. Then spans and metrics go to the global providers (set up by the application, as
OpenTelemetry wants), or to the ones given to :func:`configure`; while the application has
set neither global provider, operations skip the span machinery too (``bench/bench_otel.py``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from toolfoundry.spec import CallResult, StepResult

if TYPE_CHECKING:
    from opentelemetry.metrics import MeterProvider
    from opentelemetry.trace import Span, TracerProvider

    from toolfoundry.foundry.create import CreateResult


class Decided(Protocol):
    """What a span reads of an approval or rejection (the facade's ``Decision``; named by
    shape so that this module, which the facade imports, needs nothing from it)."""

    @property
    def version(self) -> int | None: ...
    @property
    def status(self) -> str | None: ...
    @property
    def step(self) -> StepResult: ...


D = TypeVar("D", bound=Decided)

SCOPE = "toolfoundry"
OPERATION = "gen_ai.operation.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
ERROR_TYPE = "error.type"
REVIEW_FINDING = "toolfoundry.review.finding"
VERSION = "toolfoundry.tool.version"


class Instruments:
    """The tracer and metric instruments every foundry operation reports to."""

    def __init__(
        self,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        from opentelemetry import metrics, trace
        from opentelemetry.metrics import _internal as metrics_globals
        from opentelemetry.trace import SpanKind, StatusCode

        self._trace, self._metrics = trace, metrics_globals  # where the global providers live
        self._internal, self._error = SpanKind.INTERNAL, StatusCode.ERROR
        # given providers always record; the global ones only once the application set them
        self._on = tracer_provider is not None or meter_provider is not None
        self.tracer = trace.get_tracer(SCOPE, tracer_provider=tracer_provider)
        meter = metrics.get_meter(SCOPE, meter_provider=meter_provider)
        self.calls = meter.create_counter(
            "toolfoundry.tool.calls", unit="{call}", description="Tool calls, by tool and outcome"
        )
        self.failures = meter.create_counter(
            "toolfoundry.tool.failures",
            unit="{call}",
            description="Failed tool calls, by tool and error.type (the call's kind)",
        )
        self.duration = meter.create_histogram(
            "toolfoundry.tool.duration", unit="s", description="Tool call duration"
        )
        self.creations = meter.create_counter(
            "toolfoundry.tool.creations",
            unit="{draft}",
            description="Drafts through create_tool, by resulting status",
        )
        self.approvals = meter.create_counter(
            "toolfoundry.tool.approvals",
            unit="{decision}",
            description="Human decisions on pending versions, by action and outcome",
        )
        observation = metrics.Observation

        def review_counts(_options: Any) -> list[Any]:
            last = _review
            if last is None:
                return []
            return [observation(n, {REVIEW_FINDING: k}) for k, n in last[1].items()]

        def review_finished(_options: Any) -> list[Any]:
            return [] if _review is None else [observation(_review[0])]

        meter.create_observable_gauge(
            "toolfoundry.review.tools",
            callbacks=[review_counts],
            unit="{tool}",
            description="What the last review of the library found, by toolfoundry.review.finding",
        )
        meter.create_observable_gauge(
            "toolfoundry.review.finished",
            callbacks=[review_finished],
            unit="s",
            description="When the last review of the library finished (Unix time)",
        )

    def recording(self) -> bool:
        """Whether anything receives spans or metrics: False while opentelemetry-api is
        installed (mcp and anthropic bring it) but no application has set a global provider,
        so such a foundry skips even no-op spans.

        The API keeps its global providers in module variables (private, hence read with a
        default that means "set"); its public getters read os.environ on every call, which
        costs more than the check is worth. Providers named by environment variables were
        loaded when the tracer was made. Once a provider is set it cannot be unset, so a
        True answer is kept.
        """
        if self._on:
            return True
        unset = getattr(self._trace, "_TRACER_PROVIDER", True) is None and (
            getattr(self._metrics, "_METER_PROVIDER", True) is None
        )
        self._on = not unset
        return self._on

    def call(
        self,
        name: str,
        run: Callable[[], CallResult],
        *,
        call_id: str | None = None,
    ) -> CallResult:
        """Run one tool call inside an ``execute_tool <name>`` span and count it."""
        if not self.recording():
            return run()
        attributes: dict[str, str] = {OPERATION: "execute_tool", TOOL_NAME: name}
        if call_id:
            attributes[TOOL_CALL_ID] = call_id
        attributes[TOOL_TYPE] = "function"
        started = time.perf_counter()
        with self.tracer.start_as_current_span(
            f"execute_tool {name}", kind=self._internal, attributes=attributes
        ) as span:
            result = run()
            version = result.details.get("version")
            if isinstance(version, int):
                span.set_attribute(VERSION, version)
            labels = {TOOL_NAME: name}
            if result.error is not None:
                kind = result.error.kind.value
                span.set_attribute(ERROR_TYPE, kind)
                span.set_status(self._error, result.error.message[:200])
                labels[ERROR_TYPE] = kind
                self.failures.add(1, labels)
        self.calls.add(1, labels)
        self.duration.record(time.perf_counter() - started, labels)
        return result

    def create(self, draft: Any, run: Callable[[], CreateResult]) -> CreateResult:
        """Run one create inside a ``create_tool <name>`` span, a forge step per event."""
        if not self.recording():
            return run()
        name = draft.get("name") if isinstance(draft, Mapping) else getattr(draft, "name", None)
        title = f"create_tool {name}" if isinstance(name, str) and name else "create_tool"
        with self.tracer.start_as_current_span(title, kind=self._internal) as span:
            if isinstance(name, str):
                span.set_attribute("toolfoundry.tool.name", name)
            result = run()
            _forge_events(span, result)
            span.set_attribute("toolfoundry.create.status", result.status)
            if result.version is not None:
                span.set_attribute(VERSION, result.version)
            if result.step.blockers:
                span.set_attribute("toolfoundry.create.blockers", list(result.step.blockers))
            if result.status == "rejected":
                span.set_attribute(
                    ERROR_TYPE, result.step.blockers[0] if result.step.blockers else "rejected"
                )
                span.set_status(self._error, result.step.message[:200])
        self.creations.add(1, {"toolfoundry.create.status": result.status})
        return result

    def decide(
        self,
        name: str,
        version: int | None,
        *,
        approve: bool,
        by: str,
        run: Callable[[], D],
    ) -> D:
        """Run one approval or rejection inside an ``approve_tool``/``reject_tool`` span."""
        if not self.recording():
            return run()
        action = "approve" if approve else "reject"
        attributes: dict[str, str | int] = {
            "toolfoundry.tool.name": name,
            "toolfoundry.approval.action": action,
            "toolfoundry.approval.by": by,
        }
        if version is not None:
            attributes[VERSION] = version
        with self.tracer.start_as_current_span(
            f"{action}_tool {name}", kind=self._internal, attributes=attributes
        ) as span:
            decision = run()
            outcome = decision.step.status.value
            span.set_attribute("toolfoundry.approval.outcome", outcome)
            if decision.version is not None:
                span.set_attribute(VERSION, decision.version)
            if decision.status is not None:
                span.set_attribute("toolfoundry.tool.status", decision.status)
            if decision.step.blockers:
                span.set_attribute(ERROR_TYPE, decision.step.blockers[0])
                span.set_status(self._error, decision.step.message[:200])
        self.approvals.add(
            1, {"toolfoundry.approval.action": action, "toolfoundry.approval.outcome": outcome}
        )
        return decision


def _forge_events(span: Span, result: CreateResult) -> None:
    """One event per forge step the draft reached, with that step's outcome.

    The forge runs as one pure function, so the steps are read from its report after the
    fact: events (timestamped when the create ends) rather than child spans with made-up times.
    """
    report = result.report
    if report is None:
        return
    blockers = set(report.blockers)
    if "invalid_draft" in blockers:
        span.add_event(
            "draft",
            {"toolfoundry.step.outcome": "invalid", "toolfoundry.problems": len(report.problems)},
        )
        return
    errors = sum(1 for f in report.findings if f.blocking)
    span.add_event(
        "static_check",
        {
            "toolfoundry.step.outcome": "failed" if errors else "passed",
            "toolfoundry.findings.errors": errors,
            "toolfoundry.findings.warnings": len(report.findings) - errors,
        },
    )
    if report.test_results:
        failed = sum(1 for t in report.test_results if not t.passed)
        span.add_event(
            "tests",
            {
                "toolfoundry.step.outcome": "failed" if failed else "passed",
                "toolfoundry.tests.passed": len(report.test_results) - failed,
                "toolfoundry.tests.failed": failed,
                "toolfoundry.tests.duration_ms": round(
                    sum(t.duration_ms for t in report.test_results), 3
                ),
            },
        )
    if report.regression is not None:
        span.add_event(
            "regression",
            {
                "toolfoundry.step.outcome": "passed" if report.regression.passed else "failed",
                "toolfoundry.tests.failed": len(report.regression.failed),
            },
        )
    if report.decision is not None:
        span.add_event(
            "policy",
            {
                "toolfoundry.step.outcome": (
                    "needs_approval" if report.decision.needs_approval else "passed"
                ),
                "toolfoundry.policy.reasons": list(report.decision.reasons),
            },
        )
    if result.version is not None:
        span.add_event(
            "registration", {"toolfoundry.step.outcome": result.status, VERSION: result.version}
        )


_OTEL_MODULES = ("opentelemetry.trace", "opentelemetry.metrics")
_NAMED_PROVIDERS = any(
    os.environ.get(v) for v in ("OTEL_PYTHON_TRACER_PROVIDER", "OTEL_PYTHON_METER_PROVIDER")
)
_configured: Instruments | None = None  # configure()'s, which wins
# the last review of the library: (when it finished, Unix time; its counts by finding)
_review: tuple[float, dict[str, int]] | None = None
_global: Instruments | None = None  # the global providers', made once OpenTelemetry is in use


def publish_review(finished_at: float, summary: Mapping[str, Any]) -> None:
    """Make a review's counts (the whole numbers of its summary, foundry/library_review.py)
    what the ``toolfoundry.review.*`` gauges report; kept in this process whether or not
    OpenTelemetry is in use yet, so a reader set up later sees them."""
    global _review
    counts = {k: v for k, v in summary.items() if isinstance(v, int) and not isinstance(v, bool)}
    _review = (finished_at, counts)


def instruments() -> Instruments | None:
    """Where the foundry reports: None while this process does not use OpenTelemetry (see
    the module's docstring), so an operation costs nothing more than this check."""
    if _configured is not None:
        return _configured
    if _global is not None:
        return _global
    modules = sys.modules
    if not (_NAMED_PROVIDERS or _OTEL_MODULES[0] in modules or _OTEL_MODULES[1] in modules):
        return None
    return _globally()


def _globally() -> Instruments | None:
    global _global
    if _global is None:
        try:
            _global = Instruments()
        except ImportError:  # opentelemetry-api is not installed (or was blocked)
            return None
    return _global


def configure(
    *,
    tracer_provider: TracerProvider | None = None,
    meter_provider: MeterProvider | None = None,
) -> None:
    """Report toolfoundry's spans and metrics to these providers instead of the global ones
    (with neither, to the global ones again).

    Args:
        tracer_provider: where spans go (default: OpenTelemetry's global tracer provider).
        meter_provider: where metrics go (default: the global meter provider).

    Raises:
        ImportError: opentelemetry-api is not installed.
    """
    global _configured
    try:
        made = Instruments(tracer_provider, meter_provider)
    except ImportError:
        raise ImportError("OpenTelemetry is not installed: install toolfoundry[otel]") from None
    _configured = made if tracer_provider is not None or meter_provider is not None else None
    if _configured is None:
        _globally()
