"""Calling argparse commands: JSON -> argv -> the same parser -> Namespace -> handler."""

from __future__ import annotations

import argparse
import asyncio
import enum
import shlex
import sys
from typing import Any

import pytest

from toolfoundry.declare import ArgparseCommand, from_argparse
from toolfoundry.spec import ErrorKind, Problem


def positive_int(text: str) -> int:
    """A whole number above zero."""
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not above zero")
    return value


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def cli() -> argparse.ArgumentParser:
    """One parser exercising every kind of argument, spread over three commands."""
    parser = argparse.ArgumentParser(prog="kit")
    parser.add_argument("-C", dest="directory")
    parser.add_argument("-v", "--verbose", action="count")
    sub = parser.add_subparsers()

    posts = sub.add_parser("posts", help="Query a board.")
    posts.add_argument("board")
    posts.add_argument("--sort", choices=("hot", "new"), default="hot")
    posts.add_argument("--limit", type=int, default=25)
    posts.add_argument("--dry-run", action="store_true")
    posts.add_argument("--no-cache", dest="cache", action="store_false")
    posts.add_argument("--color", action=argparse.BooleanOptionalAction)
    posts.add_argument("--tag", action="append")
    posts.add_argument("--size", action="append", nargs=2, type=int)
    posts.add_argument("--words", action="extend", nargs="+")
    posts.add_argument("--json", dest="format", action="store_const", const="json")
    posts.add_argument("--csv", dest="format", action="store_const", const="csv")
    posts.add_argument("--mode-a", dest="modes", action="append_const", const="a")
    posts.add_argument("--mode-b", dest="modes", action="append_const", const="b")

    copy = sub.add_parser("copy", help="Copy files.")
    copy.add_argument("target")
    copy.add_argument("sources", nargs="+")
    copy.add_argument("--point", nargs=2, type=float)
    copy.add_argument("--exclude", nargs="*")
    copy.add_argument("--count", type=positive_int, default="1")
    copy.add_argument("--fill", type=bool)
    copy.add_argument("--color", type=Color)
    copy.add_argument("--level", type=int, choices=range(1, 6))

    export = sub.add_parser("export", help="Export data.")
    out = export.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--csv", action="store_true")
    source = export.add_mutually_exclusive_group(required=True)
    source.add_argument("--file")
    source.add_argument("--url")
    export.add_argument("--token", required=True)
    return parser


def commands() -> dict[str, ArgparseCommand]:
    return {c.words[-1]: c for c in from_argparse(cli())}


ROUND_TRIPS = [
    ("posts", {"board": "python"}, "posts python"),
    (
        "posts",
        {"board": "python", "sort": "new", "limit": 5, "dry_run": True, "cache": False},
        "posts python --sort new --limit 5 --dry-run --no-cache",
    ),
    ("posts", {"board": "-dash"}, "posts -- -dash"),
    ("posts", {"board": "a b=c é", "limit": -3}, "posts 'a b=c é' --limit -3"),
    ("posts", {"board": "b", "limit": 5.0}, "posts b --limit 5"),
    ("posts", {"board": "b", "color": False}, "posts b --no-color"),
    ("posts", {"board": "b", "color": True}, "posts b --color"),
    ("posts", {"board": "b", "tag": ["x", "-y", ""]}, "posts b --tag x --tag=-y --tag ''"),
    ("posts", {"board": "b", "size": [[1, 2], [3, -4]]}, "posts b --size 1 2 --size 3 -4"),
    ("posts", {"board": "b", "words": ["a", "b"]}, "posts b --words a b"),
    ("posts", {"board": "b", "format": "csv"}, "posts b --csv"),
    ("posts", {"board": "b", "modes": ["b", "a", "b"]}, "posts b --mode-b --mode-a --mode-b"),
    ("posts", {"board": "b", "verbose": 3, "directory": "/tmp"}, "-vvv -C /tmp posts b"),
    ("copy", {"target": "t", "sources": ["a", "b"]}, "copy t a b"),
    ("copy", {"target": "-", "sources": ["a"]}, "copy - a"),
    ("copy", {"target": "--x", "sources": ["-a", "b"]}, "copy -- --x -a b"),
    ("copy", {"target": "t", "sources": ["a"], "point": [1.5, -2]}, "copy t a --point 1.5 -2"),
    (
        "copy",
        {"target": "t", "sources": ["a"], "point": [-1e-7, 2e20]},
        "copy t a --point -0.0000001 2e20",
    ),
    ("copy", {"target": "t", "sources": ["a"], "exclude": []}, "copy t a --exclude"),
    ("copy", {"target": "t", "sources": ["a"], "exclude": ["x", "y"]}, "copy t a --exclude x y"),
    (
        "copy",
        {"target": "t", "sources": ["a"], "count": "7", "level": 5},
        "copy t a --count 7 --level 5",
    ),
    ("copy", {"target": "t", "sources": ["a"], "fill": False}, "copy t a --fill ''"),
    ("copy", {"target": "t", "sources": ["a"], "fill": True}, "copy t a --fill yes"),
    ("copy", {"target": "t", "sources": ["a"], "color": "blue"}, "copy t a --color blue"),
    ("export", {"json": True, "file": "f", "token": "t"}, "export --json --file f --token t"),
    ("export", {"url": "u", "token": "t", "csv": False}, "export --url u --token t"),
]


@pytest.mark.parametrize(("command", "arguments", "shell"), ROUND_TRIPS)
def test_json_gives_the_namespace_a_shell_user_would_get(
    command: str, arguments: dict[str, Any], shell: str
) -> None:
    cmd = commands()[command]
    assert cmd.parse(arguments) == cli().parse_args(shlex.split(shell))


def test_argv_is_what_a_shell_user_types() -> None:
    cmd = commands()["posts"]
    argv = cmd.to_argv({"verbose": 2, "board": "-x", "limit": 5, "tag": ["a"], "format": "json"})
    assert argv == ["--verbose", "--verbose", "posts", "--limit=5", "--tag=a", "--json", "--", "-x"]


def _problems(result: Any) -> list[Problem]:
    assert not result.ok
    assert result.error.kind is ErrorKind.INVALID_ARGUMENTS
    return list(result.error.problems)


def test_every_schema_problem_is_reported_with_its_path() -> None:
    cmd = commands()["posts"]
    result = cmd.call({"limit": "5", "sort": "top", "size": [[1]], "bogus": 1, "tag": "x"})
    paths = [p.path for p in _problems(result)]
    assert paths == ["$.board", "$.bogus", "$.limit", "$.size[0]", "$.sort", "$.tag"]
    messages = {p.path: p.message for p in _problems(result)}
    assert messages["$.board"] == "is required"
    assert "unknown parameter" in messages["$.bogus"]
    assert "'top' is not one of ['hot', 'new']" in messages["$.sort"]


def test_exclusive_groups_are_checked_before_parsing() -> None:
    cmd = commands()["export"]
    problems = _problems(cmd.call({"json": True, "csv": True}))
    assert Problem("$.csv", "not allowed with 'json'") in problems
    assert Problem("$", "exactly one of file, url is required") in problems
    assert Problem("$.token", "is required") in problems
    problems = _problems(cmd.call({"file": "a", "url": "b", "token": "t"}))
    assert problems == [Problem("$.url", "not allowed with 'file'")]


def test_argparse_own_complaints_become_invalid_arguments(
    capsys: pytest.CaptureFixture[str],
) -> None:
    copy = commands()["copy"]
    assert _problems(copy.call({"target": "t", "sources": ["a"], "count": "0"})) == [
        Problem("$.count", "0 is not above zero")
    ]
    assert _problems(copy.call({"target": "t", "sources": ["a"], "count": "many"})) == [
        Problem("$.count", "invalid positive_int value: 'many'")
    ]
    not_an_object: Any = [1, 2]
    assert _problems(copy.call(not_an_object)) == [
        Problem("$", "arguments must be an object, not list")
    ]
    captured = capsys.readouterr()
    assert captured.err == ""
    assert captured.out == ""


def test_parse_rejects_with_every_problem() -> None:
    from toolfoundry.declare.argparse.parser import ArgumentsRejected

    with pytest.raises(ArgumentsRejected) as caught:
        commands()["copy"].parse({"sources": [], "level": 9})
    assert [p.path for p in caught.value.problems] == ["$.level", "$.sources", "$.target"]


def _echo(namespace: argparse.Namespace) -> dict[str, Any]:
    return {k: v for k, v in vars(namespace).items() if not callable(v)}


def test_handler_from_set_defaults_gets_the_namespace() -> None:
    parser = cli()
    posts = parser._subparsers._group_actions[0].choices["posts"]  # type: ignore[union-attr,index]
    posts.set_defaults(func=_echo)
    cmd = {c.words[-1]: c for c in from_argparse(parser)}["posts"]
    result = cmd.call({"board": "python", "limit": 3})
    assert result.ok, result.error
    assert result.value["board"] == "python"
    assert result.value["limit"] == 3
    assert result.value["sort"] == "hot"
    assert result.duration_ms > 0


def test_handler_argument_and_set_defaults_handler() -> None:
    parser = argparse.ArgumentParser(prog="add")
    parser.add_argument("a", type=int)
    parser.add_argument("b", type=int)
    [cmd] = from_argparse(parser, handler=lambda ns: ns.a + ns.b)
    assert cmd.call({"a": 2, "b": -5}).value == -3
    parser.set_defaults(handler=lambda ns: ns.a * ns.b)
    [cmd] = from_argparse(parser)
    assert cmd.call({"a": 2, "b": -5}).value == -10


def _lone(handler: Any) -> ArgparseCommand:
    parser = argparse.ArgumentParser(prog="run")
    parser.add_argument("--n", type=int, default=1)
    [cmd] = from_argparse(parser, handler=handler)
    return cmd


def _explode(namespace: argparse.Namespace) -> None:
    raise RuntimeError(f"boom {namespace.n}")


def test_handler_failures_are_runtime_errors() -> None:
    result = _lone(_explode).call({"n": 4})
    assert result.error is not None
    assert result.error.kind is ErrorKind.RUNTIME_ERROR
    assert result.error.message == "run failed: RuntimeError: boom 4"
    result = _lone(lambda ns: object()).call({})
    assert result.error is not None
    assert result.error.kind is ErrorKind.RUNTIME_ERROR
    assert "not JSON" in result.error.message
    result = _lone(lambda ns: sys.exit(3)).call({})
    assert result.error is not None
    assert result.error.kind is ErrorKind.RUNTIME_ERROR
    assert _lone(lambda ns: sys.exit(0)).call({}).ok


def test_no_handler_is_a_clear_runtime_error() -> None:
    result = _lone(None).call({"n": 2})
    assert result.error is not None
    assert result.error.kind is ErrorKind.RUNTIME_ERROR
    assert "set_defaults(func=...)" in result.error.message


async def _double(namespace: argparse.Namespace) -> int:
    await asyncio.sleep(0)
    return int(namespace.n) * 2


def test_async_and_sync_handlers_through_call_and_acall() -> None:
    assert _lone(_double).call({"n": 4}).value == 8
    assert asyncio.run(_lone(_double).acall({"n": 5})).value == 10
    assert asyncio.run(_lone(lambda ns: ns.n + 1).acall({"n": 5})).value == 6
    bad = asyncio.run(_lone(_double).acall({"n": "x"}))
    assert bad.error is not None
    assert bad.error.kind is ErrorKind.INVALID_ARGUMENTS
    failed = asyncio.run(_lone(_explode).acall({}))
    assert failed.error is not None
    assert failed.error.kind is ErrorKind.RUNTIME_ERROR


def test_the_parser_is_left_untouched() -> None:
    parser = cli()
    before = parser.format_help()
    cmd = {c.words[-1]: c for c in from_argparse(parser)}["posts"]
    cmd.call({"board": "x", "limit": "bad"})
    cmd.call({"board": "x"})
    assert parser.format_help() == before
    assert cmd.parser is parser


def test_exclusive_check_survives_values_of_the_wrong_shape() -> None:
    parser = argparse.ArgumentParser(prog="shape")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-v", action="count")
    group.add_argument("--tags", action="append")
    group.add_argument("item", nargs="?")
    [cmd] = from_argparse(parser, handler=lambda ns: vars(ns))
    problems = _problems(cmd.call({"v": "x", "tags": 3, "item": "a"}))
    assert [p.path for p in problems] == ["$.item", "$.tags", "$.tags", "$.v"]
    assert cmd.call({"item": "a"}).value == {"v": None, "tags": None, "item": "a"}
    assert _problems(cmd.call({"v": 1, "item": "a"})) == [Problem("$.item", "not allowed with 'v'")]


class Upper(argparse.Action):
    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, values.upper())


class Switch(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        setattr(namespace, self.dest, "on")


def test_custom_actions_remainder_and_exit_on_error_false() -> None:
    parser = argparse.ArgumentParser(prog="edge", exit_on_error=False)
    parser.add_argument("--name", action=Upper)
    parser.add_argument("--on", action=Switch)
    parser.add_argument("--hex", type=lambda s: int(s, 16))
    parser.add_argument("cmd")
    parser.add_argument("rest", nargs=argparse.REMAINDER)
    [cmd] = from_argparse(parser, handler=vars)
    args = {"name": "abc", "on": True, "cmd": "ls", "rest": ["-l", "x"], "hex": "ff"}
    assert cmd.call(args).value == {"name": "ABC", "on": "on", "hex": 255, "cmd": "ls",
                                    "rest": ["-l", "x"]}  # fmt: skip
    assert cmd.parse(args) == parser.parse_args(shlex.split("--name abc --on --hex ff ls -l x"))
    assert _problems(cmd.call({"cmd": "ls", "hex": "zz"})) == [
        Problem("$.hex", "invalid <lambda> value: 'zz'")
    ]


def test_values_argparse_cannot_carry_get_plain_messages() -> None:
    problems = _problems(commands()["posts"].call({"board": "--", "words": ["-w"]}))
    assert problems == [
        Problem("$.board", "a bare '--' cannot be passed as a value through argparse"),
        Problem(
            "$.words[0]",
            "a value here cannot start with an option prefix (argparse reads it as an option)",
        ),
    ]


def test_set_defaults_are_inherited_as_the_namespace_inherits_them() -> None:
    parser = argparse.ArgumentParser(prog="ops")
    parser.set_defaults(func=lambda ns: f"root saw {ns.command}", _command_level="workflow")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("deploy", help="Deploy.")
    check = sub.add_parser("check", help="Check.")
    check.set_defaults(func=lambda ns: "check ran", _command_level="primitive")
    deploy, check_cmd = from_argparse(parser)
    assert deploy.spec.level.value == "workflow"
    assert check_cmd.spec.level.value == "primitive"
    assert deploy.call({}).value == "root saw deploy"
    assert check_cmd.call({}).value == "check ran"
    assert "command" not in deploy.spec.parameters["properties"]


def test_sync_call_of_an_async_handler_inside_a_loop_says_use_acall() -> None:
    async def inside() -> Any:
        return _lone(_double).call({"n": 1})

    result = asyncio.run(inside())
    assert result.error is not None
    assert result.error.kind is ErrorKind.RUNTIME_ERROR
    assert "use acall" in result.error.message


def test_suppressed_defaults_and_required_counts() -> None:
    parser = argparse.ArgumentParser(prog="odd")
    parser.add_argument("--on", action="store_true", default=argparse.SUPPRESS)
    parser.add_argument("-v", action="count", required=True)
    [cmd] = from_argparse(parser, handler=vars)
    props = cmd.spec.parameters["properties"]
    assert props["on"] == {"type": "boolean"}
    assert props["v"] == {"type": "integer", "minimum": 1}
    assert cmd.spec.parameters["required"] == ["v"]
    assert cmd.call({"v": 2}).value == {"v": 2}  # 'on' left out: argparse stores nothing
    assert cmd.call({"v": 1, "on": True}).value == {"v": 1, "on": True}
    assert [p.path for p in _problems(cmd.call({"v": 0}))] == ["$.v"]


def test_extend_variants_round_trip_and_say_what_argparse_stores() -> None:
    parser = argparse.ArgumentParser(prog="ext")
    parser.add_argument("--pairs", action="extend", nargs=2)
    parser.add_argument("--letters", action="extend", nargs="?")
    parser.add_argument("--more", action="extend", nargs="+", default=["base"])
    [cmd] = from_argparse(parser, handler=vars)
    props = cmd.spec.parameters["properties"]
    assert props["pairs"]["description"] == "The groups' values are stored as one flat list."
    assert "into its characters" in props["letters"]["description"]
    assert props["more"] == {
        "description": 'Given values are added after the default ["base"].',
        "type": "array",
        "items": {"type": "string", "pattern": "^(?![\\-].)"},
        "minItems": 1,
        "default": ["base"],
    }
    args = {"pairs": [["a", "b"], ["c", "d"]], "letters": ["xy"], "more": ["m"]}
    shell = "--pairs a b --pairs c d --letters xy --more m"
    assert cmd.parse(args) == parser.parse_args(shlex.split(shell))
    assert cmd.call(args).value == {
        "pairs": ["a", "b", "c", "d"],
        "letters": ["x", "y"],
        "more": ["base", "m"],
    }
