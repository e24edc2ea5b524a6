"""One argparse parser level -> JSON Schema properties, and JSON values -> argv tokens.

Each visible destination (``dest``) of a parser becomes one :class:`ArgumentSlot`: its
property schema, whether it is required, and how a JSON value turns back into the argv a
shell user would type. The slot is the only place that knows both directions, so the
schema and the parser cannot disagree about what a value means.
"""

from __future__ import annotations

import argparse
import enum
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolfoundry.declare.errors import DeclarationError

# argparse treats a bare "--" as the end-of-options marker wherever it appears, and drops it
# from option values (Python 3.11), so no shell user can pass it as a value either.
NOT_DOUBLE_DASH = "^(?!--$)"
_PROPERTY_NAME = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
_NEVER_PARAMETERS = (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
_CONST_FAMILY = (argparse._StoreConstAction,)  # includes store_true / store_false


class Encoding(enum.Enum):
    """How a JSON value becomes argv tokens."""

    VALUE = "value"  # one value: --opt=v, or a positional token
    VALUES = "values"  # nargs N/*/+: --opt v1 v2, or positional tokens
    FLAG = "flag"  # true -> the flag (store_true, store_const, append_const)
    NEGATED_FLAG = "negated_flag"  # false -> the flag (store_false)
    BOOLEAN_OPTIONAL = "boolean_optional"  # true -> --x, false -> --no-x
    CHOICE_FLAGS = "choice_flags"  # several flags share a dest: value -> the flag storing it
    COUNT = "count"  # n -> the flag n times
    REPEATED = "repeated"  # append/extend: one occurrence per array item


@dataclass(frozen=True)
class ArgumentSlot:
    """One JSON property and the argparse action(s) behind it."""

    name: str
    actions: tuple[argparse.Action, ...]
    encoding: Encoding
    schema: dict[str, Any]
    required: bool
    grouped: bool = False  # each item of a REPEATED slot is itself a list of values

    @property
    def action(self) -> argparse.Action:
        return self.actions[0]

    @property
    def positional(self) -> bool:
        return not self.action.option_strings

    @property
    def option(self) -> str:
        """The option string used in argv: the first long form, else the first one."""
        strings = self.action.option_strings
        long_forms = [s for s in strings if len(s) > 2 and s[0] == s[1]]
        return (long_forms or list(strings))[0]

    def tokens(self, value: Any, prefix_chars: str) -> list[str]:
        """The argv tokens a shell user would type for ``value`` (positionals excluded)."""
        enc = self.encoding
        if enc is Encoding.FLAG:
            return [self.option] if value else []
        if enc is Encoding.NEGATED_FLAG:
            return [] if value else [self.option]
        if enc is Encoding.BOOLEAN_OPTIONAL:
            strings = self.action.option_strings
            positive = [s for s in strings if not s.startswith("--no-")]
            negative = [s for s in strings if s not in positive]
            return [positive[0] if value else negative[0]]
        if enc is Encoding.COUNT:
            return [self.option] * int(value)
        if enc is Encoding.CHOICE_FLAGS:
            for action in self.actions:
                if _same_json(action.const, value):
                    return [_option_of(action)]
            return []  # the value is the default: no flag
        if enc is Encoding.REPEATED:
            if isinstance(self.action, argparse._AppendConstAction):
                return [o for item in value for o in self._const_flag(item)]
            out: list[str] = []
            for item in value:
                out.extend(self._occurrence(item if self.grouped else [item]))
            return out
        return self._occurrence(value if enc is Encoding.VALUES else [value])

    def positional_tokens(self, value: Any) -> list[str]:
        """Tokens for a positional slot."""
        if self.encoding is Encoding.VALUES:
            return [token(v, self.action) for v in value]
        return [token(value, self.action)]

    def _occurrence(self, values: Sequence[Any]) -> list[str]:
        if len(values) == 1 and self.action.nargs in (None, "?"):
            return [f"{self.option}={token(values[0], self.action)}"]
        return [self.option, *(token(v, self.action) for v in values)]

    def _const_flag(self, item: Any) -> list[str]:
        return [_option_of(a) for a in self.actions if _same_json(a.const, item)][:1]


def token(value: Any, action: argparse.Action) -> str:
    """One value as the string argparse's ``type=`` callable will receive."""
    if action.type is bool:
        return "1" if value else ""  # bool("") is the only way to get False from type=bool
    if isinstance(value, bool):
        return str(value)
    return value if isinstance(value, str) else json.dumps(value)


def _option_of(action: argparse.Action) -> str:
    strings = action.option_strings
    long_forms = [s for s in strings if len(s) > 2 and s[0] == s[1]]
    return (long_forms or list(strings))[0]


def _same_json(a: Any, b: Any) -> bool:
    return type(a) is type(b) and bool(a == b)


def to_json(value: Any) -> tuple[bool, Any]:
    """(True, json_value) when ``value`` has an honest JSON form, else (False, None)."""
    if isinstance(value, enum.Enum):
        value = value.value
    elif isinstance(value, os.PathLike):
        value = os.fspath(value)
    elif isinstance(value, tuple):
        value = list(value)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False, None
    return True, value


def parser_slots(parser: argparse.ArgumentParser, *, leaf: bool) -> list[ArgumentSlot]:
    """The slots of one parser level, in declaration order.

    Args:
        parser: the parser level.
        leaf: whether this level is the command itself (its positionals may follow ``--``).
    """
    by_dest: dict[str, list[argparse.Action]] = {}
    greedy = False  # after a '*'/'+' positional, argparse never fills a later '?'/'*' one
    for action in parser._actions:
        if isinstance(action, _NEVER_PARAMETERS) or action.dest == argparse.SUPPRESS:
            continue
        if not action.option_strings:
            if greedy and action.nargs in ("?", "*", argparse.REMAINDER):
                continue
            greedy = greedy or action.nargs in ("*", "+")
        elif not leaf and action.nargs in ("*", "+"):
            raise DeclarationError(
                f"{parser.prog}: option {_label(action)} takes nargs={action.nargs!r} before a "
                "subcommand, which would swallow the subcommand's name; move it to the "
                "subcommands or give it a fixed nargs"
            )
        if action.help == argparse.SUPPRESS:
            if action.required:
                raise DeclarationError(
                    f"{parser.prog}: argument {_label(action)} is required but hidden "
                    "(help=SUPPRESS), so no caller could ever supply it; unhide it"
                )
            continue
        by_dest.setdefault(action.dest, []).append(action)
    slots = []
    for dest, actions in by_dest.items():
        notes: dict[str, str] = {}
        slot = _slot(parser, dest, actions, leaf, notes)
        if notes:
            text = " ".join(filter(None, [slot.schema.pop("description", ""), *notes.values()]))
            schema = {"description": text, **slot.schema}
            slot.schema.clear()
            slot.schema.update(schema)
        slots.append(slot)
    return slots


def _label(action: argparse.Action) -> str:
    return "/".join(action.option_strings) or str(action.metavar or action.dest)


def _slot(
    parser: argparse.ArgumentParser,
    dest: str,
    actions: list[argparse.Action],
    leaf: bool,
    notes: dict[str, str],
) -> ArgumentSlot:
    if not _PROPERTY_NAME.fullmatch(dest):
        raise DeclarationError(
            f"{parser.prog}: argument {_label(actions[0])} stores into {dest!r}, which is not "
            "a portable parameter name (letters, digits, '_', '.', '-'; at most 64); set dest="
        )
    if len(actions) > 1:
        return _shared_dest(parser, dest, actions)
    action = actions[0]
    multi_optional = bool(action.option_strings) and action.nargs not in (None, "?")
    parent_positional = not leaf and not action.option_strings
    restrict = _leading_prefix(parser) if multi_optional or parent_positional else NOT_DOUBLE_DASH
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        flag_true = isinstance(action, argparse._StoreTrueAction)
        schema = _described(parser, action, {"type": "boolean"})
        schema["default"] = bool(action.default) if action.default is not None else not flag_true
        encoding = Encoding.FLAG if flag_true else Encoding.NEGATED_FLAG
        return ArgumentSlot(dest, (action,), encoding, schema, False)
    if isinstance(action, argparse._StoreConstAction | argparse._AppendConstAction):
        notes[dest] = f"true passes {_option_of(action)} (which stores {action.const!r})."
        schema = _described(parser, action, {"type": "boolean", "default": False})
        return ArgumentSlot(dest, (action,), Encoding.FLAG, schema, False)
    if isinstance(action, argparse.BooleanOptionalAction):
        schema = _described(parser, action, {"type": "boolean"})
        _put_default(schema, action, parser)
        return ArgumentSlot(dest, (action,), Encoding.BOOLEAN_OPTIONAL, schema, action.required)
    if isinstance(action, argparse._CountAction):
        schema = _described(parser, action, {"type": "integer", "minimum": 0})
        if isinstance(action.default, int) and action.default:
            notes[dest] = f"Each occurrence adds 1 to the default {action.default}."
        else:
            schema["default"] = 0
        return ArgumentSlot(dest, (action,), Encoding.COUNT, schema, action.required)
    if isinstance(action, argparse._AppendAction):  # append and extend
        return _repeated(parser, dest, action, restrict, notes)
    if action.nargs == 0:  # a custom Action used as a switch
        schema = _described(parser, action, {"type": "boolean", "default": False})
        return ArgumentSlot(dest, (action,), Encoding.FLAG, schema, action.required)
    return _store(parser, dest, action, restrict, notes)


def _store(
    parser: argparse.ArgumentParser,
    dest: str,
    action: argparse.Action,
    restrict: str,
    notes: dict[str, str],
) -> ArgumentSlot:
    if action.option_strings and action.nargs == argparse.REMAINDER:
        raise DeclarationError(f"{parser.prog}: option {_label(action)} uses nargs=REMAINDER")
    item = value_schema(parser, action, restrict, notes)
    if action.nargs in (None, "?"):
        schema, encoding = item, Encoding.VALUE
    else:
        schema, encoding = _array(action.nargs, item), Encoding.VALUES
    schema = _described(parser, action, schema)
    _put_default(schema, action, parser)
    if action.option_strings:
        required = bool(action.required)
    else:
        required = action.nargs not in ("?", "*", argparse.REMAINDER)
    return ArgumentSlot(dest, (action,), encoding, schema, required)


def _repeated(
    parser: argparse.ArgumentParser,
    dest: str,
    action: argparse.Action,
    restrict: str,
    notes: dict[str, str],
) -> ArgumentSlot:
    if not action.option_strings:
        raise DeclarationError(f"{parser.prog}: positional {_label(action)} cannot append")
    extend = isinstance(action, argparse._ExtendAction)
    item = value_schema(parser, action, restrict, notes)
    grouped = action.nargs not in (None, "?")
    if extend and action.nargs is None:
        if action.type not in (None, str):
            raise DeclarationError(
                f"{parser.prog}: {_label(action)} uses action='extend' without nargs on a "
                "non-string type, which argparse cannot store; add nargs='+'"
            )
        notes[dest] = "argparse splits each value into its characters (extend without nargs)."
    if extend and action.nargs in ("*", "+"):
        # one occurrence carries the whole list, as a shell user would type it
        schema = _described(parser, action, _array("+", item))
        _put_default(schema, action, parser)
        return ArgumentSlot(dest, (action,), Encoding.VALUES, schema, action.required)
    items = _array(action.nargs, item) if grouped else item
    schema = _described(parser, action, {"type": "array", "items": items})
    if action.required:
        schema["minItems"] = 1
    ok, default = to_json(action.default)
    if ok and action.default is not None:
        schema["default"] = default
        notes[dest] = f"Given values are added after the default {default!r}."
    return ArgumentSlot(dest, (action,), Encoding.REPEATED, schema, action.required, grouped)


def _shared_dest(
    parser: argparse.ArgumentParser, dest: str, actions: list[argparse.Action]
) -> ArgumentSlot:
    first = actions[0]
    consts = [to_json(a.const) for a in actions]
    if all(isinstance(a, argparse._AppendConstAction) for a in actions):
        values = [v for ok, v in consts if ok]
        items = _enum_schema(values)
        schema: dict[str, Any] = {"type": "array", "items": items}
        schema = _described(parser, first, schema, actions)
        return ArgumentSlot(dest, tuple(actions), Encoding.REPEATED, schema, False)
    if not all(isinstance(a, _CONST_FAMILY) for a in actions) or not all(ok for ok, _ in consts):
        labels = ", ".join(_label(a) for a in actions)
        raise DeclarationError(
            f"{parser.prog}: arguments {labels} all store into {dest!r}; only flags that "
            "store JSON constants may share a dest (give the others distinct dest=)"
        )
    values = [v for _, v in consts]
    ok, default = to_json(first.default)
    if ok and first.default is not None and not any(_same_json(default, v) for v in values):
        values.append(default)
    schema = _enum_schema(values)
    if ok and first.default is not None:
        schema["default"] = default
    schema = _described(parser, first, schema, actions)
    required = any(a.required for a in actions)
    return ArgumentSlot(dest, tuple(actions), Encoding.CHOICE_FLAGS, schema, required)


def _enum_schema(values: list[Any]) -> dict[str, Any]:
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


def _array(nargs: Any, item: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "array", "items": item}
    if nargs == "+":
        out["minItems"] = 1
    elif isinstance(nargs, int):
        out["minItems"] = out["maxItems"] = nargs
    return out


def _leading_prefix(parser: argparse.ArgumentParser) -> str:
    # a separate token that starts with a prefix char would be read as an option
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
                f"{parser.prog}: choice {choice!r} of {_label(action)} can never be chosen: "
                "no argv text converts to it through type="
            )
        values.append(value)
    return _enum_schema(values)


def converter(parser: argparse.ArgumentParser, action: argparse.Action) -> Any:
    """The ``type=`` callable argparse applies to each value (None for plain strings)."""
    if action.type is None:
        return None
    return parser._registry_get("type", action.type, action.type)


def _put_default(
    schema: dict[str, Any], action: argparse.Action, parser: argparse.ArgumentParser
) -> None:
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
                f"{parser.prog}: default {default!r} of {_label(action)} is refused by its "
                f"own type=: {exc}"
            ) from exc
        # a custom type's parameter is its text; int/float/bool parameters are JSON values
        if convert in (int, float, bool):
            default = converted
    ok, value = to_json(default)
    if ok:
        schema["default"] = value


def _described(
    parser: argparse.ArgumentParser,
    action: argparse.Action,
    schema: dict[str, Any],
    actions: Sequence[argparse.Action] = (),
) -> dict[str, Any]:
    texts = [help_text(parser, a) for a in (actions or [action])]
    text = " ".join(t for t in texts if t)
    return {"description": text, **schema} if text else schema


def help_text(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The action's help, expanded exactly as ``parser.format_help`` would expand it."""
    if action.help is None or action.help == argparse.SUPPRESS:
        return ""
    formatter = parser._get_formatter()
    try:
        text: str = formatter._expand_help(action)
    except (KeyError, TypeError, ValueError) as exc:
        raise DeclarationError(
            f"{parser.prog}: help of {_label(action)} cannot be expanded: {exc!r}"
        ) from exc
    return tidy(text, raw=isinstance(formatter, argparse.RawTextHelpFormatter))


def tidy(text: str, *, raw: bool) -> str:
    """Whitespace as argparse's formatter shows it: collapsed, unless a Raw formatter."""
    if raw:
        return "\n".join(line.rstrip() for line in text.strip().splitlines())
    return " ".join(text.split())
