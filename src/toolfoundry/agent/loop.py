"""The provider-neutral agent loop: offer tools, run the model's calls, feed results back.

    run = run_agent("slugify these titles ...", provider_for("openai:gpt-4o-mini"), foundry)

Each turn offers the registry's active tools (the ``top_k`` most relevant when the library is
large, see :mod:`toolfoundry.agent.retrieval`) plus the meta-tools, so a tool created on one
turn is offered on the next. Failures go back to the model as structured JSON (``kind``,
``message``, ``problems``, ``blockers``) marked ``is_error``, so it can repair its code. The
run stops on a final answer or at a limit (turns, tokens, wall time), with the reason, and
its transcript is stored with the run after every turn.
"""

from __future__ import annotations

import time
import uuid
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolfoundry.agent.approval import ApprovalRequest, Approver, defer
from toolfoundry.agent.providers.base import Message, Provider, ProviderError, ToolCall, Turn
from toolfoundry.agent.retrieval import offered_tools
from toolfoundry.agent.transcript import (
    AgentRun,
    RunStore,
    StopReason,
    ToolOutcome,
    TurnRecord,
    now,
)
from toolfoundry.foundry.call import model_payload, model_text
from toolfoundry.spec import CallResult, DeclaredTool, ErrorKind, StepStatus, ToolSpec
from toolfoundry.spec.result import elapsed_ms

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry

SYSTEM_PROMPT = (
    "You work with a tool foundry. Use the tools offered; when none fits, look with "
    "search_tools, then write one with create_tool: an ES module exporting handler(args), "
    "its JSON Schema parameters and tests (input and expected output). The foundry checks "
    "the code, runs the tests in a sandbox and registers the tool; from your next turn it is "
    "offered like any other tool. Every tool result is JSON: ok, value or error (kind, "
    "message, problems) and step (status, blockers). When ok is false, read the blockers "
    "and the failing tests, fix the cause and try again. Answer in plain text when done."
)
# What each vendor says when a turn ran out of output tokens (chat, responses, anthropic).
_CUT_OFF = frozenset({"length", "max_output_tokens", "max_tokens"})
# Declaring the meta-tools builds pydantic models (tens of ms); they are bound to one foundry
# and immutable, so each foundry's set is built once.
_META_TOOLS: weakref.WeakKeyDictionary[Foundry, list[DeclaredTool]] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class AgentEvent:
    """Progress of a run, for a display: ``turn`` (tools offered), ``model`` (text and calls),
    ``tool`` (one outcome), ``approval`` (a decision) and ``stop``."""

    kind: str
    turn: int
    data: dict[str, Any] = field(default_factory=dict)


EventSink = Callable[[AgentEvent], None]


def run_agent(
    task: str,
    provider: Provider,
    foundry: Foundry,
    *,
    max_turns: int = 12,
    max_tokens: int = 200_000,
    max_seconds: float = 600.0,
    top_k: int | None = 20,
    approval: Approver = defer,
    tools: Sequence[DeclaredTool] = (),
    system: str = SYSTEM_PROMPT,
    turn_tokens: int = 4096,
    on_event: EventSink | None = None,
    store: bool = True,
) -> AgentRun:
    """Run ``task`` with ``provider`` over ``foundry`` until the model answers or a limit hits.

    Args:
        task: what the user asks for (also the search query for tool retrieval).
        provider: the model (see :func:`toolfoundry.agent.providers.provider_for`).
        foundry: the registry the tools come from and go to.
        max_turns: model turns at most.
        max_tokens: input plus output tokens at most, over the whole run.
        max_seconds: wall time at most (checked before each model turn).
        top_k: when more tools are active than this, offer only the best ``top_k`` for the
            task (plus those met during the run); None offers all.
        approval: decides on versions left pending by ``create_tool``.
        tools: more declared tools offered on every turn (e.g. workflows).
        system: the system prompt.
        turn_tokens: the output tokens a single turn may use.
        on_event: called with each :class:`AgentEvent` (rich output in the CLI).
        store: keep the run and its transcript in the registry's database.

    Returns:
        The run: its turns, stop reason, final text and the tools it created.
    """
    run = AgentRun(uuid.uuid4().hex, task, provider.model_id, now())
    runs = RunStore(foundry.registry) if store else None
    emit: EventSink = on_event or (lambda _event: None)
    declared = _prepare_tools(foundry, tools)
    loop = _Loop(
        task,
        provider,
        foundry,
        _Limits(max_turns, max_tokens, max_seconds, top_k, turn_tokens),
        run=run,
        runs=runs,
        emit=emit,
        declared=declared,
        dispatcher=_Dispatcher(foundry, declared, approval, run, emit),
        messages=[Message("system", system), Message("user", task)],
    )
    return loop.run_turns()


def _prepare_tools(foundry: Foundry, tools: Sequence[DeclaredTool]) -> dict[str, DeclaredTool]:
    """The tools offered on every turn, by name: the meta-tools, then ``tools`` (later wins)."""
    declared: dict[str, DeclaredTool] = {}
    for tool in [*meta_tools(foundry), *tools]:
        declared[tool.spec.name] = tool
    return declared


@dataclass(frozen=True)
class _Limits:
    """The bounds of one run (see :func:`run_agent`)."""

    max_turns: int
    max_tokens: int
    max_seconds: float
    top_k: int | None
    turn_tokens: int


class _Loop:
    """One run's steps: check the limits, take a turn, run its calls, record it, decide to stop."""

    def __init__(
        self,
        task: str,
        provider: Provider,
        foundry: Foundry,
        limits: _Limits,
        *,
        run: AgentRun,
        runs: RunStore | None,
        emit: EventSink,
        declared: dict[str, DeclaredTool],
        dispatcher: _Dispatcher,
        messages: list[Message],
    ) -> None:
        self.task = task
        self.provider = provider
        self.foundry = foundry
        self.limits = limits
        self.run = run
        self.runs = runs
        self.emit = emit
        self.declared = declared
        self.dispatcher = dispatcher
        self.messages = messages
        self.started = time.monotonic()

    def run_turns(self) -> AgentRun:
        """Turn after turn until one stops the run, or the turn limit does."""
        for index in range(self.limits.max_turns):
            stopped = self._limit_stop()
            if stopped is None:
                stopped = self._one_turn(index + 1)
            if stopped is not None:
                return stopped
        return self._stop(
            StopReason.MAX_TURNS,
            f"the model was still calling tools after {self.limits.max_turns} turns",
        )

    def _used_tokens(self) -> int:
        return self.run.input_tokens + self.run.output_tokens

    def _limit_stop(self) -> AgentRun | None:
        """Stop before a turn when the token or wall-time budget is spent."""
        used, max_tokens = self._used_tokens(), self.limits.max_tokens
        if used >= max_tokens:
            return self._stop(StopReason.MAX_TOKENS, f"{used} tokens used (limit {max_tokens})")
        elapsed, max_seconds = time.monotonic() - self.started, self.limits.max_seconds
        if elapsed >= max_seconds:
            return self._stop(
                StopReason.MAX_SECONDS, f"{elapsed:.1f} s elapsed (limit {max_seconds})"
            )
        return None

    def _one_turn(self, number: int) -> AgentRun | None:
        """Offer tools, ask the model, run its calls and record the turn; the run if it stops."""
        offered = self._offer_tools(number)
        turn_started = time.perf_counter()
        budget = self.limits.max_tokens - self._used_tokens()
        try:
            turn = self.provider.complete(
                self.messages, offered, max_tokens=max(1, min(self.limits.turn_tokens, budget))
            )
        except ProviderError as exc:
            return self._stop(StopReason.PROVIDER_ERROR, f"{exc.kind}: {exc.message}")
        self._emit_model(number, turn)
        self.messages.append(Message("assistant", turn.text, tool_calls=turn.tool_calls))
        outcomes = self._run_tool_calls(number, turn.tool_calls)
        self._record_turn(number, offered, turn, outcomes, turn_started)
        return self._decide_stop(turn)

    def _offer_tools(self, number: int) -> list[ToolSpec]:
        """The tools this turn offers (declared ones always), announced as a ``turn`` event."""
        offered = offered_tools(
            self.foundry,
            self.task,
            top_k=self.limits.top_k,
            always=[t.spec for t in self.declared.values()],
            pinned=self.dispatcher.pinned,
        )
        self.emit(AgentEvent("turn", number, {"offered": [s.name for s in offered]}))
        return offered

    def _emit_model(self, number: int, turn: Turn) -> None:
        """Announce the model's text, calls and usage as a ``model`` event."""
        self.emit(
            AgentEvent(
                "model",
                number,
                {
                    "text": turn.text,
                    "calls": [_call_view(c) for c in turn.tool_calls],
                    "usage": {
                        "input_tokens": turn.usage.input_tokens,
                        "output_tokens": turn.usage.output_tokens,
                    },
                },
            )
        )

    def _run_tool_calls(self, number: int, calls: Sequence[ToolCall]) -> list[ToolOutcome]:
        """Run each call in order, feeding each result back to the model as a tool message."""
        outcomes = []
        for call in calls:
            outcome = self.dispatcher.run(call, number)
            outcomes.append(outcome)
            self.messages.append(
                Message(
                    "tool",
                    outcome.content,
                    tool_call_id=call.id,
                    tool_name=call.name,
                    is_error=outcome.is_error,
                )
            )
        return outcomes

    def _record_turn(
        self,
        number: int,
        offered: Sequence[ToolSpec],
        turn: Turn,
        outcomes: Sequence[ToolOutcome],
        turn_started: float,
    ) -> None:
        """Add the turn to the transcript and store the run so far."""
        self.run.turns.append(
            TurnRecord(
                index=number,
                offered=tuple(s.name for s in offered),
                text=turn.text,
                outcomes=tuple(outcomes),
                input_tokens=turn.usage.input_tokens,
                output_tokens=turn.usage.output_tokens,
                stop_reason=turn.stop_reason,
                duration_ms=elapsed_ms(turn_started),
            )
        )
        if self.runs is not None:
            self.runs.save(self.run)

    def _decide_stop(self, turn: Turn) -> AgentRun | None:
        """A turn without calls is the answer (cut off or complete); otherwise go on."""
        if turn.tool_calls:
            return None
        self.run.final_text = turn.text
        if turn.stop_reason in _CUT_OFF:
            return self._stop(
                StopReason.MAX_TOKENS,
                f"the model's answer was cut at {self.limits.turn_tokens} output tokens "
                f"({turn.stop_reason})",
            )
        return self._stop(StopReason.COMPLETED, turn.stop_reason or "the model answered")

    def _stop(self, reason: StopReason, message: str) -> AgentRun:
        """End the run with ``reason``: announce it and store the run."""
        run = self.run
        run.stop_reason, run.stop_message, run.finished_at = reason, message, now()
        self.emit(AgentEvent("stop", len(run.turns), {"reason": reason.value, "message": message}))
        if self.runs is not None:
            self.runs.save(run)
        return run


def meta_tools(foundry: Foundry) -> list[DeclaredTool]:
    """The meta-tools bound to ``foundry`` (declared once per foundry)."""
    bound = _META_TOOLS.get(foundry)
    if bound is None:
        from toolfoundry.foundry.meta_tools import builtin_tools

        bound = _META_TOOLS[foundry] = builtin_tools(foundry)
    return bound


class _Dispatcher:
    """Runs one tool call: meta-tools and declared tools by name, the rest in the registry."""

    def __init__(
        self,
        foundry: Foundry,
        declared: dict[str, DeclaredTool],
        approval: Approver,
        run: AgentRun,
        emit: EventSink,
    ) -> None:
        self.foundry = foundry
        self.declared = declared
        self.approval = approval
        self.run_record = run
        self.emit = emit
        self.pinned: set[str] = set()

    def run(self, call: ToolCall, turn: int) -> ToolOutcome:
        started = time.perf_counter()
        if call.arguments is None:
            result = CallResult.failure(
                ErrorKind.INVALID_ARGUMENTS,
                f"the arguments of {call.name!r} are not a JSON object: {call.raw_arguments[:200]}",
            )
        elif call.name in self.declared:
            result = self.declared[call.name].call(call.arguments)
        else:
            result = self.foundry.call(call.name, call.arguments)
            if result.ok:
                self.pinned.add(call.name)
        payload = model_payload(result)
        if result.ok and call.name == "create_tool":
            payload = self._after_create(payload, turn)
        elif result.ok and call.name == "search_tools" and isinstance(result.value, list):
            self.pinned.update(str(hit.get("name")) for hit in result.value)
        step = payload["step"]
        blockers = step.get("blockers", [])
        ok = step["status"] != StepStatus.BLOCKED.value
        is_error = not ok and blockers != ["awaiting_approval"]
        content = model_text({"ok": ok, **payload})
        outcome = ToolOutcome(
            call=call,
            ok=ok,
            is_error=is_error,
            content=content,
            result={"ok": ok, **payload},
            duration_ms=elapsed_ms(started),
        )
        self.emit(AgentEvent("tool", turn, outcome.to_dict()))
        return outcome

    def _after_create(self, payload: dict[str, Any], turn: int) -> dict[str, Any]:
        value = payload.get("value")
        if not isinstance(value, dict) or not value.get("name") or not value.get("version"):
            return payload
        name, version = str(value["name"]), int(value["version"])
        if value.get("status") == "pending_approval":
            value = self._ask(value, name, version, turn)
        if value.get("status") == "active":
            self.pinned.add(name)
            self.run_record.created.append(f"{name} v{version}")
        return {**payload, "value": value, "step": value.get("step", payload["step"])}

    def _ask(self, value: dict[str, Any], name: str, version: int, turn: int) -> dict[str, Any]:
        pending = self.foundry.show(name, version)
        request = ApprovalRequest(
            name=name,
            version=version,
            description=pending.description,
            capabilities=pending.capabilities.to_dict(),
            code=pending.code,
            findings=list(value.get("findings") or []),
        )
        decision = self.approval(request)
        self.emit(
            AgentEvent(
                "approval",
                turn,
                {"name": name, "version": version, "action": decision.action, "by": decision.by},
            )
        )
        if decision.action == "defer":
            return {
                **value,
                "note": "a human will review this version; it cannot be called until approved",
            }
        if decision.action == "approve":
            done = self.foundry.approve(name, version, by=decision.by, reason=decision.reason)
        else:
            done = self.foundry.reject(name, version, by=decision.by, reason=decision.reason)
        return {
            **value,
            "status": done.status or value.get("status"),
            "approval": {"action": decision.action, "by": decision.by, "reason": decision.reason},
            "step": done.step.to_dict(),
        }


def _call_view(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}
