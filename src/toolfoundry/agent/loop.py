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

import json
import time
import uuid
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolfoundry.agent.approval import ApprovalRequest, Approver, defer
from toolfoundry.agent.providers.base import Message, Provider, ProviderError, ToolCall
from toolfoundry.agent.retrieval import offered_tools
from toolfoundry.agent.transcript import (
    AgentRun,
    RunStore,
    StopReason,
    ToolOutcome,
    TurnRecord,
    now,
)
from toolfoundry.spec import CallResult, DeclaredTool, ErrorKind, StepStatus
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
MAX_RESULT_CHARS = 20_000
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
    declared: dict[str, DeclaredTool] = {}
    for tool in [*meta_tools(foundry), *tools]:
        declared[tool.spec.name] = tool
    dispatcher = _Dispatcher(foundry, declared, approval, run, emit)
    messages = [Message("system", system), Message("user", task)]
    started = time.monotonic()

    def stop(reason: StopReason, message: str) -> AgentRun:
        run.stop_reason, run.stop_message, run.finished_at = reason, message, now()
        emit(AgentEvent("stop", len(run.turns), {"reason": reason.value, "message": message}))
        if runs is not None:
            runs.save(run)
        return run

    for index in range(max_turns):
        used = run.input_tokens + run.output_tokens
        if used >= max_tokens:
            return stop(StopReason.MAX_TOKENS, f"{used} tokens used (limit {max_tokens})")
        elapsed = time.monotonic() - started
        if elapsed >= max_seconds:
            return stop(StopReason.MAX_SECONDS, f"{elapsed:.1f} s elapsed (limit {max_seconds})")
        offered = offered_tools(
            foundry,
            task,
            top_k=top_k,
            always=[t.spec for t in declared.values()],
            pinned=dispatcher.pinned,
        )
        emit(AgentEvent("turn", index + 1, {"offered": [s.name for s in offered]}))
        turn_started = time.perf_counter()
        try:
            turn = provider.complete(
                messages, offered, max_tokens=max(1, min(turn_tokens, max_tokens - used))
            )
        except ProviderError as exc:
            return stop(StopReason.PROVIDER_ERROR, f"{exc.kind}: {exc.message}")
        emit(
            AgentEvent(
                "model",
                index + 1,
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
        messages.append(Message("assistant", turn.text, tool_calls=turn.tool_calls))
        outcomes = []
        for call in turn.tool_calls:
            outcome = dispatcher.run(call, index + 1)
            outcomes.append(outcome)
            messages.append(
                Message(
                    "tool",
                    outcome.content,
                    tool_call_id=call.id,
                    tool_name=call.name,
                    is_error=outcome.is_error,
                )
            )
        run.turns.append(
            TurnRecord(
                index=index + 1,
                offered=tuple(s.name for s in offered),
                text=turn.text,
                outcomes=tuple(outcomes),
                input_tokens=turn.usage.input_tokens,
                output_tokens=turn.usage.output_tokens,
                stop_reason=turn.stop_reason,
                duration_ms=elapsed_ms(turn_started),
            )
        )
        if runs is not None:
            runs.save(run)
        if not turn.tool_calls:
            run.final_text = turn.text
            if turn.stop_reason in _CUT_OFF:
                return stop(
                    StopReason.MAX_TOKENS,
                    f"the model's answer was cut at {turn_tokens} output tokens "
                    f"({turn.stop_reason})",
                )
            return stop(StopReason.COMPLETED, turn.stop_reason or "the model answered")
    return stop(StopReason.MAX_TURNS, f"the model was still calling tools after {max_turns} turns")


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
        payload = _payload(result)
        if result.ok and call.name == "create_tool":
            payload = self._after_create(payload, turn)
        elif result.ok and call.name == "search_tools" and isinstance(result.value, list):
            self.pinned.update(str(hit.get("name")) for hit in result.value)
        step = payload["step"]
        blockers = step.get("blockers", [])
        ok = step["status"] != StepStatus.BLOCKED.value
        is_error = not ok and blockers != ["awaiting_approval"]
        content = json.dumps({"ok": ok, **payload}, ensure_ascii=False, default=str)
        if len(content) > MAX_RESULT_CHARS:
            content = content[:MAX_RESULT_CHARS] + " ...[truncated]"
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


def _payload(result: CallResult) -> dict[str, Any]:
    """The JSON a model sees for a call: value or error, and the step outcome."""
    step = result.details.get("step")
    if result.error is not None:
        if not isinstance(step, dict):
            step = {"status": "blocked", "blockers": [result.error.kind.value]}
        out: dict[str, Any] = {"error": result.error.to_dict(), "step": step}
    else:
        value = result.value
        if isinstance(value, dict) and isinstance(value.get("step"), dict):
            step = value["step"]
        out = {"value": value, "step": step if isinstance(step, dict) else {"status": "completed"}}
    if result.logs:
        out["logs"] = list(result.logs)
    return out


def _call_view(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}
