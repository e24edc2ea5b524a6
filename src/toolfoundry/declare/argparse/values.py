"""The schema of one argparse value: from ``choices=`` or ``type=``, and its default."""

from __future__ import annotations

import argparse
import enum
import re
from typing import Any

from toolfoundry.declare.argparse.slot import to_json, token
from toolfoundry.declare.errors import DeclarationError

# argparse treats a bare "--" as the end-of-options marker wherever it appears, and drops it
# from option values (Python 3.11), so no shell user can pass it as a value either.
NOT_DOUBLE_DASH = "^(?!--$)"


def label(action: argparse.Action) -> str:
    """How argparse names an argument in its messages: option strings, or metavar/dest."""
    return "/".join(action.option_strings) or str(action.metavar or action.dest)


def enum_schema(values: list[Any]) -> dict[str, Any]:
    """``enum`` with the JSON type its values share (two booleans are just ``boolean``)."""
    if values and all(isinstance(v, bool) for v in values) and len(set(values)) == 2:
        return {"type": "boolean"}
    out: dict[str, Any] = {}
    kind = _json_type(values)
    if kind:
        out["type"] = kind
    out["enum"] = values
    return out


def _json_type(values: list[Any]) -> str | None:
    if not values:
        return None
    if all(isinstance(v, str) for v in values):
        return "string"
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "integer"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "number"
    return None


def array_schema(nargs: Any, item: dict[str, Any]) -> dict[str, Any]:
    """An array of ``item`` with the item counts ``nargs`` allows."""
    out: dict[str, Any] = {"type": "array", "items": item}
    if nargs == "+":
        out["minItems"] = 1
    elif isinstance(nargs, int):
        out["minItems"] = out["maxItems"] = nargs
    return out


def leading_prefix(parser: argparse.ArgumentParser) -> str:
    """Pattern for a value given as its own token, which argparse reads as an option when it
    starts with a prefix char (a lone "-" is still a value)."""
    return f"^(?![{re.escape(parser.prefix_chars)}].)"


def value_schema(
    parser: argparse.ArgumentParser,
    action: argparse.Action,
    restrict: str,
    notes: dict[str, str],
) -> dict[str, Any]:
    """The schema of one value of ``action``: from ``choices`` when given, else ``type=``."""
    convert = converter(parser, action)
    if action.choices is not None:
        return _choices_schema(parser, action, convert)
    if convert is None or convert is str:
        return {"type": "string", "pattern": restrict}
    if convert is int or convert is float:
        out: dict[str, Any] = {"type": "integer" if convert is int else "number"}
        multi = action.option_strings and action.nargs not in (None, "?")
        if multi and parser._has_negative_number_optionals:
            out["minimum"] = 0  # '-1' would be read as an option of this parser
        return out
    if convert is bool:
        return {"type": "boolean"}
    if isinstance(convert, type) and issubclass(convert, enum.Enum):
        values = [m.value for m in convert]
        if all(isinstance(v, str) for v in values):
            return {"type": "string", "enum": values}
    if isinstance(convert, argparse.FileType):
        notes[action.dest] = "A file path, or '-' for standard input/output."
    else:
        notes[action.dest] = _expects(convert)
    return {"type": "string", "pattern": restrict}


def _expects(convert: Any) -> str:
    name = getattr(convert, "__name__", type(convert).__name__)
    doc = (getattr(convert, "__doc__", None) or "").strip()
    summary = (
        " ".join(doc.split("\n\n")[0].split()) if doc and not isinstance(convert, type) else ""
    )
    text = f"The text must be accepted by {name}"
    return f"{text}: {summary}" if summary else f"{text}."


def _choices_schema(
    parser: argparse.ArgumentParser, action: argparse.Action, convert: Any
) -> dict[str, Any]:
    choices = action.choices
    if isinstance(choices, range) and convert is int and choices.step == 1 and len(choices):
        return {"type": "integer", "minimum": choices.start, "maximum": choices.stop - 1}
    values: list[Any] = []
    for choice in choices:  # type: ignore[union-attr]
        ok, value = to_json(choice)
        text = token(value, action) if ok else None
        try:
            reachable = ok and (convert(text) if callable(convert) else text) == choice
        except (TypeError, ValueError, argparse.ArgumentTypeError):
            reachable = False
        if not reachable:
            raise DeclarationError(
                f"{parser.prog}: choice {choice!r} of {label(action)} can never be chosen: "
                "no argv text converts to it through type="
            )
        values.append(value)
    return enum_schema(values)


def converter(parser: argparse.ArgumentParser, action: argparse.Action) -> Any:
    """The ``type=`` callable argparse applies to each value (None for plain strings)."""
    if action.type is None:
        return None
    return parser._registry_get("type", action.type, action.type)


def put_default(
    schema: dict[str, Any], action: argparse.Action, parser: argparse.ArgumentParser
) -> None:
    """Set ``schema["default"]`` to what argparse stores when the argument is left out."""
    default = action.default
    if default is None or default is argparse.SUPPRESS:
        return
    convert = converter(parser, action)
    if isinstance(default, str) and callable(convert):
        # argparse passes a string default through type= when the argument is not given
        try:
            converted = convert(default)
        except (TypeError, ValueError, argparse.ArgumentTypeError) as exc:
            raise DeclarationError(
                f"{parser.prog}: default {default!r} of {label(action)} is refused by its "
                f"own type=: {exc}"
            ) from exc
        # a custom type's parameter is its text; int/float/bool parameters are JSON values
        if convert in (int, float, bool):
            default = converted
    ok, value = to_json(default)
    if ok:
        schema["default"] = value
