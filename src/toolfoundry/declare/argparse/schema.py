"""One argparse parser level -> JSON Schema properties (one :class:`ArgumentSlot` per dest)."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Sequence
from typing import Any

from toolfoundry.declare.argparse.slot import ArgumentSlot, Encoding, same_json, to_json
from toolfoundry.declare.argparse.values import (
    NOT_DOUBLE_DASH,
    array_schema,
    enum_schema,
    label,
    leading_prefix,
    put_default,
    value_schema,
)
from toolfoundry.declare.errors import DeclarationError

_PROPERTY_NAME = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
_NEVER_PARAMETERS = (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)
_CONST_FAMILY = (argparse._StoreConstAction,)  # includes store_true / store_false


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
                f"{parser.prog}: option {label(action)} takes nargs={action.nargs!r} before a "
                "subcommand, which would swallow the subcommand's name; move it to the "
                "subcommands or give it a fixed nargs"
            )
        if action.help == argparse.SUPPRESS:
            if action.required:
                raise DeclarationError(
                    f"{parser.prog}: argument {label(action)} is required but hidden "
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


def _slot(
    parser: argparse.ArgumentParser,
    dest: str,
    actions: list[argparse.Action],
    leaf: bool,
    notes: dict[str, str],
) -> ArgumentSlot:
    if not _PROPERTY_NAME.fullmatch(dest):
        raise DeclarationError(
            f"{parser.prog}: argument {label(actions[0])} stores into {dest!r}, which is not "
            "a portable parameter name (letters, digits, '_', '.', '-'; at most 64); set dest="
        )
    if len(actions) > 1:
        return _shared_dest(parser, dest, actions)
    action = actions[0]
    multi_optional = bool(action.option_strings) and action.nargs not in (None, "?")
    parent_positional = not leaf and not action.option_strings
    restrict = leading_prefix(parser) if multi_optional or parent_positional else NOT_DOUBLE_DASH
    if isinstance(action, argparse._StoreTrueAction | argparse._StoreFalseAction):
        flag_true = isinstance(action, argparse._StoreTrueAction)
        schema = _described(parser, action, {"type": "boolean"})
        if action.default is None:
            schema["default"] = not flag_true
        elif action.default is not argparse.SUPPRESS:
            schema["default"] = bool(action.default)
        encoding = Encoding.FLAG if flag_true else Encoding.NEGATED_FLAG
        return ArgumentSlot(dest, (action,), encoding, schema, False)
    if isinstance(action, argparse._StoreConstAction | argparse._AppendConstAction):
        notes[dest] = _const_note(action)
        schema = _described(parser, action, {"type": "boolean", "default": False})
        return ArgumentSlot(dest, (action,), Encoding.FLAG, schema, False)
    if isinstance(action, argparse.BooleanOptionalAction):
        schema = _described(parser, action, {"type": "boolean"})
        put_default(schema, action, parser)
        return ArgumentSlot(dest, (action,), Encoding.BOOLEAN_OPTIONAL, schema, action.required)
    if isinstance(action, argparse._CountAction):
        least = 1 if action.required else 0  # a required flag must appear at least once
        schema = _described(parser, action, {"type": "integer", "minimum": least})
        if isinstance(action.default, int) and action.default:
            notes[dest] = f"Counts up from the default {action.default}."
        elif not action.required:
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
        raise DeclarationError(f"{parser.prog}: option {label(action)} uses nargs=REMAINDER")
    item = value_schema(parser, action, restrict, notes)
    if action.nargs in (None, "?"):
        schema, encoding = item, Encoding.VALUE
    else:
        schema, encoding = array_schema(action.nargs, item), Encoding.VALUES
    schema = _described(parser, action, schema)
    put_default(schema, action, parser)
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
        raise DeclarationError(f"{parser.prog}: positional {label(action)} cannot append")
    extend = isinstance(action, argparse._ExtendAction)
    item = value_schema(parser, action, restrict, notes)
    grouped = action.nargs not in (None, "?")
    if extend and not grouped:
        if action.type not in (None, str):
            raise DeclarationError(
                f"{parser.prog}: {label(action)} uses action='extend' with one value per "
                "occurrence on a non-string type, which argparse cannot store; add nargs='+'"
            )
        notes[dest] = "argparse splits each value into its characters (extend of one value)."
    elif extend and action.nargs not in ("*", "+"):
        notes[dest] = "The groups' values are stored as one flat list."
    ok, default = to_json(action.default)
    if ok and _has_default(action):
        notes["default"] = f"Given values are added after the default {_shown(default)}."
    if extend and action.nargs in ("*", "+"):
        # one occurrence carries the whole list, as a shell user would type it
        schema = _described(parser, action, array_schema("+", item))
        put_default(schema, action, parser)
        return ArgumentSlot(dest, (action,), Encoding.VALUES, schema, action.required)
    items = array_schema(action.nargs, item) if grouped else item
    schema = _described(parser, action, {"type": "array", "items": items})
    if action.required:
        schema["minItems"] = 1
    if ok and _has_default(action):
        schema["default"] = default
    return ArgumentSlot(dest, (action,), Encoding.REPEATED, schema, action.required, grouped)


def _shared_dest(
    parser: argparse.ArgumentParser, dest: str, actions: list[argparse.Action]
) -> ArgumentSlot:
    first = actions[0]
    consts = [to_json(a.const) for a in actions]
    if all(isinstance(a, argparse._AppendConstAction) for a in actions):
        values = [v for ok, v in consts if ok]
        items = enum_schema(values)
        schema: dict[str, Any] = {"type": "array", "items": items}
        schema = _described(parser, first, schema, actions)
        return ArgumentSlot(dest, tuple(actions), Encoding.REPEATED, schema, False)
    if not all(isinstance(a, _CONST_FAMILY) for a in actions) or not all(ok for ok, _ in consts):
        labels = ", ".join(label(a) for a in actions)
        raise DeclarationError(
            f"{parser.prog}: arguments {labels} all store into {dest!r}; only flags that "
            "store JSON constants may share a dest (give the others distinct dest=)"
        )
    values = [v for _, v in consts]
    ok, default = to_json(first.default)
    ok = ok and _has_default(first)
    if ok and not any(same_json(default, v) for v in values):
        values.append(default)
    schema = enum_schema(values)
    if ok:
        schema["default"] = default
    schema = _described(parser, first, schema, actions)
    required = any(a.required for a in actions)
    return ArgumentSlot(dest, tuple(actions), Encoding.CHOICE_FLAGS, schema, required)


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
            f"{parser.prog}: help of {label(action)} cannot be expanded: {exc!r}"
        ) from exc
    return tidy(text, raw=isinstance(formatter, argparse.RawTextHelpFormatter))


def tidy(text: str, *, raw: bool) -> str:
    """Whitespace as argparse's formatter shows it: collapsed, unless a Raw formatter."""
    if raw:
        return "\n".join(line.rstrip() for line in text.strip().splitlines())
    return " ".join(text.split())


def _shown(value: Any) -> str:
    ok, as_json = to_json(value)
    return json.dumps(as_json, ensure_ascii=False) if ok else repr(value)


def _const_note(action: argparse.Action) -> str:
    if isinstance(action, argparse._AppendConstAction):
        return f"true adds {_shown(action.const)} to the list."
    otherwise = f" (otherwise {_shown(action.default)})" if _has_default(action) else ""
    return f"true sets it to {_shown(action.const)}{otherwise}."


def _has_default(action: argparse.Action) -> bool:
    return action.default is not None and action.default is not argparse.SUPPRESS
