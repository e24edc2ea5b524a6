"""One exchange with a vendor, and reading tool calls from any wire format: arguments,
stable ids, the registry's names."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from toolfoundry.agent.providers.base import Message, ProviderError, ToolCall, Turn
from toolfoundry.agent.providers.names import ToolNames
from toolfoundry.base.json_gate import InvalidJson, decode
from toolfoundry.catalog import restore_arguments
from toolfoundry.spec import ToolSpec


def parse_arguments(raw: Any) -> tuple[dict[str, Any] | None, str]:
    """The arguments object and its text, from a JSON string or an already-decoded object.

    Returns ``(None, text)`` when the text is not a JSON object, so the loop can tell the
    model its arguments were unreadable instead of guessing.
    """
    if raw is None:
        return {}, ""
    if isinstance(raw, Mapping):
        return dict(raw), json.dumps(raw, ensure_ascii=False)
    text = str(raw)
    if not text.strip():
        return {}, text
    try:
        value = decode(text)  # the one gate: a model's 5000-digit number or deep nest is refused
    except InvalidJson:
        return None, text
    return (value, text) if isinstance(value, dict) else (None, text)


def stable_call_id(position: int, index: int, name: str, raw_arguments: str) -> str:
    """An id for a call the server sent without one: the same call in the same place of the
    same conversation always gets the same id (so replays and retries line up)."""
    digest = hashlib.sha256(f"{position}:{index}:{name}:{raw_arguments}".encode()).hexdigest()
    return f"call_{digest[:24]}"


def tool_call(
    *,
    call_id: Any,
    wire_name: str,
    raw: Any,
    index: int,
    position: int,
    names: ToolNames,
    specs: Mapping[str, ToolSpec],
    format: str,
) -> ToolCall:
    """A neutral ToolCall: registry name, arguments mapped back from the projection."""
    name = names.tool(wire_name)
    arguments, text = parse_arguments(raw)
    spec = specs.get(name)
    if arguments is not None and spec is not None:
        arguments = restore_arguments(format, spec.parameters, arguments)
    ident = call_id if isinstance(call_id, str) and call_id else None
    return ToolCall(
        id=ident or stable_call_id(position, index, name, text),
        name=name,
        arguments=arguments,
        raw_arguments=text,
    )


def sent_arguments(call: ToolCall) -> str:
    """The arguments text to send back in the conversation history (what the model wrote)."""
    if call.raw_arguments.strip():
        return call.raw_arguments
    return json.dumps(call.arguments or {}, ensure_ascii=False)


def system_text(messages: Sequence[Message]) -> str:
    """Every system message, joined (vendors that take the system prompt apart)."""
    return "\n\n".join(m.content for m in messages if m.role == "system" and m.content)


# what a malformed answer raises while a parser walks it
_UNREADABLE = (ValueError, KeyError, IndexError, TypeError, AttributeError)


def exchange(
    model_id: str,
    send: Callable[[], str],
    api_error: type[Exception],
    parse: Callable[[dict[str, Any]], Turn],
) -> Turn:
    """Send one request and read the answer's JSON as a Turn.

    Args:
        model_id: names the model in errors.
        send: makes the request and returns the answer's raw text.
        api_error: what the vendor's SDK raises when it refuses or fails (after its retries).
        parse: the wire format's reader of the decoded answer.

    Raises:
        ProviderError: ``api`` when ``send`` failed, ``protocol`` when the answer is unreadable.
    """
    try:
        text = send()
    except api_error as exc:
        raise ProviderError("api", f"{model_id}: {exc}") from exc
    try:
        return parse(json.loads(text))
    except _UNREADABLE as exc:
        raise ProviderError("protocol", f"{model_id}: unreadable answer: {exc}") from exc
