"""``toolfoundry serve``: the MCP server over stdio, or Streamable HTTP with ``--http``."""

from __future__ import annotations

import logging
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

import click

from toolfoundry.base.collector import gc_paused
from toolfoundry.base.extras import requires_extra
from toolfoundry.cli.catalog import load_project, source_option
from toolfoundry.cli.options import Bounded, host_port, open_foundry, store_options
from toolfoundry.cli.preflight import listen, require_sandbox
from toolfoundry.server.mcp.surface import SURFACES
from toolfoundry.spec.limits import LIST_PAGE_BOUND, LIST_PAGE_SIZE

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry
    from toolfoundry.foundry.review_schedule import ReviewSchedule


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
    help="Seconds between checks of the registry for tool-list changes (SQLite; on "
    "PostgreSQL changes are notified, and this is the poll while the notification "
    "connection reconnects).",
)
@click.option(
    "--page-size",
    type=Bounded(LIST_PAGE_BOUND),
    default=LIST_PAGE_SIZE,
    show_default=True,
    help="Entries per MCP tools/list page, and tools (two resources each) per resources/list "
    "page; clients follow nextCursor for the rest.",
)
@click.option(
    "--surface",
    type=click.Choice(SURFACES),
    default="full",
    show_default=True,
    help="full: list every active tool; compact: list only the meta-tools (tools are found "
    "with search_tools and called with call_tool or run_js), the same few tokens at any "
    "library size.",
)
@store_options
@source_option
def serve(
    http: str | None,
    token: str | None,
    poll_s: float,
    page_size: int,
    surface: str,
    db: str | None,
    config_path: str | None,
    sources: tuple[str, ...],
) -> None:
    """Serve the meta-tools, the project's declared tools ([catalog] sources) and the
    registry's active tools to MCP clients.

    Clients are notified (notifications/tools/list_changed) whenever the active set changes,
    including changes made by other processes sharing the database.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    require_sandbox()  # a server whose every create_tool would fail does not start
    if http is None:
        with ExitStack() as serving:
            # the SDK's import and the server's set-up, to the first read
            with gc_paused(freeze=True):
                with requires_extra("server", "toolfoundry serve"):
                    import anyio

                    from toolfoundry.server.mcp.server import build_mcp_server, run_stdio

                foundry = serving.enter_context(open_foundry(db, config_path))
                serving.enter_context(_following(foundry, config_path))
                serving.enter_context(_reviewing(foundry))
                server = build_mcp_server(
                    foundry,
                    poll_interval_s=poll_s,
                    tools=load_project(foundry.config, sources).tools,
                    page_size=page_size,
                    surface=surface,
                )
            anyio.run(run_stdio, server)
        return

    host, port = host_port(http)
    with gc_paused(freeze=True), requires_extra("server", "toolfoundry serve --http"):
        import uvicorn

        from toolfoundry.server.app import MCP_PATH, InsecureBind, check_bind, create_app

    try:
        check_bind(host, token)
    except InsecureBind as exc:
        raise click.UsageError(str(exc)) from None
    sock = listen(host, port)  # bound first: a busy port is one line, before any announcement
    with ExitStack() as serving:
        with gc_paused(freeze=True):
            foundry = serving.enter_context(open_foundry(db, config_path))
            serving.enter_context(_following(foundry, config_path))
            # reviews start once the server has announced itself
            schedule = serving.enter_context(_reviewing(foundry, start=False))
            app = create_app(
                foundry,
                bind_host=host,
                token=token,
                poll_interval_s=poll_s,
                tools=load_project(foundry.config, sources).tools,
                page_size=page_size,
                surface=surface,
            )
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        base = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
        announce = [
            f"toolfoundry: MCP at {base}{MCP_PATH}",
            f"toolfoundry: review page at {base}/ui/",
            "toolfoundry: "
            + (
                "clients send 'Authorization: Bearer <token>' (--token / TOOLFOUNDRY_TOKEN); "
                f"people open {base}/ui/?token=<token> once"
                if token
                else "no token, loopback only (--token or TOOLFOUNDRY_TOKEN require one)"
            ),
        ]
        _serve_then_announce(config, sock, announce, then=schedule.start)


@contextmanager
def _following(foundry: Foundry, config_path: str | None) -> Iterator[None]:
    """While serving, reload toolfoundry.toml when it changes or on SIGHUP (POSIX)."""
    from toolfoundry.foundry.config_reload import ConfigReloader

    def report(line: str) -> None:
        click.echo(f"toolfoundry: {line}", err=True)

    reloader = ConfigReloader(foundry, config_path, report).start()
    hup = getattr(signal, "SIGHUP", None)  # POSIX only; a handler needs the main thread
    if threading.current_thread() is not threading.main_thread():
        hup = None
    previous = signal.signal(hup, lambda *_: reloader.request()) if hup is not None else None
    try:
        yield
    finally:
        if hup is not None:
            signal.signal(hup, previous if previous is not None else signal.SIG_DFL)
        reloader.stop()


@contextmanager
def _reviewing(foundry: Foundry, *, start: bool = True) -> Iterator[ReviewSchedule]:
    """While serving, review the library when due (foundry/review_schedule.py, ``[review]``);
    started here, or by the caller when ``start`` is false."""
    from toolfoundry.foundry.review_schedule import ReviewSchedule

    schedule = ReviewSchedule(foundry, lambda line: click.echo(f"toolfoundry: {line}", err=True))
    if start:
        schedule.start()
    try:
        yield schedule
    finally:
        schedule.stop()


def _serve_then_announce(
    config: Any, sock: socket.socket, lines: list[str], *, then: Callable[[], object]
) -> None:
    """Run uvicorn on ``sock``; print ``lines`` once it accepts requests (lifespan done),
    then call ``then``."""
    import uvicorn

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if not self.should_exit:
                for line in lines:
                    click.echo(line, err=True)
                then()

    AnnouncingServer(config).run(sockets=[sock])
