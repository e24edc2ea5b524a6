"""Options and the store opening every registry command shares.

One place decides how ``--db`` and ``--config`` are spelled and how a store that cannot be
opened is reported: a configuration problem is a usage error (exit 2), a registry that cannot
be opened is a one-line failure (exit 1), never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from toolfoundry.base.display import visible
from toolfoundry.spec.limits import CALL_LIMIT_BOUNDS, Bound

if TYPE_CHECKING:
    from rich.text import Text

    from toolfoundry.config import Config
    from toolfoundry.foundry import Foundry
    from toolfoundry.registry import RegistryError
    from toolfoundry.spec import CallResult

F = TypeVar("F", bound=Callable[..., Any])


def login_name() -> str:
    """The person at the terminal, the actor of what the CLI does in the registry."""
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "cli"


DB_HELP = (
    "The registry: a SQLite file (PATH or sqlite:///PATH) or postgresql://USER@HOST/DB "
    "(default: TOOLFOUNDRY_DB, else ./.toolfoundry)."
)


def config_option(func: F) -> F:
    """``--config PATH``: the toolfoundry.toml to read."""
    return click.option(
        "--config",
        "config_path",
        type=click.Path(dir_okay=False),
        default=None,
        help="toolfoundry.toml to read (default: ./toolfoundry.toml when present).",
    )(func)


def db_option(help: str = DB_HELP) -> Callable[[F], F]:
    """``--db URL``, with a command's own wording of the default when it differs."""
    return click.option("--db", "db", default=None, metavar="URL", help=help)


def store_options(func: F) -> F:
    """``--db URL`` and ``--config PATH``, shared by every registry command."""
    return db_option()(config_option(func))


def _too_long(value: Any, bound: Bound) -> str | None:
    text = str(value)
    return f"a {len(text)}-character value is not {bound.wanted}" if len(text) > 40 else None


def _checked(bound: Bound, number: Any, fail: Callable[[str], Any]) -> Any:
    problem = bound.problem(number)  # nan passes click's range comparisons; this does not
    if problem is not None:
        fail(problem)
    return number


class BoundedFloat(click.FloatRange):
    """A number a limit accepts (``spec/limits.Bound``): the same check as ``[limits]`` in
    toolfoundry.toml, so ``inf``, ``nan``, a negative or a huge value is a usage error (exit
    2) here too, not an OverflowError deep in a sandbox."""

    def __init__(self, bound: Bound) -> None:
        super().__init__(min=bound.low, max=bound.high, min_open=bound.low_open)
        self.bound = bound

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if (long := _too_long(value, self.bound)) is not None:
            self.fail(long, param, ctx)
        number = super().convert(value, param, ctx)
        return _checked(self.bound, number, lambda m: self.fail(m, param, ctx))


class BoundedInt(click.IntRange):
    """:class:`BoundedFloat` for a whole number (``Bound.integer``)."""

    def __init__(self, bound: Bound) -> None:
        super().__init__(min=int(bound.low), max=int(bound.high), min_open=bound.low_open)
        self.bound = bound

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if (long := _too_long(value, self.bound)) is not None:
            self.fail(long, param, ctx)
        number = super().convert(value, param, ctx)
        return _checked(self.bound, number, lambda m: self.fail(m, param, ctx))


def Bounded(bound: Bound) -> BoundedFloat | BoundedInt:
    """The click type of a limit's flag: its range shown in ``--help``, checked by ``bound``."""
    return BoundedInt(bound) if bound.integer else BoundedFloat(bound)


def Seconds(bound: Bound | None = None) -> BoundedFloat | BoundedInt:
    """A time budget in seconds: the call limits' ``timeout_s`` range unless told another."""
    return Bounded(bound or CALL_LIMIT_BOUNDS["timeout_s"])


def json_option(func: F) -> F:
    """``--json``: machine-readable output."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def emit(data: Any) -> None:
    """Print JSON to stdout, written by the JSON gate's encoder: strict JSON whose control,
    bidi and C1 characters are ``\\u`` escapes, so a terminal shows them and obeys none.

    Raises:
        click.ClickException: ``data`` is not JSON (exit 1, one line, no traceback).
    """
    from toolfoundry.base.json_gate import InvalidJson, encode

    try:
        click.echo(encode(data, indent=2, default=str))
    except InvalidJson as exc:
        raise click.ClickException(f"the output is not JSON: {visible(str(exc))}") from None


def say(text: str, *, err: bool = False) -> None:
    """Print text for a person: every control character shown as its escape (``\\x1b``)."""
    click.echo(visible(text), err=err)


def cell(text: object) -> Text:
    """A rich table cell or line: shown escaped and never read as rich markup (``[bold]``)."""
    from rich.text import Text

    return Text(visible(str(text)))


def markup_safe(text: object) -> str:
    """Text to put inside a rich markup string: shown escaped, its ``[brackets]`` literal."""
    from rich.markup import escape

    return escape(visible(str(text)))


def print_result(result: CallResult, as_json: bool, *, plain_text: bool = False) -> None:
    """Print a call's result: the whole CallResult with ``--json``; else the value on stdout
    (a string as it is with ``plain_text``, anything else as JSON), logs and the error on stderr.
    Every line is shown with its control characters escaped.
    """
    if as_json:
        emit(result.to_dict())
        return
    for line in result.logs:
        say(line, err=True)
    if result.error is None:
        value = result.value
        if plain_text and isinstance(value, str):
            say(value)
        else:
            emit(value)
        return
    say(f"error ({result.error.kind.value}): {result.error.message}", err=True)
    for problem in result.error.problems:
        say(f"  {problem.path}: {problem.message}", err=True)


def fail(exc: RegistryError, as_json: bool) -> NoReturn:
    """Report a registry refusal (as JSON with ``--json``) and exit 1."""
    if as_json:
        emit({"error": {"kind": exc.kind, "message": exc.message}})
    else:
        say(f"error ({exc.kind}): {exc.message}", err=True)
    sys.exit(1)


ARGS_HELP = "Arguments as a JSON object; @FILE reads them from a file, - from stdin."


def json_args(value: str | None) -> Any:
    """The ``--args`` value decoded by the JSON gate (``{}`` when not given): JSON text,
    ``@FILE`` for a file's contents or ``-`` for standard input (what a command line cannot
    hold: past ~128 KB an argument is refused by the operating system).

    Raises:
        click.BadParameter: the text is not JSON, breaks the gate's rules, or the file cannot
            be read (exit 2).
    """
    from toolfoundry.base.json_gate import JSON_LIMITS, InvalidJson, decode

    if value is None:
        return {}
    data: str | bytes = value
    where = ""
    if value == "-" or value.startswith("@"):
        where = " (stdin)" if value == "-" else f" (in {value[1:]})"
        try:
            if value == "-":
                data = sys.stdin.buffer.read(JSON_LIMITS.max_bytes + 1)
            else:
                with open(value[1:], "rb") as source:
                    data = source.read(JSON_LIMITS.max_bytes + 1)
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise click.BadParameter(
                f"cannot read {value[1:]}: {reason}", param_hint="--args"
            ) from None
        if len(data) > JSON_LIMITS.max_bytes:
            limit = f"{JSON_LIMITS.max_bytes} bytes"
            raise click.BadParameter(f"the JSON{where} is larger than {limit}", param_hint="--args")
    try:
        return decode(data)
    except InvalidJson as exc:
        detail = visible(str(exc).removeprefix("$: not valid JSON: "))
        raise click.BadParameter(f"not valid JSON{where}: {detail}", param_hint="--args") from None


def host_port(value: str, option: str = "--http") -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8000`` for IPv6) -> (host, port).

    Raises:
        click.BadParameter: ``value`` is not HOST:PORT with a port in 1..65535.
    """
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise click.BadParameter(
            f"{value!r} is not HOST:PORT (e.g. 127.0.0.1:8765 or [::1]:8765)", param_hint=option
        )
    return host.strip("[]") if host.startswith("[") else host, int(port)


def registry_problem(exc: BaseException) -> str:
    """One line saying why a registry could not be opened (the driver's words, unwrapped)."""
    cause = getattr(exc, "orig", None) or exc
    return " ".join(str(cause).split()) or type(cause).__name__


@contextmanager
def open_foundry(db: str | None, config_path: Config | str | None) -> Iterator[Foundry]:
    """Open the foundry for one command and close it afterwards.

    Raises:
        click.UsageError: the configuration is missing or invalid (exit 2).
        click.ClickException: the registry URL is unusable or the store unreachable (exit 1).
    """
    # imported here so commands without a store (executor, js) never load the registry
    from toolfoundry.config import ConfigError
    from toolfoundry.foundry import Foundry
    from toolfoundry.registry.sqlite_file import DEFAULT_DIR

    default_dir = Path.cwd() / DEFAULT_DIR
    made_here = not default_dir.exists()
    try:
        foundry = Foundry.open(db, config=config_path)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    except Exception as exc:
        # a command that calls a tool on a SQLite file loads no SQLAlchemy, until it fails here
        from toolfoundry.registry.engine import SchemaMismatch, StoreError
        from toolfoundry.registry.store_url import UnsupportedStore

        # ImportError: a known dialect whose driver (or extra) is not installed; OSError: a
        # SQLite directory that does not exist; UnsupportedStore: neither SQLite nor PostgreSQL.
        known = (*StoreError, SchemaMismatch, UnsupportedStore, ImportError, OSError)
        if not isinstance(exc, known):
            raise
        raise click.ClickException(f"cannot open the registry: {registry_problem(exc)}") from None
    if made_here and default_dir.exists():
        click.echo(f"toolfoundry: created {default_dir}{os.sep} for the registry", err=True)
    try:
        yield foundry
    finally:
        foundry.close()
