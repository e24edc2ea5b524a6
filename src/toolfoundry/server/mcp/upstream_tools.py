"""The upstream servers' tools on toolfoundry's own MCP server.

By default a client reaches them through code mode (``run_js``'s ``tools.UPSTREAM.TOOL``),
``search_tools``, ``show_tool`` and ``call_tool``, which keeps the surface small. With ``[serve]
expose_upstream = true`` every upstream tool that may run now (its policy allows it, or a person
approved its current schema) is listed too, under ``UPSTREAM.TOOL``, with the upstream's own
schemas and annotations, for clients without code mode: :func:`exposed_entries`.

:func:`watch_upstreams` starts the upstream connections with the server and tells it when what
they offer changed (a server's ``list_changed``, a reconnect, an approval given or withdrawn),
so clients hear ``notifications/tools/list_changed`` (and ``resources/list_changed``: the
``tools.d.ts`` resource types them too).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread

from toolfoundry.foundry import Foundry

WATCH_INTERVAL_S = 1.0


def exposed_entries(foundry: Foundry) -> list[dict[str, Any]]:
    """The ``tools/list`` entries of the upstream tools that may run now (blocking)."""
    entries = []
    for entry in foundry.upstream_tools():
        if not entry.standing.callable:
            continue
        tool = entry.tool
        listed: dict[str, Any] = {
            "name": tool.name,
            "description": tool.spec().description,
            "inputSchema": tool.input_schema,
            "annotations": dict(tool.annotations),
        }
        if tool.output_schema is not None:
            listed["outputSchema"] = tool.output_schema
        entries.append(listed)
    return entries


def _stamp(foundry: Foundry, exposed: bool) -> Any:
    servers = foundry.upstreams
    if servers is None:
        return None
    if not exposed:
        return servers.revision
    return [(e.tool.name, e.tool.schema_hash, e.standing.value) for e in foundry.upstream_tools()]


async def watch_upstreams(
    foundry: Foundry,
    on_change: Callable[[], Awaitable[None]],
    *,
    exposed: bool,
    interval_s: float = WATCH_INTERVAL_S,
) -> None:
    """Start the upstream connections, then call ``on_change`` whenever their tools (or,
    when ``exposed``, their standings) change; runs until cancelled."""
    if foundry.upstreams is None:
        return
    foundry.upstreams.start()
    last = await anyio.to_thread.run_sync(_stamp, foundry, exposed)
    while True:
        await anyio.sleep(interval_s)
        now = await anyio.to_thread.run_sync(_stamp, foundry, exposed)
        if now != last:
            last = now
            await on_change()
