"""``toolfoundry describe`` and ``toolfoundry catalog write|check``."""

from __future__ import annotations

import os
from pathlib import Path

import click

from toolfoundry.catalog.drift import (
    DEFAULT_ARTIFACTS,
    OUT_OF_SYNC,
    Artifact,
    artifact_for,
    out_of_sync,
    write,
)
from toolfoundry.catalog.formats import FORMATS, UnknownFormat, render
from toolfoundry.catalog.sources import builtin_specs, installed_specs
from toolfoundry.spec import ToolSpec

_OUT = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="One catalogue file instead of the committed set (docs/catalog.json, docs/SKILL.md, "
    "docs/skills/toolfoundry/SKILL.md).",
)
_FORMAT = click.option(
    "--format",
    "format_",
    type=click.Choice(FORMATS),
    help="Format of --out (default: from its name, *.md -> skill, *.json -> json).",
)


@click.command()
@click.option("--format", "format_", type=click.Choice(FORMATS), default="json", show_default=True)
@click.option(
    "--db",
    default=None,
    metavar="URL",
    help="Registry whose active tools are listed too (default: TOOLFOUNDRY_DB, else "
    "./.toolfoundry when it exists).",
)
def describe(format_: str, db: str | None) -> None:
    """Print the installed tools (built-ins and the registry's active tools) in one format."""
    click.echo(render(format_, installed_specs(_registry_specs(db))), nl=False)


def _registry_specs(db: str | None) -> list[ToolSpec]:
    """Active tools of the named registry, or of ./.toolfoundry's when it exists (never made)."""
    from toolfoundry.registry.engine import DEFAULT_DIR, DEFAULT_FILE

    url = db or os.environ.get("TOOLFOUNDRY_DB")
    if url is None:
        default = Path.cwd() / DEFAULT_DIR / DEFAULT_FILE
        if not default.exists():
            return []
        url = f"sqlite:///{default}"
    from toolfoundry.foundry import Foundry

    with Foundry.open(url) as foundry:
        return foundry.active_specs()


@click.group()
def catalog() -> None:
    """Write or check the committed catalogue of the built-in tools."""


def _artifacts(out: Path | None, format_: str | None) -> tuple[Artifact, ...]:
    if out is None:
        if format_ is not None:
            raise click.UsageError("--format needs --out")
        return DEFAULT_ARTIFACTS
    try:
        return (artifact_for(out, format_),)
    except UnknownFormat as exc:
        raise click.UsageError(str(exc)) from exc


@catalog.command("write")
@_OUT
@_FORMAT
def write_command(out: Path | None, format_: str | None) -> None:
    """Render the catalogue from the code and write it."""
    artifacts = _artifacts(out, format_)
    changed = write(artifacts, builtin_specs())
    for artifact in artifacts:
        state = "wrote" if artifact.path in changed else "unchanged"
        click.echo(f"{state} {artifact.path}")


@catalog.command("check")
@_OUT
@_FORMAT
@click.pass_context
def check_command(ctx: click.Context, out: Path | None, format_: str | None) -> None:
    """Exit 1 when a committed catalogue file differs from the code by any byte."""
    stale = out_of_sync(_artifacts(out, format_), builtin_specs())
    for path in stale:
        click.echo(OUT_OF_SYNC.format(path=path), err=True)
    if stale:
        ctx.exit(1)
