"""``toolfoundry serve``: the MCP server over stdio, or Streamable HTTP with ``--http``."""

from __future__ import annotations

import logging

import click

from toolfoundry.cli.catalog import load_project, source_option
from toolfoundry.cli.options import host_port, open_foundry, store_options


@click.command()
@click.option(
    "--http",
    "http",
    default=None,
    metavar="HOST:PORT",
    help="Serve Streamable HTTP (MCP at /mcp, review page at /ui) instead of stdio.",
)
@click.option(
    "--token",
    envvar="TOOLFOUNDRY_TOKEN",
    default=None,
    help="Secret clients must send as 'Authorization: Bearer TOKEN'; required off loopback "
    "(default: TOOLFOUNDRY_TOKEN).",
)
@click.option(
    "--poll",
    "poll_s",
    type=click.FloatRange(min=0.05, max=60),
    default=0.5,
    show_default=True,
    help="Seconds between checks of the registry for tool-list changes.",
)
@store_options
@source_option
def serve(
    http: str | None,
    token: str | None,
    poll_s: float,
    db: str | None,
    config_path: str | None,
    sources: tuple[str, ...],
) -> None:
    """Serve the meta-tools, the project's declared tools ([catalog] sources) and the
    registry's active tools to MCP clients.

    Clients are notified (notifications/tools/list_changed) whenever the active set changes,
    including changes made by other processes sharing the database.
    """
    import anyio

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if http is None:
        from toolfoundry.server.mcp_server import serve_stdio

        with open_foundry(db, config_path) as foundry:
            tools = load_project(foundry.config, sources).tools
            anyio.run(lambda: serve_stdio(foundry, poll_interval_s=poll_s, tools=tools))
        return

    host, port = host_port(http)
    from toolfoundry.server.app import InsecureBind, check_bind, create_app

    try:
        check_bind(host, token)
    except InsecureBind as exc:
        raise click.UsageError(str(exc)) from None
    import uvicorn

    with open_foundry(db, config_path) as foundry:
        tools = load_project(foundry.config, sources).tools
        app = create_app(foundry, bind_host=host, token=token, poll_interval_s=poll_s, tools=tools)
        shown = f"[{host}]" if ":" in host else host
        click.echo(f"toolfoundry: MCP at http://{shown}:{port}/mcp", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning", lifespan="on")
