"""``toolfoundry create DRAFT.json``: forge a draft and register it."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import click
from rich.console import Console
from rich.text import Text

from toolfoundry.cli.options import (
    cell,
    emit,
    json_option,
    login_name,
    open_foundry,
    store_options,
)
from toolfoundry.forge.testrun import unavailable_error
from toolfoundry.spec import VersionStatus


@click.command()
@click.argument(
    "draft_path", metavar="DRAFT.json", type=click.Path(dir_okay=False, allow_dash=True)
)
@store_options
@json_option
def create(draft_path: str, db: str | None, config_path: str | None, as_json: bool) -> None:
    """Check, test and register a tool draft (exit 0 active or pending, 1 rejected or no
    sandbox to test it in)."""
    if draft_path == "-":
        raw = sys.stdin.buffer.read()
    else:
        try:
            raw = Path(draft_path).read_bytes()
        except OSError as exc:
            raise click.UsageError(f"cannot read {draft_path}: {exc.strerror}") from None
    with open_foundry(db, config_path) as fd:
        result = fd.create_tool(raw, by=login_name())
    unavailable = unavailable_error(result.step)
    if unavailable is not None:  # not a verdict on the draft: one line with the fix
        if as_json:
            emit({"error": unavailable.to_dict()})
        else:
            click.echo(f"error ({unavailable.kind.value}): {unavailable.message}", err=True)
        sys.exit(1)
    if as_json:
        emit(result.to_dict())
    else:
        out = Console(soft_wrap=True)
        where = f" v{result.version}" if result.version else ""
        name = cell(result.name or "?")
        name.stylize("bold")
        out.print(Text.assemble(name, f"{where}: {result.status.value}"), highlight=False)
        if result.step.message:
            out.print(cell(result.step.message), highlight=False)
        for f in result.findings:
            loc = f.path or (f"line {f.line}:{f.column}" if f.line is not None else "")
            out.print(cell(f"  {f.severity} {f.rule} {loc}: {f.message}"), highlight=False)
        for t in result.test_results:
            if not t.passed:
                error = f"{t.error.kind.value}: {t.error.message}" if t.error else ""
                reason = t.reason or error
                out.print(cell(f"  test {t.name} failed: {reason}"), highlight=False)
                if t.diff:  # expected vs got, as --json has it
                    out.print(cell(textwrap.indent(t.diff, "    ")), highlight=False)
        if result.duplicate_of:
            out.print(cell(f"  note: duplicate of {result.duplicate_of}"))
    sys.exit(1 if result.status is VersionStatus.REJECTED else 0)
