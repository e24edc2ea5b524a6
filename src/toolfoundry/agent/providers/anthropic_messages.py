"""Anthropic Messages API: ``tool_use`` / ``tool_result`` blocks with ``is_error``.

The system prompt goes apart; consecutive tool results are merged into one user turn (the
API wants roles to alternate); ``tool_choice`` maps auto/required/none to auto/any/none.
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
from toolfoundry.agent.providers.calls import exchange, system_text, tool_call
from toolfoundry.agent.providers.names import ToolNames
from toolfoundry.catalog import anthropic_tools
from toolfoundry.spec import ToolSpec

if TYPE_CHECKING:
    import anthropic

_CHOICE = {"auto": "auto", "required": "any", "none": "none"}


class AnthropicMessagesProvider:
    """A model behind the Messages API.

    Args:
        model: the vendor's model name, e.g. ``claude-sonnet-4-5``.
        client: an ``anthropic.Anthropic`` client.
    """

    def __init__(self, model: str, client: anthropic.Anthropic) -> None:
        self._model = model
        self._client = client

    @property
    def model_id(self) -> str:
        return f"anthropic:{self._model}"

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        tool_choice: ToolChoice = "auto",
        max_tokens: int = 4096,
    ) -> Turn:
        """Send the conversation and tools; return the model's turn."""
        names = ToolNames(t.name for t in tools)
        request: dict[str, Any] = {
            "model": self._model,
            "messages": anthropic_messages(messages, names),
            "max_tokens": max_tokens,
        }
        system = system_text(messages)
        if system:
            request["system"] = system
        if tools:
            request["tools"] = anthropic_tools(names.specs(tools))
            request["tool_choice"] = {"type": _CHOICE[tool_choice]}
        import anthropic

        specs = {t.name: t for t in tools}
        return exchange(
            self.model_id,
            lambda: self._client.messages.with_raw_response.create(**request).text(),
            anthropic.APIError,
            lambda data: parse_message(data, names, specs, len(messages)),
        )


def anthropic_messages(messages: Sequence[Message], names: ToolNames) -> list[dict[str, Any]]:
    """The neutral conversation (system aside) as alternating user/assistant messages."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "assistant" if m.role == "assistant" else "user"
        blocks: list[dict[str, Any]] = []
        if m.role == "tool":
            blocks.append(
                {
                    "type": "tool_result",
                    "tool_use_id": m.tool_call_id,
                    "content": m.content,
                    "is_error": m.is_error,
                }
            )
        else:
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            blocks.extend(
                {
                    "type": "tool_use",
                    "id": call.id,
                    "name": names.wire(call.name),
                    "input": call.arguments or {},
                }
                for call in m.tool_calls
            )
        if not blocks:
            blocks.append({"type": "text", "text": "(no content)"})
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def parse_message(
    data: dict[str, Any], names: ToolNames, specs: dict[str, ToolSpec], position: int
) -> Turn:
    """A Messages API answer (as JSON) as a neutral Turn."""
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in data.get("content") or []:
        if block.get("type") == "text":
            texts.append(str(block.get("text", "")))
        elif block.get("type") == "tool_use":
            calls.append(
                tool_call(
                    call_id=block.get("id"),
                    wire_name=str(block.get("name", "")),
                    raw=block.get("input"),
                    index=len(calls),
                    position=position,
                    names=names,
                    specs=specs,
                    format="anthropic",
                )
            )
    usage = data.get("usage") or {}
    return Turn(
        text="".join(texts),
        tool_calls=tuple(calls),
        usage=Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)),
        stop_reason=str(data.get("stop_reason") or ""),
    )
