"""``toolfoundry mcp install CLIENT``: make an MCP client start this installation's server."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from toolfoundry.cli.client_configs import (
    CLIENTS,
    SCOPES,
    ConfigProblem,
    claude_add_command,
    client_file,
    merged,
    serve_entry,
    write_with_backup,
)
from toolfoundry.cli.options import db_option


@click.group("mcp")
def mcp_group() -> None:
    """Connect MCP clients (Claude Desktop, Claude Code, Cursor, VS Code) to toolfoundry."""


@mcp_group.command("install")
@click.argument("client", type=click.Choice(CLIENTS))
@click.option(
    "--scope",
    type=click.Choice(SCOPES),
    default=None,
    help="project: the file in this directory (the default, but for claude-desktop); "
    "user: the one for every project (claude-desktop has only this one).",
)
@click.option("--name", default="toolfoundry", show_default=True, help="The server's name there.")
@db_option(
    "The registry the server uses, written as an absolute URL (default: TOOLFOUNDRY_DB, else "
    "./.toolfoundry/registry.db, made here)."
)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, exists=True),
    default=None,
    help="toolfoundry.toml the server reads (default: ./toolfoundry.toml when present).",
)
@click.option(
    "--print", "print_only", is_flag=True, help="Print the file it would write; write nothing."
)
def install(
    client: str,
    scope: str | None,
    name: str,
    db: str | None,
    config_path: str | None,
    print_only: bool,
) -> None:
    """Write CLIENT's configuration so that it starts `toolfoundry serve` on this registry.

    Absolute paths throughout (a client starts servers without your shell's PATH, from a
    directory of its own); every other entry and key of the file is kept, and the file as it
    was is kept beside it as FILE.DATE-TIME.bak. Restart the client (or reload its MCP
    servers) afterwards.
    """
    scope = scope or ("user" if client == "claude-desktop" else "project")
    cwd = Path.cwd()
    try:
        target = client_file(client, scope, cwd=cwd, home=Path.home())
    except ConfigProblem as exc:
        raise click.UsageError(str(exc)) from None
    args = ["--db", _absolute_url(db, cwd, make=not print_only)]
    config = Path(config_path) if config_path else cwd / "toolfoundry.toml"
    if config_path or config.is_file():
        args += ["--config", str(config.resolve())]
    entry = serve_entry(args)
    try:
        data, changed = merged(target, name, entry)
    except ConfigProblem as exc:
        raise click.ClickException(str(exc)) from None
    same = claude_add_command(scope, name, entry) if client == "claude-code" else None
    if print_only:
        click.echo(f"# {target.path}", err=True)
        click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        if same:
            click.echo(f"# or: {same}", err=True)
        return
    if not changed:
        click.echo(f"toolfoundry: {target.path} already starts {name} this way; nothing written")
        return
    try:
        backup = write_with_backup(target.path, data)
    except OSError as exc:
        raise click.ClickException(f"cannot write {target.path}: {exc.strerror or exc}") from None
    kept = f" (the file as it was: {backup})" if backup else ""
    click.echo(f"toolfoundry: wrote {target.path}{kept}")
    click.echo(f"  {target.client_name} starts: {entry.shown()}")
    if same:
        click.echo(f"  (the same as: {same})")
    click.echo(f"  restart {target.client_name} (or reload its MCP servers) to load it")


def _absolute_url(db: str | None, cwd: Path, *, make: bool) -> str:
    """The registry as an absolute URL: a client starts the server in a folder of its own.

    Raises:
        click.UsageError: a store toolfoundry does not keep a registry in, or a SQLite file
            whose directory does not exist.
    """
    from toolfoundry.registry.sqlite_file import DEFAULT_DIR, DEFAULT_FILE, file_of
    from toolfoundry.registry.store_url import UnsupportedStore, as_store_url

    given = db or os.environ.get("TOOLFOUNDRY_DB")
    if not given:
        directory = cwd / DEFAULT_DIR
        if make:
            directory.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{directory / DEFAULT_FILE}"
    try:
        url = as_store_url(given)
    except UnsupportedStore as exc:
        raise click.UsageError(str(exc)) from None
    path = file_of(url)
    if path is None:
        return url  # PostgreSQL, or a SQLite URL with options: taken as given
    path = (cwd / path.expanduser()).resolve()
    if not path.parent.is_dir():
        raise click.UsageError(
            f"the directory of the SQLite database does not exist: {path.parent} "
            "(create it first, or give another path)"
        )
    return as_store_url(str(path))
