"""``toolfoundry call NAME --args JSON``: call a registered tool."""

from __future__ import annotations

import sys

import click

from toolfoundry.cli.options import (
    json_args,
    json_option,
    open_foundry,
    print_result,
    store_options,
)


@click.command()
@click.argument("name")
@click.option(
    "--args", "args_json", default="{}", metavar="JSON", help="Arguments as a JSON object."
)
@click.option(
    "--version", "version", type=int, default=None, help="Call this version, not the current one."
)
@store_options
@json_option
def call(
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
    args = json_args(args_json)
    with open_foundry(db, config_path) as fd:
        result = fd.call(name, args, version=version)
    print_result(result, as_json, plain_text=True)
    sys.exit(0 if result.ok else 1)
