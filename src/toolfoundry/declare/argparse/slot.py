"""One JSON parameter of an argparse command, and how its JSON value becomes argv tokens.

The slot is the only place that knows both directions (schema and argv), so the schema and
the parser cannot disagree about what a value means.
"""

from __future__ import annotations

import argparse
import enum
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any


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
        """The first (usually only) action behind the slot."""
        return self.actions[0]

    @property
    def positional(self) -> bool:
        """Whether the slot is a positional argument."""
        return not self.action.option_strings

    @property
    def option(self) -> str:
        """The option string used in argv."""
        return option_of(self.action)

    def tokens(self, value: Any) -> list[str]:
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
                if same_json(action.const, value):
                    return [option_of(action)]
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
        return [option_of(a) for a in self.actions if same_json(a.const, item)][:1]


def token(value: Any, action: argparse.Action) -> str:
    """One value as the string argparse's ``type=`` callable will receive."""
    if action.type is bool:
        return "1" if value else ""  # bool("") is the only way to get False from type=bool
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and value.is_integer() and action.type is int:
        return str(int(value))  # JSON Schema counts 1.0 as an integer; int("1.0") does not
    if isinstance(value, float) and value < 0 and "e" in repr(value):
        # argparse only takes '-1.5', never '-1.5e-07', as a negative number rather than an option
        return format(Decimal(repr(value)), "f")
    return value if isinstance(value, str) else json.dumps(value)


def option_of(action: argparse.Action) -> str:
    """The option string to put in argv: the first long form, else the first one."""
    strings = action.option_strings
    long_forms = [s for s in strings if len(s) > 2 and s[0] == s[1]]
    return (long_forms or list(strings))[0]


def same_json(a: Any, b: Any) -> bool:
    """Equal and of the same type, so that ``True`` and ``1`` stay different constants."""
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
