"""Property: the projected JSON Schema and the parser it came from agree on every argument object.

Schema-valid objects parse, and the Namespace holds exactly the JSON values; schema-invalid objects
are refused by the call, and the same argv given to the raw parser is refused too (choices,
exclusive groups) or yields something other than what the JSON says (item counts, a missing
positional, values such as a bare "--" that argparse cannot carry).
"""

from __future__ import annotations

import argparse
import contextlib
import io
from typing import Any

import jsonschema
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolfoundry.declare import from_argparse
from toolfoundry.spec import ErrorKind


def agree() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agree")
    parser.add_argument("-C", dest="directory")
    parser.add_argument("--root-flag", action="store_true")
    sub = parser.add_subparsers()
    go = sub.add_parser("go", help="Every kind of argument.")
    go.add_argument("name")
    go.add_argument("extra", nargs="*")
    go.add_argument("--limit", type=int, default=25)
    go.add_argument("--ratio", type=float)
    go.add_argument("--sort", choices=["hot", "new", "top"], default="hot")
    go.add_argument("--level", type=int, choices=range(1, 6))
    go.add_argument("--label")
    go.add_argument("--point", nargs=2, type=int)
    go.add_argument("--words", nargs="+")
    go.add_argument("--tag", action="append")
    go.add_argument("--dry-run", action="store_true")
    go.add_argument("--no-cache", dest="cache", action="store_false")
    go.add_argument("--color", action=argparse.BooleanOptionalAction)
    go.add_argument("-v", "--verbose", action="count", default=0)
    go.add_argument("--json", dest="format", action="store_const", const="json")
    go.add_argument("--csv", dest="format", action="store_const", const="csv")
    speed = go.add_mutually_exclusive_group()
    speed.add_argument("--fast", action="store_true")
    speed.add_argument("--slow", action="store_true")
    return parser


PARSER = agree()
[COMMAND] = from_argparse(PARSER)
SCHEMA = COMMAND.spec.parameters
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

text = st.text(max_size=8)
junk = st.one_of(st.none(), st.booleans(), st.integers(-3, 9), st.floats(-2, 2), text)
ints = st.integers(-(10**6), 10**6)
VALUES: dict[str, st.SearchStrategy[Any]] = {
    "directory": text,
    "root_flag": st.booleans(),
    "name": text,
    "extra": st.lists(text, max_size=3),
    "limit": ints,
    "ratio": st.one_of(ints, st.floats(allow_nan=False, allow_infinity=False)),
    "sort": st.sampled_from(["hot", "new", "top", "rising"]),
    "level": st.integers(0, 6),
    "label": text,
    "point": st.lists(ints, max_size=3),
    "words": st.lists(text, max_size=3),
    "tag": st.lists(text, max_size=3),
    "dry_run": st.booleans(),
    "cache": st.booleans(),
    "color": st.booleans(),
    "verbose": st.integers(-1, 4),
    "format": st.sampled_from(["json", "csv", "xml"]),
    "fast": st.booleans(),
    "slow": st.booleans(),
}


def plus() -> argparse.ArgumentParser:
    """A second shape: '+' options, an optional positional, grouped appends, type=bool."""
    parser = argparse.ArgumentParser(prog="plus", prefix_chars="-+")
    parser.add_argument("first", nargs="?")
    parser.add_argument("+x", type=int)
    parser.add_argument("--pairs", action="append", nargs=2)
    parser.add_argument("--fill", type=bool)
    parser.add_argument("--pick", type=int, choices=[1, 2, 3])
    parser.add_argument("--many", nargs="*", type=float)
    parser.add_argument("--opt", nargs="?")
    return parser


PLUS_PARSER = plus()
[PLUS] = from_argparse(PLUS_PARSER)
PLUS_VALIDATOR = jsonschema.Draft202012Validator(PLUS.spec.parameters)
PLUS_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "first": text,
    "x": ints,
    "pairs": st.lists(st.lists(text, max_size=3), max_size=3),
    "fill": st.booleans(),
    "pick": st.integers(0, 4),
    "many": st.lists(st.floats(-1e6, 1e6), max_size=3),
    "opt": text,
}


@st.composite
def argument_objects(
    draw: st.DrawFn, values: dict[str, st.SearchStrategy[Any]] = VALUES, required: str = "name"
) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(sorted(values)), unique=True))
    if required and draw(st.integers(0, 9)):  # mostly keep the required positional
        names = sorted({*names, required})
    out = {}
    for name in names:
        odd = draw(st.integers(0, 19)) == 0  # now and then a value of the wrong shape
        out[name] = draw(junk if odd else values[name])
    if draw(st.integers(0, 29)) == 0:
        out["unknown"] = 1
    return out


def expected_namespace(arguments: dict[str, Any]) -> argparse.Namespace:
    """What the parser must hold: its defaults, overridden by each JSON value as given."""
    expected = vars(PARSER.parse_args(["go", "--", "n"]))
    for key, value in arguments.items():
        if key in ("tag", "extra") and value == []:
            continue  # an empty repeatable list is the same as leaving it out
        expected[key] = value
    return argparse.Namespace(**expected)


def raw_parse(
    argv: list[str], parser: argparse.ArgumentParser = PARSER
) -> argparse.Namespace | None:
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return parser.parse_args(argv)
        except SystemExit:
            return None


TEXTUAL = {"enum", "exclusive", "minItems", "maxItems", "required", "pattern"}


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(argument_objects())
def test_schema_and_parser_agree(arguments: dict[str, Any]) -> None:
    schema_errors = list(VALIDATOR.iter_errors(arguments))
    exclusive = bool(arguments.get("fast")) and bool(arguments.get("slow"))
    result = COMMAND.call(arguments)  # no handler: a valid call reaches the handler check
    if not schema_errors and not exclusive:
        assert COMMAND.parse(arguments) == expected_namespace(arguments)
        assert result.error is not None
        assert result.error.kind is ErrorKind.RUNTIME_ERROR  # got past validation and parsing
        return
    assert result.error is not None
    assert result.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert result.error.problems
    checked = {e.validator for e in schema_errors} | ({"exclusive"} if exclusive else set())
    if "unknown" in arguments or not checked <= TEXTUAL:
        return  # a value of the wrong JSON type has no argv form to compare
    argv = COMMAND.to_argv(arguments)
    if all(e.validator == "enum" and list(e.path) == ["sort"] for e in schema_errors):
        assert raw_parse(argv) is None  # argparse checks choices= and exclusive groups itself
    # too many or too few items, a missing positional, a value argparse cannot carry: a shell
    # user typing the same argv is refused or gets something other than what the JSON says
    assert raw_parse(argv) != expected_namespace(arguments)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(argument_objects(PLUS_VALUES, ""))
def test_schema_and_parser_agree_on_a_plus_prefixed_parser(arguments: dict[str, Any]) -> None:
    errors = list(PLUS_VALIDATOR.iter_errors(arguments))
    result = PLUS.call(arguments)
    expected = vars(PLUS_PARSER.parse_args([]))
    expected.update({k: v for k, v in arguments.items() if not (k == "pairs" and v == [])})
    if not errors:
        assert PLUS.parse(arguments) == argparse.Namespace(**expected)
        assert result.error is not None
        assert result.error.kind is ErrorKind.RUNTIME_ERROR  # got past validation and parsing
        return
    assert result.error is not None
    assert result.error.kind is ErrorKind.INVALID_ARGUMENTS
    if "unknown" in arguments or not {e.validator for e in errors} <= TEXTUAL:
        return
    argv = PLUS.to_argv(arguments)
    if all(e.validator == "enum" for e in errors):
        assert raw_parse(argv, PLUS_PARSER) is None
    assert raw_parse(argv, PLUS_PARSER) != argparse.Namespace(**expected)
