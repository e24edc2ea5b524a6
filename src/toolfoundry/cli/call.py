"""``toolfoundry call NAME --args JSON``: call a registered tool."""

from __future__ import annotations

import json
import sys

import click

from toolfoundry.cli.options import emit, json_args, json_option, open_foundry, store_options


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
    if as_json:
        emit(result.to_dict())
    else:
        for line in result.logs:
            click.echo(line, err=True)
        if result.error is None:
            value = result.value
            click.echo(
                value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
            )
        else:
            click.echo(f"error ({result.error.kind.value}): {result.error.message}", err=True)
            for p in result.error.problems:
                click.echo(f"  {p.path}: {p.message}", err=True)
    sys.exit(0 if result.ok else 1)
