"""Table-driven: argparse parsers -> exact ToolSpecs (name, group, level, description, schema)."""

from __future__ import annotations

import argparse
import enum
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from toolfoundry.declare import ArgparseCommand, DeclarationError, from_argparse
from toolfoundry.spec import DeclaredTool, Level

NO_DD = "^(?!--$)"  # a bare "--" can never reach a value through argparse
NO_DASH = "^(?![\\-].)"  # a separate token starting with '-' would be read as an option
S = {"type": "string", "pattern": NO_DD}


def obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def d(text: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"description": text, **schema}


def board() -> argparse.ArgumentParser:
    """The article's example: a subcommand with a positional, choices, a default and type=int."""
    parser = argparse.ArgumentParser(prog="board")
    commands = parser.add_subparsers()
    posts = commands.add_parser("posts", help="Query a public board's feed")
    posts.add_argument("board")
    posts.add_argument("--sort", choices=("hot", "new", "top", "rising"), default="hot")
    posts.add_argument("--limit", type=int, default=25, help="At most %(default)s posts.")
    return parser


BOARD = [
    (
        "board_posts",
        "board",
        "primitive",
        "Query a public board's feed",
        obj(
            {
                "board": S,
                "sort": {
                    "type": "string",
                    "enum": ["hot", "new", "top", "rising"],
                    "default": "hot",
                },
                "limit": d("At most 25 posts.", {"type": "integer", "default": 25}),
            },
            ["board"],
        ),
    )
]


def lone() -> argparse.ArgumentParser:
    """No subparsers: one command named after prog (path and .py dropped), description expanded."""
    parser = argparse.ArgumentParser(
        prog="/usr/bin/fetch.py",
        description="""Fetch a URL.

        %(prog)s   follows   redirects.""",
    )
    parser.add_argument("url", help="Where to go.")
    parser.add_argument("--timeout", type=float, default="2.5", help="Seconds (%(default)s).")
    parser.add_argument("--version", action="version", version="1.0")
    return parser


LONE = [
    (
        "fetch",
        None,
        "primitive",
        "Fetch a URL. /usr/bin/fetch.py follows redirects.",
        obj(
            {
                "url": d("Where to go.", S),
                "timeout": d("Seconds (2.5).", {"type": "number", "default": 2.5}),
            },
            ["url"],
        ),
    )
]


def booleans() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sync", description="Sync two folders.")
    parser.add_argument("--dry-run", action="store_true", help="Show what would change.")
    parser.add_argument("--no-delete", dest="delete", action="store_false")
    parser.add_argument("--color", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--cache", action=argparse.BooleanOptionalAction, help="Use the cache.")
    return parser


BOOLEANS = [
    (
        "sync",
        None,
        "primitive",
        "Sync two folders.",
        obj(
            {
                "dry_run": d("Show what would change.", {"type": "boolean", "default": False}),
                "delete": {"type": "boolean", "default": True},
                "color": {"type": "boolean", "default": True},
                "cache": d("Use the cache.", {"type": "boolean"}),
            }
        ),
    )
]


def counts() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="log", description="Show the log.")
    parser.add_argument("-v", "--verbose", action="count", help="More detail.")
    parser.add_argument("-q", action="count", default=2)
    return parser


COUNTS = [
    (
        "log",
        None,
        "primitive",
        "Show the log.",
        obj(
            {
                "verbose": d("More detail.", {"type": "integer", "minimum": 0, "default": 0}),
                "q": d("Counts up from the default 2.", {"type": "integer", "minimum": 0}),
            }
        ),
    )
]


def nargs() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cp", description="Copy files.")
    parser.add_argument("sources", nargs="+", help="Files to copy.")
    parser.add_argument("target", nargs="?", default=".")  # never filled: sources is greedy
    parser.add_argument("--point", nargs=2, type=float)
    parser.add_argument("--exclude", nargs="*", default=[])
    parser.add_argument("--one", nargs=1, type=int)
    return parser


NARGS = [
    (
        "cp",
        None,
        "primitive",
        "Copy files.",
        obj(
            {
                "sources": d("Files to copy.", {"type": "array", "items": S, "minItems": 1}),
                "point": {
                    "type": "array",
                    "items": {"type": "number"},
                    "minItems": 2,
                    "maxItems": 2,
                },
                "exclude": {
                    "type": "array",
                    "items": {"type": "string", "pattern": NO_DASH},
                    "default": [],
                },
                "one": {
                    "type": "array",
                    "items": {"type": "integer"},
                    "minItems": 1,
                    "maxItems": 1,
                },
            },
            ["sources"],
        ),
    )
]


def appends() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="build", description="Build it.")
    parser.add_argument("-D", "--define", action="append", help="NAME=VALUE, repeatable.")
    parser.add_argument("--size", action="append", nargs=2, type=int)
    parser.add_argument("--tags", action="extend", nargs="+")
    parser.add_argument("--lib", action="append", default=["core"])
    parser.add_argument("--strict", action="append_const", const="strict", dest="modes")
    return parser


APPENDS = [
    (
        "build",
        None,
        "primitive",
        "Build it.",
        obj(
            {
                "define": d("NAME=VALUE, repeatable.", {"type": "array", "items": S}),
                "size": {
                    "type": "array",
                    "items": {
                        "type": "array",
                        "items": {"type": "integer"},
                        "minItems": 2,
                        "maxItems": 2,
                    },
                },
                "tags": {
                    "type": "array",
                    "items": {"type": "string", "pattern": NO_DASH},
                    "minItems": 1,
                },
                "lib": d(
                    'Given values are added after the default ["core"].',
                    {"type": "array", "items": S, "default": ["core"]},
                ),
                "modes": d(
                    'true adds "strict" to the list.',
                    {"type": "boolean", "default": False},
                ),
            }
        ),
    )
]


def consts() -> argparse.ArgumentParser:
    """Flags sharing a dest become one enum; a lone store_const is a boolean."""
    parser = argparse.ArgumentParser(prog="report", description="Print a report.")
    parser.add_argument("--json", dest="format", action="store_const", const="json")
    parser.add_argument("--csv", dest="format", action="store_const", const="csv")
    parser.set_defaults(format="text")
    parser.add_argument("--fast", action="store_const", const=10, default=1, help="Go fast.")
    parser.add_argument("--mode-a", dest="modes", action="append_const", const="a")
    parser.add_argument("--mode-b", dest="modes", action="append_const", const="b")
    return parser


CONSTS = [
    (
        "report",
        None,
        "primitive",
        "Print a report.",
        obj(
            {
                "format": {"type": "string", "enum": ["json", "csv", "text"], "default": "text"},
                "fast": d(
                    "Go fast. true sets it to 10 (otherwise 1).",
                    {"type": "boolean", "default": False},
                ),
                "modes": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
            }
        ),
    )
]


def exclusive() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="export", description="Export the data.")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true")
    out.add_argument("--csv", action="store_true")
    src = parser.add_mutually_exclusive_group(required=True)
    src.add_argument("--file")
    src.add_argument("--url")
    parser.add_argument("--token", required=True, help="API token.")
    return parser


EXCLUSIVE = [
    (
        "export",
        None,
        "primitive",
        "Export the data.\n\nAt most one of: json, csv. Exactly one of: file, url.",
        obj(
            {
                "json": {"type": "boolean", "default": False},
                "csv": {"type": "boolean", "default": False},
                "file": S,
                "url": S,
                "token": d("API token.", S),
            },
            ["token"],
        ),
    )
]


def hidden() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="deploy", description="Deploy a release.")
    parser.add_argument("--dry-run", action="store_true", help="Plan only.")
    parser.add_argument("--debug-token", help=argparse.SUPPRESS)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--env", choices=["staging", "prod"])
    group.add_argument("--internal", help=argparse.SUPPRESS)
    return parser


HIDDEN = [
    (
        "deploy",
        None,
        "primitive",
        "Deploy a release.",
        obj(
            {
                "dry_run": d("Plan only.", {"type": "boolean", "default": False}),
                "env": {"type": "string", "enum": ["staging", "prod"]},
            },
            ["env"],
        ),
    )
]


def positive_int(text: str) -> int:
    """A whole number above zero."""
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not above zero")
    return value


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def types() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="paint", description="Paint things.")
    parser.add_argument("--count", type=positive_int, default="3", help="How many.")
    parser.add_argument("--out", type=Path, default=Path("out.png"))
    parser.add_argument("--log", type=argparse.FileType("w"))
    parser.add_argument("--fill", type=bool)
    parser.add_argument("--color", type=Color, default=Color.RED)
    parser.add_argument("--level", type=int, choices=range(1, 6), help="One of %(choices)s.")
    parser.add_argument("--ratio", type=float, choices=[0.5, 1.0, 2.0])
    return parser


TYPES = [
    (
        "paint",
        None,
        "primitive",
        "Paint things.",
        obj(
            {
                "count": d(
                    "How many. The text must be accepted by positive_int: A whole number "
                    "above zero.",
                    {"type": "string", "pattern": NO_DD, "default": "3"},
                ),
                "out": d(
                    "The text must be accepted by Path.",
                    {"type": "string", "pattern": NO_DD, "default": "out.png"},
                ),
                "log": d(
                    "A file path, or '-' for standard input/output.",
                    {"type": "string", "pattern": NO_DD},
                ),
                "fill": {"type": "boolean"},
                "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                "level": d(
                    "One of 1, 2, 3, 4, 5.", {"type": "integer", "minimum": 1, "maximum": 5}
                ),
                "ratio": {"type": "number", "enum": [0.5, 1.0, 2.0]},
            }
        ),
    )
]


def defaults_formatter() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="resize",
        description="Resize\n  an image.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--width", type=int, default=80, help="Width in pixels.")
    parser.add_argument("--keep", action="store_true", help="Keep the ratio.")
    return parser


DEFAULTS_FORMATTER = [
    (
        "resize",
        None,
        "primitive",
        "Resize an image.",
        obj(
            {
                "width": d("Width in pixels. (default: 80)", {"type": "integer", "default": 80}),
                "keep": d(
                    "Keep the ratio. (default: False)", {"type": "boolean", "default": False}
                ),
            }
        ),
    )
]


def raw_formatter() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="table",
        description="Render a table.\n\n  Rows come from stdin.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--sep", default=",", help="Column   separator.")
    return parser


RAW_FORMATTER = [
    (
        "table",
        None,
        "primitive",
        "Render a table.\n\n  Rows come from stdin.",
        obj({"sep": d("Column separator.", {**S, "default": ","})}),
    )
]


def nested() -> argparse.ArgumentParser:
    """Two levels of subcommands, aliases, a hidden command, a shadowed parent option."""
    parser = argparse.ArgumentParser(prog="git")
    parser.add_argument("-C", dest="directory", help="Run as if started in DIR.")
    parser.add_argument("--quiet", action="store_true")
    top = parser.add_subparsers()
    remote = top.add_parser("remote", help="Manage remotes.")
    remotes = remote.add_subparsers()
    add = remotes.add_parser("add", aliases=["a"], help="Add a remote %(prog)s.")
    add.add_argument("name")
    add.add_argument("url")
    add.add_argument("--quiet", type=int, default=0, help="Quietness.")
    remotes.add_parser("prune", help=argparse.SUPPRESS)
    status = top.add_parser("status", description="Show the working tree status.")
    status.add_argument("-s", "--short", action="store_true")
    return parser


NESTED = [
    (
        "git_remote_add",
        "git_remote",
        "primitive",
        "Add a remote git remote.",
        obj(
            {
                "directory": d("Run as if started in DIR.", S),
                "name": S,
                "url": S,
                "quiet": d("Quietness.", {"type": "integer", "default": 0}),
            },
            ["name", "url"],
        ),
    ),
    (
        "git_status",
        "git",
        "primitive",
        "Show the working tree status.",
        obj(
            {
                "directory": d("Run as if started in DIR.", S),
                "quiet": {"type": "boolean", "default": False},
                "short": {"type": "boolean", "default": False},
            }
        ),
    ),
]


def workflow() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ads")
    sub = parser.add_subparsers()
    pipe = sub.add_parser("creative-pipeline", help="Research, brief and preflight in order.")
    pipe.add_argument("brand")
    pipe.set_defaults(_command_level="workflow")
    top = sub.add_parser("top-ads", help="List the top ads.")
    top.add_argument("--limit", type=int, default=10)
    return parser


WORKFLOW = [
    (
        "ads_creative-pipeline",
        "ads",
        "workflow",
        "Research, brief and preflight in order.",
        obj({"brand": S}, ["brand"]),
    ),
    (
        "ads_top-ads",
        "ads",
        "primitive",
        "List the top ads.",
        obj({"limit": {"type": "integer", "default": 10}}),
    ),
]


def sanitised() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="my tool")
    sub = parser.add_subparsers()
    sub.add_parser("2fa", help="Two-factor codes.")
    sub.add_parser("show.all", description="Show everything.")
    sub.add_parser("plain")
    return parser


SANITISED = [
    ("my_tool_2fa", "my_tool", "primitive", "Two-factor codes.", obj({})),
    ("my_tool_show_all", "my_tool", "primitive", "Show everything.", obj({})),
    ("my_tool_plain", "my_tool", "primitive", "The 'my tool plain' command.", obj({})),
]


def plus_prefix() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="vim", prefix_chars="-+", description="Edit.")
    parser.add_argument("+line", type=int, help="Jump to a line.")
    parser.add_argument("--words", nargs="+")
    return parser


PLUS_PREFIX = [
    (
        "vim",
        None,
        "primitive",
        "Edit.",
        obj(
            {
                "line": d("Jump to a line.", {"type": "integer"}),
                "words": {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^(?![\\-\\+].)"},
                    "minItems": 1,
                },
            }
        ),
    )
]


def parent_positional() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="svc", description="Services.")
    parser.add_argument("host", help="Host to talk to.")
    sub = parser.add_subparsers()
    restart = sub.add_parser("restart", help="Restart one service.")
    restart.add_argument("service")
    restart.add_argument("--from", dest="source", help="Copy state from %(dest)s.")
    return parser


PARENT_POSITIONAL = [
    (
        "svc_restart",
        "svc",
        "primitive",
        "Restart one service.",
        obj(
            {
                "host": d("Host to talk to.", {"type": "string", "pattern": NO_DASH}),
                "service": S,
                "source": d("Copy state from source.", S),
            },
            ["host", "service"],
        ),
    )
]


def help_and_description() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="db")
    sub = parser.add_subparsers()
    sub.add_parser(
        "migrate",
        help="Apply migrations.",
        description="Apply migrations up to the newest revision.",
    )
    sub.add_parser(
        "dump", help="Dump the schema.", description="Writes SQL for every table to stdout."
    )
    return parser


HELP_AND_DESCRIPTION = [
    ("db_migrate", "db", "primitive", "Apply migrations up to the newest revision.", obj({})),
    (
        "db_dump",
        "db",
        "primitive",
        "Dump the schema.\n\nWrites SQL for every table to stdout.",
        obj({}),
    ),
]


CASES: list[tuple[str, Callable[[], argparse.ArgumentParser], list[tuple[Any, ...]]]] = [
    ("board", board, BOARD),
    ("lone", lone, LONE),
    ("booleans", booleans, BOOLEANS),
    ("counts", counts, COUNTS),
    ("nargs", nargs, NARGS),
    ("appends", appends, APPENDS),
    ("consts", consts, CONSTS),
    ("exclusive", exclusive, EXCLUSIVE),
    ("hidden", hidden, HIDDEN),
    ("types", types, TYPES),
    ("defaults_formatter", defaults_formatter, DEFAULTS_FORMATTER),
    ("raw_formatter", raw_formatter, RAW_FORMATTER),
    ("nested", nested, NESTED),
    ("workflow", workflow, WORKFLOW),
    ("sanitised", sanitised, SANITISED),
    ("plus_prefix", plus_prefix, PLUS_PREFIX),
    ("parent_positional", parent_positional, PARENT_POSITIONAL),
    ("help_and_description", help_and_description, HELP_AND_DESCRIPTION),
]


@pytest.mark.parametrize(("build", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_parser_becomes_exact_specs(
    build: Callable[[], argparse.ArgumentParser], expected: list[tuple[Any, ...]]
) -> None:
    commands = from_argparse(build())
    got = [
        (c.spec.name, c.spec.group, c.spec.level.value, c.spec.description, c.spec.parameters)
        for c in commands
    ]
    assert got == expected


@pytest.mark.parametrize("build", [c[1] for c in CASES], ids=[c[0] for c in CASES])
def test_every_schema_is_valid_json_schema_2020_12(
    build: Callable[[], argparse.ArgumentParser],
) -> None:
    for command in from_argparse(build()):
        schema = command.spec.parameters
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["additionalProperties"] is False
        assert not {"anyOf", "oneOf", "allOf"} & set(schema)
        assert isinstance(command, DeclaredTool)
        assert isinstance(command, ArgparseCommand)


def test_help_and_version_never_appear() -> None:
    for command in from_argparse(lone()) + from_argparse(nested()):
        assert not {"help", "h", "version"} & set(command.spec.parameters["properties"])


def test_name_group_and_capabilities_overrides() -> None:
    [command] = from_argparse(
        board(), name="forum", group="social", capabilities={"network": ["example.com"]}
    )
    assert command.spec.name == "forum_posts"
    assert command.spec.group == "social"
    assert command.spec.capabilities.network == ("example.com",)
    assert command.spec.level is Level.PRIMITIVE


def _hidden_required() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bad")
    parser.add_argument("--key", required=True, help=argparse.SUPPRESS)
    return parser


def _clashing_dest() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bad")
    parser.add_argument("--a", dest="x")
    parser.add_argument("--b", dest="x", type=int)
    return parser


def _unreachable_choice() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bad")
    parser.add_argument("--n", choices=[1, 2])  # no type=int: "1" never equals 1
    return parser


def _bad_default() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bad")
    parser.add_argument("--n", type=int, default="many")
    return parser


def _extend_int() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bad")
    parser.add_argument("--n", action="extend", type=int)
    return parser


def _bad_dest() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bad")
    parser.add_argument("input file")
    return parser


def _bad_level() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bad")
    parser.set_defaults(_command_level="pipeline")
    return parser


def _colliding_names() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bad")
    sub = parser.add_subparsers()
    sub.add_parser("a.b")
    sub.add_parser("a_b")
    return parser


def _nameless() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog="???")


def _too_long() -> argparse.ArgumentParser:
    return argparse.ArgumentParser(prog="x" * 70)


@pytest.mark.parametrize(
    ("build", "words"),
    [
        (_hidden_required, "required but hidden"),
        (_clashing_dest, "all store into 'x'"),
        (_unreachable_choice, "can never be chosen"),
        (_bad_default, "refused by its own type="),
        (_extend_int, "add nargs='+'"),
        (_bad_dest, "not a portable parameter name"),
        (_bad_level, "_command_level must be"),
        (_colliding_names, "both become the tool name 'bad_a_b'"),
        (_nameless, "pass name="),
        (_too_long, "pass name="),
    ],
)
def test_what_cannot_be_described_honestly_is_refused(
    build: Callable[[], argparse.ArgumentParser], words: str
) -> None:
    with pytest.raises(DeclarationError, match=re.escape(words)):
        from_argparse(build())


def test_not_a_parser_is_refused() -> None:
    with pytest.raises(DeclarationError, match="needs an ArgumentParser"):
        from_argparse("board")  # type: ignore[arg-type]
