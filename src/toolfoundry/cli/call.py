"""``toolfoundry call NAME --args JSON``: call a registered tool."""

from __future__ import annotations

import shlex
import sys

import click

from toolfoundry.cli.options import (
    ARGS_HELP,
    json_args,
    json_option,
    login_name,
    open_foundry,
    print_result,
    store_options,
)


@click.command(context_settings={"allow_extra_args": True})
@click.argument("name")
@click.option("--args", "args_json", default="{}", metavar="JSON", help=ARGS_HELP)
@click.option(
    "--version", "version", type=int, default=None, help="Call this version, not the current one."
)
@store_options
@json_option
@click.pass_context
def call(
    ctx: click.Context,
    name: str,
    args_json: str,
    version: int | None,
    db: str | None,
    config_path: str | None,
    as_json: bool,
) -> None:
    """Validate the arguments, run the tool in the sandbox, print the result.

    Exit 0 when the call succeeded, 1 when it failed, 2 on a usage error.
    """
    if ctx.args:
        raise click.UsageError(extra_argument_hint(name, ctx.args))
    args = json_args(args_json)
    with open_foundry(db, config_path) as fd:
        result = fd.call(name, args, version=version, by=login_name())
    print_result(result, as_json, plain_text=True)
    sys.exit(0 if result.ok else 1)


def extra_argument_hint(name: str, extra: list[str]) -> str:
    """What to say of words after the tool's name: its arguments go in ``--args``."""
    given = extra[0]
    if given.lstrip()[:1] in ("{", "["):
        fixed = f"toolfoundry call {shlex.quote(name)} --args {shlex.quote(given)}"
        return f"the tool's arguments go in --args: {fixed}"
    return (
        f"unexpected extra argument {given!r}: call takes one tool name, and the tool's "
        "arguments as JSON in --args (or --args @FILE, or --args - to read stdin)"
    )
