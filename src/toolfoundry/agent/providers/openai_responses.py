"""OpenAI Responses API: ``function_call`` / ``function_call_output`` items, nothing stored.

Requests carry ``store: false`` and the whole conversation as input items every turn (no
``previous_response_id``), so nothing of a run is kept on the vendor's side. Reasoning items
are not sent back: with ``store: false`` the API cannot resolve them by id, and encrypted
reasoning (``include``) is refused by models that do not reason; the model reasons afresh from
the calls and their outputs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolfoundry.agent.providers.base import (
    Message,
    ToolCall,
    ToolChoice,
    Turn,
    Usage,
)
from toolfoundry.agent.providers.calls import exchange, sent_arguments, system_text, tool_call
from toolfoundry.agent.providers.names import ToolNames
from toolfoundry.catalog import openai_responses_tools
from toolfoundry.spec import ToolSpec

if TYPE_CHECKING:
    import openai


class OpenAIResponsesProvider:
    """A model behind the Responses API.

    Args:
        model: the vendor's model name.
        client: an ``openai.OpenAI`` client.
    """

    def __init__(self, model: str, client: openai.OpenAI) -> None:
        self._model = model
        self._client = client

    @property
    def model_id(self) -> str:
        return f"openai-responses:{self._model}"

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        tool_choice: ToolChoice = "auto",
        max_tokens: int = 4096,
    ) -> Turn:
        """Send the conversation as input items; return the model's turn."""
        names = ToolNames(t.name for t in tools)
        request: dict[str, Any] = {
            "model": self._model,
            "input": input_items(messages, names),
            "store": False,
            "max_output_tokens": max_tokens,
        }
        instructions = system_text(messages)
        if instructions:
            request["instructions"] = instructions
        if tools:
            request["tools"] = openai_responses_tools(names.specs(tools))
            request["tool_choice"] = tool_choice
        import openai

        specs = {t.name: t for t in tools}
        return exchange(
            self.model_id,
            lambda: self._client.responses.with_raw_response.create(**request).text,
            openai.APIError,
            lambda data: parse_response(data, names, specs, len(messages)),
        )


def input_items(messages: Sequence[Message], names: ToolNames) -> list[dict[str, Any]]:
    """The neutral conversation (system messages aside) as Responses input items."""
    items: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "tool":
            items.append(
                {"type": "function_call_output", "call_id": m.tool_call_id, "output": m.content}
            )
            continue
        if m.content or m.role == "user":
            items.append({"type": "message", "role": m.role, "content": m.content})
        items.extend(
            {
                "type": "function_call",
                "call_id": call.id,
                "name": names.wire(call.name),
                "arguments": sent_arguments(call),
            }
            for call in m.tool_calls
        )
    return items


def parse_response(
    data: dict[str, Any], names: ToolNames, specs: dict[str, ToolSpec], position: int
) -> Turn:
    """A Responses API answer (as JSON) as a neutral Turn."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for item in data.get("output") or []:
        kind = item.get("type")
        if kind == "message":
            texts.extend(
                str(part.get("text", ""))
                for part in item.get("content") or []
                if part.get("type") == "output_text"
            )
        elif kind == "function_call":
            calls.append(
                tool_call(
                    call_id=item.get("call_id"),
                    wire_name=str(item.get("name", "")),
                    raw=item.get("arguments"),
                    index=len(calls),
                    position=position,
                    names=names,
                    specs=specs,
                    format="responses",
                )
            )
    usage = data.get("usage") or {}
    incomplete = (data.get("incomplete_details") or {}).get("reason")
    stop = "tool_calls" if calls else str(incomplete or data.get("status") or "")
    return Turn(
        text="".join(texts),
        tool_calls=tuple(calls),
        usage=Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)),
        stop_reason=stop,
    )
