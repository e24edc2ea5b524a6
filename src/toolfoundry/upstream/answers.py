"""An upstream's answer to ``tools/call`` as the host takes it: a :class:`CallResult`.

The value is the answer's ``structuredContent`` when the server gives one, else its content: one
text block is that text, several blocks are a list (text blocks as strings, others as their
JSON form without their bytes, which a snippet cannot use: ``{"type": "image", "mimeType":
"image/png", "bytes": 2048}``). Whatever it is passes the JSON gate (depth, numbers, valid
Unicode) under the call's output limit (``output_too_large`` past it) before anyone sees it,
and every form of a credential the host handed this upstream is redacted from it (an echoing
server does not give a snippet its bearer token). An answer marked ``isError`` is a
``runtime_error`` carrying the server's own words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolfoundry.base.json_gate import InvalidJson, JsonLimits, decode, encode_checked
from toolfoundry.sandbox.host.redaction import Redactor
from toolfoundry.spec import CallResult, ErrorKind

MAX_ERROR_CHARS = 2000
_BYTES_FIELDS = ("data", "blob")


def answer_value(structured: Any, content: Sequence[Mapping[str, Any]]) -> Any:
    """The value of a successful answer (see the module doc)."""
    if structured is not None:
        return structured
    blocks = [_block(item) for item in content]
    if not blocks:
        return None
    return blocks[0] if len(blocks) == 1 and isinstance(blocks[0], str) else blocks


def _block(item: Mapping[str, Any]) -> Any:
    if item.get("type") == "text" and isinstance(item.get("text"), str):
        return item["text"]
    out: dict[str, Any] = {}
    for key, value in item.items():
        if key in _BYTES_FIELDS and isinstance(value, str):
            out["bytes"] = len(value) * 3 // 4  # base64
        elif key == "resource" and isinstance(value, Mapping):
            out[key] = _block(value)
        else:
            out[key] = value
    return out


def gated_answer(
    name: str,
    value: Any,
    *,
    output_bytes: int,
    redactor: Redactor | None,
    duration_ms: float,
) -> CallResult:
    """``value`` through the JSON gate and the redactor: a success, or ``output_too_large`` /
    ``invalid_output`` naming the tool."""
    limits = JsonLimits(max_bytes=output_bytes)
    try:
        text = encode_checked(value, limits)
    except InvalidJson as exc:
        kind = ErrorKind.OUTPUT_TOO_LARGE if exc.reason == "too_large" else ErrorKind.INVALID_OUTPUT
        refused = f"{name}: the upstream's answer is refused: {str(exc)[:MAX_ERROR_CHARS]}"
        return CallResult.failure(kind, refused, duration_ms=duration_ms)
    if redactor is not None and redactor.holds_secret(text):
        try:
            value = decode(redactor.redact_text(text), limits)
        except InvalidJson:
            withheld = f"{name}: the upstream's answer held its credential and is withheld"
            return CallResult.failure(ErrorKind.INVALID_OUTPUT, withheld, duration_ms=duration_ms)
    return CallResult.success(value, duration_ms=duration_ms)


def error_text(
    structured: Any, content: Sequence[Mapping[str, Any]], redactor: Redactor | None
) -> str:
    """The words of an ``isError`` answer, cut short, with every credential form redacted."""
    texts = [str(item.get("text")) for item in content if item.get("type") == "text"]
    words = "\n".join(texts) if texts else ""
    if not words and structured is not None:
        try:
            words = encode_checked(structured)
        except InvalidJson:
            words = "(an error the host cannot read)"
    words = words[:MAX_ERROR_CHARS]
    try:
        encode_checked(words)
    except InvalidJson:
        words = words.encode("utf-8", "replace").decode("utf-8")  # lone surrogates become "?"
    return redactor.redact_text(words) if redactor is not None else words
