"""What an agent run did, turn by turn, and where it is kept (the registry's database).

``AgentRun`` is what :func:`toolfoundry.agent.run_agent` returns; :class:`RunStore` writes it
after every turn (a crash leaves the turns so far) and reads runs back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from toolfoundry.agent.providers.base import ToolCall
from toolfoundry.registry import Registry, RunRow


class StopReason(StrEnum):
    """Why a run ended."""

    COMPLETED = "completed"  # the model answered without calling a tool
    MAX_TURNS = "max_turns"
    MAX_TOKENS = "max_tokens"
    MAX_SECONDS = "max_seconds"
    PROVIDER_ERROR = "provider_error"  # the vendor failed, or a replay diverged


@dataclass(frozen=True)
class ToolOutcome:
    """One tool call of a turn and what the model was told about it."""

    call: ToolCall
    ok: bool
    is_error: bool
    content: str
    result: dict[str, Any]
    duration_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.call.id,
            "name": self.call.name,
            "arguments": self.call.arguments,
            "raw_arguments": self.call.raw_arguments,
            "ok": self.ok,
            "is_error": self.is_error,
            "result": self.result,
            "duration_ms": round(self.duration_ms, 3),
        }


@dataclass(frozen=True)
class TurnRecord:
    """One model turn: the tools offered, what the model said and called, the outcomes."""

    index: int
    offered: tuple[str, ...]
    text: str
    outcomes: tuple[ToolOutcome, ...]
    input_tokens: int
    output_tokens: int
    stop_reason: str
    duration_ms: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "offered": list(self.offered),
            "text": self.text,
            "tool_calls": [o.to_dict() for o in self.outcomes],
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens},
            "stop_reason": self.stop_reason,
            "duration_ms": round(self.duration_ms, 3),
        }


@dataclass
class AgentRun:
    """A run of the agent loop (complete once ``stop_reason`` is set)."""

    id: str
    task: str
    model: str
    started_at: datetime
    turns: list[TurnRecord] = field(default_factory=list)
    stop_reason: StopReason | None = None
    stop_message: str = ""
    final_text: str = ""
    finished_at: datetime | None = None
    created: list[str] = field(default_factory=list)

    @property
    def input_tokens(self) -> int:
        return sum(t.input_tokens for t in self.turns)

    @property
    def output_tokens(self) -> int:
        return sum(t.output_tokens for t in self.turns)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``toolfoundry agent --json``; the stored transcript)."""
        return {
            "id": self.id,
            "task": self.task,
            "model": self.model,
            "stop_reason": self.stop_reason.value if self.stop_reason else None,
            "stop_message": self.stop_message,
            "final_text": self.final_text,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens},
            "created": list(self.created),
            "turns": [t.to_dict() for t in self.turns],
        }


def recording_session(run: AgentRun) -> dict[str, Any]:
    """The run as one session of a replay recording (``toolfoundry-replay/1``).

    Each turn keeps what the model said and called, and expects the tools it called to be
    offered again, so replaying the session checks the library still fits it.
    """
    turns = []
    for turn in run.turns:
        entry: dict[str, Any] = {"text": turn.text}
        if turn.outcomes:
            entry["expect"] = {"offered": sorted({o.call.name for o in turn.outcomes})}
            entry["tool_calls"] = [
                {"id": o.call.id, "name": o.call.name, "arguments": o.call.arguments or {}}
                for o in turn.outcomes
            ]
        entry["usage"] = {"input_tokens": turn.input_tokens, "output_tokens": turn.output_tokens}
        turns.append(entry)
    return {"task": run.task, "model": run.model, "turns": turns}


class RunStore:
    """Agent runs in the registry's database (:meth:`Registry.save_run` and its readers)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def save(self, run: AgentRun) -> None:
        """Insert or update the run with its transcript so far."""
        self.registry.save_run(
            RunRow(
                id=run.id,
                task=run.task,
                model=run.model,
                stop_reason=run.stop_reason.value if run.stop_reason else None,
                started_at=run.started_at,
                finished_at=run.finished_at,
                turns=len(run.turns),
                input_tokens=run.input_tokens,
                output_tokens=run.output_tokens,
                transcript=run.to_dict(),
            )
        )

    def get(self, run_id: str) -> dict[str, Any] | None:
        """A stored run's transcript (the JSON of :meth:`AgentRun.to_dict`), or None."""
        return self.registry.run_transcript(run_id)

    def recent(self, limit: int = 20) -> list[dict[str, Any]]:
        """Summaries of the newest runs, newest first."""
        return [
            {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in row.items()}
            for row in self.registry.recent_runs(limit)
        ]


def now() -> datetime:
    return datetime.now(UTC)
