"""The whole contract a model vendor must meet: one neutral conversation in, one turn out.

Adapters translate these neutral types to a vendor's wire format (through its official SDK)
and back; the agent loop and the evaluations only ever see these types.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from toolfoundry.spec import ToolSpec

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """A model's request to call one tool.

    ``arguments`` is the parsed JSON object; ``raw_arguments`` keeps what the vendor sent
    (a JSON string, or an object for servers that send one) so a parse failure can be
    reported back to the model instead of crashing the loop.
    """

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""


@dataclass(frozen=True)
class Message:
    """One entry of the neutral conversation.

    A ``tool`` message answers the call ``tool_call_id``; ``is_error`` marks a failed call
    (Anthropic's ``is_error``; other vendors see it in the content).
    """

    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool = False


@dataclass(frozen=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0


@dataclass(frozen=True)
class Turn:
    """What the model answered: text, tool calls (possibly several, in parallel), usage."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    stop_reason: str = ""


ToolChoice = Literal["auto", "required", "none"]


class Provider(Protocol):
    """A model behind one vendor API, chosen by a ``"provider:model"`` string."""

    @property
    def model_id(self) -> str:
        """The ``provider:model`` string this provider was made from."""
        ...

    def complete(
        self,
        messages: Sequence[Message],
        tools: Sequence[ToolSpec],
        *,
        tool_choice: ToolChoice = "auto",
        max_tokens: int = 4096,
    ) -> Turn:
        """Send the conversation and the offered tools; return the model's next turn."""
        ...


class ProviderError(RuntimeError):
    """The vendor could not be used: missing key, refused request, unreadable answer.

    ``kind`` is ``configuration`` (fix the setup), ``api`` (the vendor refused or failed, after
    the SDK's retries) or ``protocol`` (the answer could not be understood; for a replay: the
    run diverged from the recording).
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
