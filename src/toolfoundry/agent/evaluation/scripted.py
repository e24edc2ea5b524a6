"""Scripted orchestrators: fixed policies behind the Provider contract, to prove the scorer.

They read the same prompt a real model reads (the describe JSON and the workflow response,
in the two fenced JSON blocks of the last user message) and answer with one tool call.

- ``scripted:correct`` acts on the root cause (``stopped_at``): gathers a blocker's input,
  gets a missing session or routes around an outage, widens an empty search, and leaves
  operator-skipped steps alone.
- ``scripted:naive`` treats every step that did not complete as a failure to retry (it
  retries ``skipped`` and forces ``blocked``), except that it widens an ``empty`` search.
- ``scripted:silent`` answers in prose and calls no tool.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from toolfoundry.agent.providers.base import Message, ToolCall, ToolChoice, Turn
from toolfoundry.spec import ToolSpec

Answer = tuple[str, dict[str, Any]] | None
Policy = Callable[[dict[str, Any], dict[str, Any]], Answer]

_BLOCK = re.compile(r"```json\n(.*?)\n```", re.DOTALL)
_WORD = re.compile(r"[a-z0-9]{3,}")


def correct_policy(catalog: dict[str, Any], response: dict[str, Any]) -> Answer:
    """Act on the root cause, by its status."""
    steps: dict[str, dict[str, Any]] = response["steps"]
    if response["status"] == "completed":
        for name, step in steps.items():
            if step["status"] in ("skipped", "unavailable"):
                return "leave_step", {"step": name, "reason": "the goal is met without it"}
        return "stop", {"reason": "the workflow completed"}
    root = response.get("stopped_at")
    if root is None:
        return "stop", {"reason": f"the workflow is {response['status']}"}
    step = steps[root]
    status = step["status"]
    if status == "blocked":
        return "gather_input", {"blocker": step["blockers"][0]}
    if status == "unavailable":
        missing = step.get("details", {}).get("missing")
        if missing:
            return "request_session", {"dependency": missing[0]}
        via = _alternative(catalog, response["workflow"], root, step.get("message", ""))
        return "route_around", {"step": root, "via": via}
    if status == "empty":
        return "widen_query", {"step": root, "change": "broaden the query and the time window"}
    return "stop", {"reason": f"{root} is {status}"}


def naive_policy(catalog: dict[str, Any], response: dict[str, Any]) -> Answer:
    """Retry the first step that did not complete; widen it when it came back empty."""
    for name, step in response["steps"].items():
        if step["status"] == "empty":
            return "widen_query", {"step": name, "change": "search more"}
        if step["status"] != "completed":
            return "retry_step", {"step": name}
    return "stop", {"reason": "done"}


def silent_policy(catalog: dict[str, Any], response: dict[str, Any]) -> Answer:
    """Never call a tool."""
    return None


POLICIES: dict[str, Policy] = {
    "correct": correct_policy,
    "naive": naive_policy,
    "silent": silent_policy,
}


class ScriptedProvider:
    """A Provider whose answers come from a policy, not from a model.

    Args:
        name: a key of :data:`POLICIES`.
    """

    def __init__(self, name: str) -> None:
        if name not in POLICIES:
            raise ValueError(f"unknown scripted model {name!r}; known: {sorted(POLICIES)}")
        self._name = name
        self._policy = POLICIES[name]

    @property
    def model_id(self) -> str:
        return f"scripted:{self._name}"

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        tool_choice: ToolChoice = "auto",
        max_tokens: int = 4096,
    ) -> Turn:
        """Answer the last user message with the policy's tool call (or with prose)."""
        prompt = next((m.content for m in reversed(messages) if m.role == "user"), "")
        blocks = _BLOCK.findall(prompt)
        if len(blocks) < 2:
            return Turn(text="I need the catalog and the workflow response to decide.")
        answer = self._policy(json.loads(blocks[0]), json.loads(blocks[-1]))
        if answer is None:
            return Turn(text="The workflow did not finish; I would look into it.")
        name, arguments = answer
        if name not in {t.name for t in tools}:
            return Turn(text=f"I would call {name}, but it is not offered.")
        call = ToolCall(f"call_{self._name}_1", name, arguments, json.dumps(arguments))
        return Turn(tool_calls=(call,), stop_reason="tool_use")


def _alternative(catalog: dict[str, Any], workflow: str, step: str, message: str) -> str:
    """The catalog tool sharing the most words with the step's name and message."""
    wanted = set(_WORD.findall(f"{step} {message}".lower().replace("_", " ")))
    best, best_score = "", -1
    for group in catalog.get("groups", []):
        for command in group["commands"]:
            if command["name"] == workflow:
                continue
            text = f"{command['name']} {command['description']}".lower().replace("_", " ")
            score = len(wanted & set(_WORD.findall(text)))
            if score > best_score:
                best, best_score = command["name"], score
    return best
