"""``toolfoundry describe`` and ``toolfoundry catalog write|check``.

Both list the built-in meta-tools plus the project's own declared tools (``[catalog]`` in
``toolfoundry.toml``, or ``--source``; see :mod:`toolfoundry.project`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from toolfoundry.catalog.drift import OUT_OF_SYNC, Artifact, artifact_for, out_of_sync, write
from toolfoundry.catalog.formats import FORMATS, UnknownFormat, render
from toolfoundry.cli.options import config_option, db_option, open_foundry
from toolfoundry.config import Config, ConfigError, load_config
from toolfoundry.project import Project, installed_specs
from toolfoundry.spec import ToolSpec

F = TypeVar("F", bound=Callable[..., Any])

_OUT = click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    help="One catalogue file instead of the committed set ([catalog] out, default "
    "docs/catalog.json, docs/SKILL.md, docs/skills/toolfoundry/SKILL.md).",
)
_FORMAT = click.option(
    "--format",
    "format_",
    type=click.Choice(FORMATS),
    help="Format of --out (default: from its name, *.md -> skill, *.json -> json, "
    "*.ts -> typescript).",
)


def source_option(func: F) -> F:
    """``--source SOURCE`` (repeatable): the project's tools instead of ``[catalog] sources``."""
    return click.option(
        "--source",
        "sources",
        multiple=True,
        metavar="SOURCE",
        help="Declared tools to use instead of [catalog] sources: pkg.module, "
        "pkg.module:attribute or path/file.py[:attribute] (repeatable).",
    )(func)


def load_project(config: Config | str | None, sources: tuple[str, ...]) -> Project:
    """The project's declared tools; a configuration problem is a usage error (exit 2)."""
    try:
        return Project.load(config, sources=sources or None)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None


@click.command()
@click.option("--format", "format_", type=click.Choice(FORMATS), default="json", show_default=True)
@db_option(
    "Registry whose active tools are listed too (default: TOOLFOUNDRY_DB, else [registry] "
    "url, else ./.toolfoundry when it exists)."
)
@config_option
@source_option
def describe(
    format_: str, db: str | None, config_path: str | None, sources: tuple[str, ...]
) -> None:
    """Print the installed tools (built-ins, the project's declared tools and the registry's
    active tools) in one format."""
    try:
        config = load_config(config_path)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from None
    project = load_project(config, sources)
    # The project's declarations win over registry tools of the same name, as in serve.
    specs = installed_specs([*_registry_specs(db, config), *(t.spec for t in project.tools)])
    click.echo(render(format_, specs), nl=False)


def _registry_specs(db: str | None, config: Config) -> list[ToolSpec]:
    """Active tools of the chosen registry (as every command chooses it), or of
    ./.toolfoundry's when it exists; a registry is never made here."""
    from toolfoundry.registry.sqlite_file import DEFAULT_DIR, DEFAULT_FILE

    url = db or os.environ.get("TOOLFOUNDRY_DB") or config.registry_url
    if url is None:
        default = Path.cwd() / DEFAULT_DIR / DEFAULT_FILE
        if not default.exists():
            return []
        url = f"sqlite:///{default}"
    with open_foundry(url, config) as foundry:
        return foundry.active_specs()


@click.group()
def catalog() -> None:
    """Write or check the committed catalogue: the built-in tools plus the project's own."""


def _artifacts(project: Project, out: Path | None, format_: str | None) -> tuple[Artifact, ...]:
    if out is None:
        if format_ is not None:
            raise click.UsageError("--format needs --out")
        return project.artifacts()
    try:
        return (artifact_for(out, format_),)
    except UnknownFormat as exc:
        raise click.UsageError(str(exc)) from exc


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is under it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@catalog.command("write")
@_OUT
@_FORMAT
@config_option
@source_option
def write_command(
    out: Path | None, format_: str | None, config_path: str | None, sources: tuple[str, ...]
) -> None:
    """Render the catalogue from the code and write it."""
    project = load_project(config_path, sources)
    artifacts = _artifacts(project, out, format_)
    changed = write(artifacts, project.specs())
    for artifact in artifacts:
        state = "wrote" if artifact.path in changed else "unchanged"
        click.echo(f"{state} {_shown(artifact.path)}")


@catalog.command("check")
@_OUT
@_FORMAT
@config_option
@source_option
@click.pass_context
def check_command(
    ctx: click.Context,
    out: Path | None,
    format_: str | None,
    config_path: str | None,
    sources: tuple[str, ...],
) -> None:
    """Exit 1 when a committed catalogue file differs from the code by any byte."""
    project = load_project(config_path, sources)
    stale = out_of_sync(_artifacts(project, out, format_), project.specs())
    for path in stale:
        click.echo(OUT_OF_SYNC.format(path=_shown(path)), err=True)
    if stale:
        ctx.exit(1)
