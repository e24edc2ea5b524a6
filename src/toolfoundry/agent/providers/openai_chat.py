"""OpenAI Chat Completions (``tools`` / ``tool_calls`` / ``role: tool``), and compatible servers.

The compatible variant (Ollama, vLLM, llama.cpp server) sends non-strict schemas and the
classic ``max_tokens``, and its answers are read tolerantly: arguments as an object instead of
a JSON string, tool calls without ``id`` (a stable one is synthesised) or without ``type``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolfoundry.agent.providers.base import Message, ToolChoice, Turn, Usage
from toolfoundry.agent.providers.calls import exchange, sent_arguments, tool_call
from toolfoundry.agent.providers.names import ToolNames
from toolfoundry.catalog import openai_chat_tools
from toolfoundry.spec import ToolSpec

if TYPE_CHECKING:
    import openai


class OpenAIChatProvider:
    """A model behind the Chat Completions API.

    Args:
        model: the vendor's model name, e.g. ``gpt-4o-mini``.
        client: an ``openai.OpenAI`` client (see ``toolfoundry.agent.providers.clients``).
        compat: an OpenAI-compatible server rather than OpenAI itself.
        prefix: the provider part of :attr:`model_id`.
    """

    def __init__(
        self, model: str, client: openai.OpenAI, *, compat: bool = False, prefix: str = "openai"
    ) -> None:
        self._model = model
        self._client = client
        self._compat = compat
        self._prefix = prefix

    @property
    def model_id(self) -> str:
        return f"{self._prefix}:{self._model}"

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
            "messages": [chat_message(m, names) for m in messages],
            ("max_tokens" if self._compat else "max_completion_tokens"): max_tokens,
        }
        if tools:
            request["tools"] = openai_chat_tools(names.specs(tools), strict=not self._compat)
            request["tool_choice"] = tool_choice
        import openai

        specs = {t.name: t for t in tools}
        return exchange(
            self.model_id,
            lambda: self._client.chat.completions.with_raw_response.create(**request).text,
            openai.APIError,
            lambda data: parse_completion(data, names, specs, len(messages)),
        )


def chat_message(message: Message, names: ToolNames) -> dict[str, Any]:
    """One neutral message as a Chat Completions message."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            "content": message.content or None,
            "tool_calls": [
                {
                    "id": call.id,
                    "type": "function",
                    "function": {"name": names.wire(call.name), "arguments": sent_arguments(call)},
                }
                for call in message.tool_calls
            ],
        }
    return {"role": message.role, "content": message.content}


def parse_completion(
    data: dict[str, Any], names: ToolNames, specs: dict[str, ToolSpec], position: int
) -> Turn:
    """A Chat Completions answer (as JSON) as a neutral Turn."""
    choice = data["choices"][0]
    message = choice.get("message") or {}
    calls = tuple(
        tool_call(
            call_id=call.get("id"),
            wire_name=str((call.get("function") or {}).get("name", "")),
            raw=(call.get("function") or {}).get("arguments"),
            index=index,
            position=position,
            names=names,
            specs=specs,
            format="openai",
        )
        for index, call in enumerate(message.get("tool_calls") or [])
    )
    usage = data.get("usage") or {}
    return Turn(
        text=message.get("content") or "",
        tool_calls=calls,
        usage=Usage(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)),
        stop_reason=str(choice.get("finish_reason") or ""),
    )
