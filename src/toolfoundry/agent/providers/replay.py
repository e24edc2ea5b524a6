"""A provider that plays a recorded session instead of calling a model.

A recording is JSON::

    {"format": "toolfoundry-replay/1", "label": "...",
     "sessions": {"NAME": {"task": "...", "turns": [
        {"expect": {"offered": ["create_tool"], "result_contains": ["tests_failed"]},
         "text": "...", "tool_calls": [{"id": "...", "name": "...", "arguments": {...}}]}]}}}

The position in a session is the number of assistant turns already in the conversation, so
the provider keeps no state. Before answering, each turn checks what the real loop sent:
every tool it is about to call must be offered, and the latest tool results must contain the
recorded strings. A run that drifts from the recording stops with a ``protocol`` error instead
of playing answers that no longer fit.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from toolfoundry.agent.providers.base import (
    Message,
    ProviderError,
    ToolCall,
    ToolChoice,
    Turn,
    Usage,
)
from toolfoundry.spec import ToolSpec

FORMAT = "toolfoundry-replay/1"
END_OF_RECORDING = "end_of_recording"


class RecordingJson(TypedDict):
    """A recording file as JSON (the module docstring shows one); each session is kept as the
    agent's transcript wrote it (agent/transcript.py: ``recording_session``)."""

    format: str
    label: NotRequired[str]
    sessions: NotRequired[dict[str, dict[str, Any]]]


@dataclass(frozen=True)
class Recording:
    """A parsed recording: a label and named sessions."""

    label: str
    sessions: dict[str, dict[str, Any]]
    source: str

    @classmethod
    def load(cls, where: str | Path) -> Recording:
        """Read a recording file; ``demo`` (or any bare name) is one shipped in the package."""
        text, source = _read(str(where))
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProviderError("configuration", f"{source} is not JSON: {exc}") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ProviderError("configuration", f"{source} is not a {FORMAT} recording")
        sessions = data.get("sessions")
        if not isinstance(sessions, dict) or not sessions:
            raise ProviderError("configuration", f"{source} has no sessions")
        return cls(str(data.get("label", "")), sessions, source)


def _read(where: str) -> tuple[str, str]:
    path = Path(where)
    if path.suffix != ".json" and "/" not in where:
        packaged = resources.files("toolfoundry.agent.recordings").joinpath(f"{where}.json")
        if packaged.is_file():
            return packaged.read_text(encoding="utf-8"), f"recording {where!r} (packaged)"
    try:
        return path.read_text(encoding="utf-8"), str(path)
    except OSError as exc:
        raise ProviderError("configuration", f"cannot read recording {where}: {exc}") from exc


class ReplayProvider:
    """Plays one session of a recording.

    Args:
        where: a recording file, or the name of a packaged one (``demo``).
        session: the session to play; by default the one whose ``task`` is the conversation's
            first user message, else the first.
    """

    def __init__(self, where: str | Path, session: str | None = None) -> None:
        self.recording = Recording.load(where)
        if session is not None and session not in self.recording.sessions:
            known = ", ".join(self.recording.sessions)
            raise ProviderError(
                "configuration", f"{self.recording.source} has no session {session!r} ({known})"
            )
        self._where = str(where)
        self._session = session

    @property
    def model_id(self) -> str:
        suffix = f"#{self._session}" if self._session else ""
        return f"replay:{self._where}{suffix}"

    @property
    def label(self) -> str:
        return self.recording.label

    def session_for(self, messages: Sequence[Message]) -> tuple[str, dict[str, Any]]:
        """The session played for this conversation."""
        if self._session is not None:
            return self._session, self.recording.sessions[self._session]
        task = next((m.content for m in messages if m.role == "user"), "")
        for name, session in self.recording.sessions.items():
            if session.get("task") == task:
                return name, session
        name = next(iter(self.recording.sessions))
        return name, self.recording.sessions[name]

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        tool_choice: ToolChoice = "auto",
        max_tokens: int = 4096,
    ) -> Turn:
        """The next recorded turn, after checking the conversation still fits the recording."""
        name, session = self.session_for(messages)
        turns = session.get("turns") or []
        position = sum(1 for m in messages if m.role == "assistant")
        if position >= len(turns):
            return Turn(text="(end of the recording)", stop_reason=END_OF_RECORDING)
        turn = turns[position]
        where = f"replay {name!r} turn {position + 1}"
        calls = tuple(_call(c, position, i) for i, c in enumerate(turn.get("tool_calls") or []))
        offered = {t.name for t in tools}
        expect = turn.get("expect") or {}
        wanted = [*expect.get("offered", []), *(c.name for c in calls)]
        missing = [n for n in dict.fromkeys(wanted) if n not in offered]
        if missing:
            raise ProviderError(
                "protocol", f"{where}: diverged, {', '.join(missing)} not offered by the loop"
            )
        latest = _latest_results(messages)
        for needle in expect.get("result_contains", []):
            if needle not in latest:
                raise ProviderError(
                    "protocol", f"{where}: diverged, the tool results lack {needle!r}"
                )
        usage = turn.get("usage") or {}
        return Turn(
            text=str(turn.get("text", "")),
            tool_calls=calls,
            usage=Usage(int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))),
            stop_reason="tool_calls" if calls else "end_turn",
        )


def _call(data: dict[str, Any], position: int, index: int) -> ToolCall:
    arguments = data.get("arguments") or {}
    return ToolCall(
        id=str(data.get("id") or f"replay_{position}_{index}"),
        name=str(data["name"]),
        arguments=dict(arguments),
        raw_arguments=json.dumps(arguments, ensure_ascii=False),
    )


def _latest_results(messages: Sequence[Message]) -> str:
    results: list[str] = []
    for m in reversed(messages):
        if m.role != "tool":
            break
        results.append(m.content)
    return "\n".join(results)
