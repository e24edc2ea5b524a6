"""The one JSON gate: every JSON value that enters the host is decoded or checked here, and
every JSON text that leaves it is encoded here.

Values come from places the host does not control: a tool's result, log and error (out of the
sandbox), a draft, a call's arguments, a client's request. Each passes :func:`decode` (text or
bytes) or :func:`check` (a Python value from an in-process caller) under explicit
:class:`JsonLimits`, and is refused with one error type, :class:`InvalidJson`, whose problems
are located by JSON path. The rules, the same at every crossing:

- **Size**: at most ``max_bytes`` of UTF-8.
- **Depth**: at most ``max_depth`` nested arrays and objects, measured without recursion, so a
  value nested 100,000 deep is a located refusal, never a ``RecursionError`` here or in any
  later consumer (jsonschema, pydantic, ``json.dumps``).
- **Numbers**: finite as an IEEE-754 double, the range every JSON peer shares (RFC 8259 §6):
  no ``NaN``/``Infinity`` literals, no ``1e999``, no integer beyond 1.8e308 (so never Python's
  4300-digit ``ValueError``). Integers inside that range stay exact.
- **Unicode**: text must be well-formed. Bytes that are not UTF-8 and strings holding a lone
  surrogate (``"\\ud800"``, as a JSON escape or as a character) are **refused**, located; no
  layer ever stores or passes one on. That is the one rule for drafts, names, tests,
  arguments, results and storage keys. (Text meant only for a reader, such as a log line, is
  shown with the character escaped instead: :func:`toolfoundry.base.display.visible`.)
- Objects keep the last of duplicate keys, as ``JSON.parse`` does.

:func:`encode` writes strict JSON: no NaN or Infinity, control characters, DEL, C1 controls,
bidi overrides and U+2028/U+2029 as ``\\u`` escapes (lossless, and harmless in a terminal),
never a raw lone surrogate (one that reached an output anyway, say from a row stored before
this gate existed, is written as the visible text ``\\ud800``, as a terminal would show it).
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from toolfoundry.base.display import SURROGATES, UNSAFE_CHARACTERS
from toolfoundry.base.problem import Problem

# syntax, too_large, too_deep and encoding (bytes that are not UTF-8) are about the text;
# number, unicode (a lone surrogate) and type are about a value, and located in it
JsonReason = Literal["syntax", "too_large", "too_deep", "encoding", "number", "unicode", "type"]
TEXT_REASONS = frozenset({"syntax", "too_large", "too_deep", "encoding"})

# An integer with more digits than the largest finite double (1.8e308) is out of range.
MAX_INT_DIGITS = 309
MAX_PROBLEMS = 20  # a located refusal lists at most this many problems


@dataclass(frozen=True)
class JsonLimits:
    """Bounds on one decoded JSON document.

    Attributes:
        max_bytes: UTF-8 size of the text.
        max_depth: nested arrays and objects (``[]`` is depth 1, a scalar depth 0). 128 is
            serde_json's default and keeps every later consumer far from Python's recursion
            limit (a recursive ``anyOf`` schema needs ~5 frames per level) and from the MCP
            SDK's own parser limit (200, envelope included).
    """

    max_bytes: int = 8 * 1024 * 1024
    max_depth: int = 128

    def enclosing(self, levels: int = 1) -> JsonLimits:
        """These limits for a document that wraps the limited value ``levels`` deep."""
        return replace(self, max_depth=self.max_depth + levels)


JSON_LIMITS = JsonLimits()


@dataclass(frozen=True)
class JsonProblem:
    """One reason a JSON document was refused, located by a JSON path such as ``$.a[2]``."""

    reason: JsonReason
    path: str
    message: str

    def problem(self) -> Problem:
        """The spec's :class:`Problem` (path and message) for a call error or draft report."""
        return Problem(self.path, self.message)


class InvalidJson(ValueError):
    """A document the gate refused: every problem found (at most :data:`MAX_PROBLEMS`)."""

    def __init__(self, problems: list[JsonProblem] | tuple[JsonProblem, ...]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in self.problems))

    @property
    def reason(self) -> JsonReason:
        """The first problem's reason: ``syntax``, ``too_large``, ``too_deep``, ``encoding``,
        ``number``, ``unicode`` or ``type``."""
        return self.problems[0].reason

    def located(self, prefix: str) -> InvalidJson:
        """The same problems with their paths under ``prefix`` (``$`` becomes ``prefix``)."""
        moved = [replace(p, path=prefix + p.path[1:]) for p in self.problems]
        return InvalidJson(moved)


def decode(data: str | bytes | bytearray | memoryview, limits: JsonLimits = JSON_LIMITS) -> Any:
    """Decode JSON text (or UTF-8 bytes) into a value within ``limits``.

    Raises:
        InvalidJson: the text is not JSON, too large, too deep, holds an out-of-range number
            or text that is not valid Unicode; each problem located.
    """
    ill_formed = False
    if isinstance(data, str):
        text = data
        try:
            raw = text.encode("utf-8")
        except UnicodeEncodeError:
            raw, ill_formed = text.encode("utf-8", "surrogatepass"), True
    else:
        raw = bytes(data)
        text = ""
    if len(raw) > limits.max_bytes:
        size = f"{len(raw)} bytes; the limit is {limits.max_bytes}"
        raise InvalidJson([JsonProblem("too_large", "$", f"the JSON text is {size}")])
    if not text:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            why = f"not valid UTF-8 at byte {exc.start}: {exc.reason}"
            raise InvalidJson([JsonProblem("encoding", "$", why)]) from None
    if _too_deep(raw, limits.max_depth):
        raise InvalidJson([_deep(limits.max_depth, "$")])
    _hooks.refused = False
    try:
        value = _DECODER.decode(text)
    except json.JSONDecodeError as exc:
        why = f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        raise InvalidJson([JsonProblem("syntax", "$", why)]) from None
    except RecursionError:  # unreachable after the depth scan; kept as a second fence
        raise InvalidJson([_deep(limits.max_depth, "$")]) from None
    escapes = b"\\ud" in raw or b"\\uD" in raw  # C-speed: most texts have none
    if ill_formed or _hooks.refused or (escapes and not _encodes_as_utf8(value)):
        found = problems(value, limits)
        if found:
            raise InvalidJson(found)
    return value


def check(value: Any, limits: JsonLimits = JSON_LIMITS) -> None:
    """Check a Python value as if it had been decoded: JSON types only, and the size, depth,
    number and Unicode rules of :func:`decode`. Keys are JSON's as ``json.dumps`` writes
    them (an ``int`` key is its digits).

    Fast path at C speed: the value's JSON text is written and measured (``json.dumps`` refuses
    NaN, infinities, other types and cycles; strict UTF-8 refuses lone surrogates; the depth
    passes and a scan for 309-digit runs do the rest); only a value that fails any of these
    is walked in Python, to locate every problem.

    Raises:
        InvalidJson: every problem found, located.
    """
    _checked_text(value, limits)


@dataclass(frozen=True)
class GatedJson:
    """A value that passed the gate under ``limits``, with its compact JSON text.

    Made by :func:`gated`; :func:`encode_checked` answers one with its text, so a value
    checked at one layer (a call's arguments, before schema validation) is not serialized
    and checked again at the next (the sandbox). Treat ``value`` as frozen: the text is
    what it was when gated.
    """

    value: Any
    text: str
    limits: JsonLimits = JSON_LIMITS


def gated(value: Any, limits: JsonLimits = JSON_LIMITS) -> GatedJson:
    """``value`` checked by the gate, kept with its compact JSON text (one serialization).

    Raises:
        InvalidJson: every problem found, located.
    """
    return GatedJson(value, encode_checked(value, limits), limits)


def encode_checked(value: Any, limits: JsonLimits = JSON_LIMITS) -> str:
    """:func:`check` then compact :func:`encode`, from one serialization of ``value`` (what a
    sandbox does with a call's arguments on every call). A :class:`GatedJson` gated under the
    same limits is answered with its text, unchecked again.

    Raises:
        InvalidJson: every problem found, located.
    """
    if isinstance(value, GatedJson):
        if value.limits == limits:
            return value.text
        value = value.value
    text = _checked_text(value, limits)
    if text is None:  # refused by json.dumps yet nothing located: let encode say why
        return encode(value)
    if _UNSAFE_OUT.search(text) is not None:
        text = _UNSAFE_OUT.sub(_escape_out, text)
    return text


def _checked_text(value: Any, limits: JsonLimits) -> str | None:
    """The compact JSON text of a value that passes the gate (None when json.dumps refused
    it but no problem could be located); raises InvalidJson otherwise."""
    try:
        text = _COMPACT.encode(value)
        raw = text.encode("utf-8")
    except (TypeError, ValueError, RecursionError):  # UnicodeEncodeError is a ValueError
        text, raw = None, None
    if raw is not None:
        if len(raw) > limits.max_bytes:
            size = f"{len(raw)} bytes as JSON; the limit is {limits.max_bytes}"
            raise InvalidJson([JsonProblem("too_large", "$", f"the value is {size}")])
        long_digits = b"0" * MAX_INT_DIGITS in raw.translate(_DIGITS_AS_ZERO)
        if not long_digits and not _too_deep(raw, limits.max_depth):
            return text
    found = problems(value, limits)
    if found:
        raise InvalidJson(found)
    return text


def problems(
    value: Any, limits: JsonLimits = JSON_LIMITS, max_problems: int = MAX_PROBLEMS
) -> list[JsonProblem]:
    """Every way ``value`` breaks the gate's rules (at most ``max_problems``), walked without
    recursion; a container past ``max_depth`` is reported and not entered (so cycles end)."""
    found: list[JsonProblem] = []
    stack: list[tuple[Any, int, _Path]] = [(value, 0, None)]
    while stack and len(found) < max_problems:
        item, depth, where = stack.pop()
        kind = type(item)
        if kind is str or isinstance(item, str):  # a str subclass (StrEnum) encodes as its text
            if _SURROGATE.search(item) is not None:
                found.append(_unicode(item, _render(where), "the string"))
        elif kind is bool or item is None:
            continue
        elif kind is int or kind is float or kind is _Refused or isinstance(item, int | float):
            message = _number_problem(item)
            if message is not None:
                found.append(JsonProblem("number", _render(where), message))
        elif isinstance(item, dict | list | tuple):
            if depth >= limits.max_depth:
                found.append(_deep(limits.max_depth, _render(where)))
                continue
            if isinstance(item, dict):
                for key, child in reversed(item.items()):
                    if not isinstance(key, str | int | float | None):  # what json.dumps takes
                        named = type(key).__name__
                        message = f"JSON has string keys only, not {named} keys"
                        found.append(JsonProblem("type", _render(where), message))
                        continue
                    if isinstance(key, str) and _SURROGATE.search(key) is not None:
                        found.append(_unicode(key, _render(where), "the key"))
                    named_key = key if isinstance(key, str) else json.dumps(key)
                    stack.append((child, depth + 1, (where, named_key)))
            else:
                for index in range(len(item) - 1, -1, -1):
                    stack.append((item[index], depth + 1, (where, index)))
        else:
            message = f"{type(item).__name__} is not a JSON value"
            found.append(JsonProblem("type", _render(where), message))
    return found


def encode(
    value: Any,
    *,
    indent: int | None = None,
    sort_keys: bool = False,
    default: Callable[[Any], Any] | None = None,
    compact: bool = True,
) -> str:
    """Strict JSON text of ``value``, for every transport and every ``--json`` output.

    Compact (``,``/``:``) without ``indent`` unless ``compact`` is false (``, ``/``: ``, the
    stdlib's default, for text a person or a model reads on one line); non-ASCII text kept
    as is, except the characters a terminal or a JavaScript parser would act on (see the
    module docstring).

    Raises:
        InvalidJson: ``value`` is not JSON (NaN, a non-JSON type, nesting past the
            interpreter's limit), located.
    """
    try:
        if indent is None and compact and not sort_keys and default is None:
            text = _COMPACT.encode(value)  # the common case, without a new encoder each time
        else:
            text = json.dumps(
                value,
                ensure_ascii=False,
                allow_nan=False,
                indent=indent,
                sort_keys=sort_keys,
                separators=_separators(indent, compact),
                default=default,
            )
    except (TypeError, ValueError, RecursionError) as exc:
        found = problems(value, JsonLimits(max_depth=2000)) if default is None else []
        raise InvalidJson(found or [JsonProblem("type", "$", str(exc))]) from None
    if _UNSAFE_OUT.search(text) is not None:
        text = _UNSAFE_OUT.sub(_escape_out, text)
    return text


def lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (not valid Unicode), or None."""
    match = _SURROGATE.search(text)
    return None if match is None else match.start()


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate written as the visible escape ``\\ud800``.

    For text that is only shown (a log line, an error message): the encoder writes a lone
    surrogate the same way, so what is kept is what any output would have shown.
    """
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def json_path(parts: list[str | int] | tuple[str | int, ...]) -> str:
    """``["items", 2, "id"]`` -> ``$.items[2].id``; unusual keys bracketed: ``$["a b"]``."""
    out = "$"
    for part in parts:
        out = _step(out, part)
    return out


# ---- internals ----

_Path = tuple[Any, str | int] | None  # (parent path, key), built only when a problem is found
_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_SURROGATE = re.compile(f"[{SURROGATES}]")
_UNSAFE_OUT = re.compile(f"[{UNSAFE_CHARACTERS}]")
_BRACKETS = bytes.maketrans(b"[]{}", b"()()")
_DIGITS_AS_ZERO = bytes.maketrans(
    bytes(range(256)), bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
)
_NOT_STRUCTURE = bytes(set(range(256)) - set(b'"[]{}'))


def _separators(indent: int | None, compact: bool) -> tuple[str, str]:
    if indent is not None:
        return (",", ": ")
    return (",", ":") if compact else (", ", ": ")


def _step(base: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{base}[{key}]"
    if _IDENT.match(key):
        return f"{base}.{key}"
    return f"{base}[{encode(key)}]"


def _render(where: _Path) -> str:
    keys: list[str | int] = []
    while where is not None:
        where, key = where
        keys.append(key)
    ordered = keys[::-1]
    if len(ordered) > 12:  # a path 128 levels deep says less than its ends and its length
        skipped = len(ordered) - 10
        return f"{json_path(ordered[:5])}...({skipped} more){json_path(ordered[-5:])[1:]}"
    return json_path(ordered)


def _encodes_as_utf8(value: Any) -> bool:
    """Whether every string of a decoded value is well-formed: its JSON text written back at C
    speed encodes as strict UTF-8 (a pair of surrogate escapes decoded to one character; a lone
    one stays a surrogate, which UTF-8 cannot encode)."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _deep(limit: int, path: str) -> JsonProblem:
    return JsonProblem("too_deep", path, f"nests deeper than {limit} levels of arrays and objects")


def _unicode(text: str, path: str, what: str) -> JsonProblem:
    at = lone_surrogate_at(text)
    assert at is not None
    code = ord(text[at])
    message = (
        f"{what} holds a lone surrogate U+{code:04X} at character {at}, which is not valid "
        "Unicode text (pair it, or drop it: String.prototype.toWellFormed() does)"
    )
    return JsonProblem("unicode", path, message)


def _number_problem(item: Any) -> str | None:
    if isinstance(item, _Refused):
        literal = item.literal
        if len(literal) > 40:
            literal = f"{literal[:20]}... ({len(literal)} characters)"
        return f"the number {literal} is not a finite double (JSON numbers must be)"
    if isinstance(item, float):
        return None if math.isfinite(item) else f"{item} is not a JSON number"
    if item.bit_length() <= 1000:
        return None
    try:
        float(item)
    except OverflowError:
        return f"an integer of {item.bit_length()} bits is beyond the range of a double"
    return None


def _too_deep(raw: bytes, limit: int) -> bool:
    """Whether ``raw`` nests deeper than ``limit`` levels of arrays and objects.

    Without recursion, in C-speed passes: drop escaped quotes and backslashes, keep only
    quotes and brackets, drop what is between quote pairs, then peel the innermost ``()``
    pairs once per level.
    Exact for valid JSON; for invalid JSON the parser reports the syntax error instead.
    """
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    shape = raw.replace(b"\\\\", b"").replace(b'\\"', b"") if b"\\" in raw else raw
    # Quotes now alternate open, close. Two adjacent ones enclose no bracket, whatever their
    # roles (a close and the next open have only , : and scalars between them): drop them
    # all at once; then drop what lies between the quote pairs left (strings with brackets).
    shape = shape.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in shape:
        shape = b"".join(shape.split(b'"')[::2])
    shape = shape.translate(_BRACKETS)
    level = 0
    while shape:
        if b"(" * (limit + 1 - level) in shape:
            return True  # a run of openers alone reaches past the limit
        peeled = shape.replace(b"()", b"")
        if len(peeled) == len(shape):
            return False  # unbalanced: not JSON, and the parser says where
        shape, level = peeled, level + 1
        if level > limit:
            return True
    return False


class _Refused:
    """A number literal the decoder will refuse, kept in place so its path can be found."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal


class _Hooks(threading.local):
    refused = False


_hooks = _Hooks()


def _parse_int(literal: str) -> Any:
    if len(literal) < MAX_INT_DIGITS:
        return int(literal)
    if len(literal.lstrip("-")) <= MAX_INT_DIGITS:
        number = int(literal)
        if _number_problem(number) is None:
            return number
    _hooks.refused = True
    return _Refused(literal)


def _parse_float(literal: str) -> Any:
    number = float(literal)
    if math.isfinite(number):
        return number
    _hooks.refused = True
    return _Refused(literal)


def _parse_constant(literal: str) -> Any:
    _hooks.refused = True
    return _Refused(literal)


_DECODER = json.JSONDecoder(
    parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant
)
# json.dumps with these options, made once: dumps builds a new encoder on every call (~2 µs,
# the larger part of writing a small value), and the gate writes a few per call
_COMPACT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _escape_out(match: re.Match[str]) -> str:
    code = ord(match.group())
    if 0xD800 <= code <= 0xDFFF:  # as well_formed() writes it: visible text, valid JSON
        return f"\\\\u{code:04x}"
    return f"\\u{code:04x}"
