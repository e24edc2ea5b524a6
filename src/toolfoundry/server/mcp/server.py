"""The foundry as an MCP server: every active tool plus the meta-tools, a list that grows.

Built on the official SDK's low-level ``Server`` because the tool list is dynamic: paged by
cursor and kept up to date from active-set change events (:mod:`toolfoundry.server.mcp.listing`),
so several server processes on one database agree once each has heard of a change. Entries
come from the catalog's MCP projection (inputSchema, outputSchema, annotations derived from
capabilities); results are shaped by :mod:`toolfoundry.server.mcp.results`.

The project's own declared tools (``[catalog] sources``, see :mod:`toolfoundry.project`)
are listed after the meta-tools and run in-process through their own ``call``, in a worker
thread. A registry tool with the name of a declared tool is hidden (the code is the source of
truth) and a warning is logged once per name.

Unknown tool names are protocol errors (``-32602``); a tool that exists but is not active
(pending approval, disabled, rejected) gives an ``isError`` result of kind ``not_active``, so a
model learns it must wait for a human rather than that it misspelt a name.

Each active tool's source and tests are resources too, and so are the active set's TypeScript
types (``toolfoundry://types/tools.d.ts``; :mod:`toolfoundry.server.mcp.resources`).

``notifications/tools/list_changed`` (and, from the same event,
``notifications/resources/list_changed``) reaches clients of both protocol eras: on handshake
connections (2025 versions) it is sent on each connection's standalone channel; on 2026-07-28
connections it is published to the ``subscriptions/listen`` streams clients opened.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from importlib.metadata import version as package_version
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError

from toolfoundry.base.json_gate import encode
from toolfoundry.base.lru import SizedLRU, text_cost
from toolfoundry.catalog.mcp import mcp_tool, mcp_tools
from toolfoundry.forge.policy import CapabilityPolicy
from toolfoundry.foundry import Foundry
from toolfoundry.foundry.meta_tools import builtin_tools
from toolfoundry.server.changes import DEFAULT_INTERVAL_S, ActiveSetWatcher
from toolfoundry.server.mcp.listing import DEFAULT_PAGE_SIZE, InvalidCursor, ToolListing
from toolfoundry.server.mcp.resources import ToolResources
from toolfoundry.server.mcp.results import call_tool_result
from toolfoundry.server.mcp.short_calls import ShortCalls
from toolfoundry.server.mcp.surface import SURFACES, compact_entries
from toolfoundry.server.mcp.upstream_tools import exposed_entries, watch_upstreams
from toolfoundry.spec import DeclaredTool, ErrorKind, ToolSpec
from toolfoundry.spec.limits import MIB
from toolfoundry.spec.names import META_TOOL_NAMES, did_you_mean

SERVER_NAME = "toolfoundry"
SEND_TIMEOUT_S = 5.0
INSTRUCTIONS = (
    "Tools made by agents and kept in a versioned registry. Before writing a new tool, look "
    "for one with search_tools; show_tool reads a tool's code and tests before you improve "
    "it; create_tool makes a new tool (or the next version of one) from code and tests; "
    "call_tool calls a tool your tool list does not show yet; run_js tries an idea once. "
)
# after the policy's own approval rule (forge/policy.py: CapabilityPolicy.rule_text)
APPROVED_NOTICE = (
    " The tool list changes when a tool is approved (notifications/tools/list_changed)."
)


def instructions(policy: CapabilityPolicy, *, compact: bool = False) -> str:
    """The server's instructions: what the tools are for, and the approval rule ``policy``
    applies, stated from the policy itself."""
    rule = policy.rule_text() + APPROVED_NOTICE
    return INSTRUCTIONS + rule + (COMPACT_INSTRUCTIONS if compact else "")


# What the compact surface adds: the library is not listed, so say how to reach it.
COMPACT_INSTRUCTIONS = (
    " This server lists only its meta-tools, whatever the library holds: find a tool with "
    "search_tools (its first hit carries its parameters), then call it with call_tool, or "
    "several from one run_js snippet through the tools global."
)
# These two change which tools exist or which version runs (their specs say read_only=False);
# they add or move a pointer and never delete, so they are not destructive either.
_REGISTRY_WRITERS = {"create_tool": {"idempotentHint": False}, "rollback_tool": {}}


class ToolListBroadcast:
    """Sends ``notifications/tools/list_changed`` and ``notifications/resources/list_changed``
    (each active tool's source and tests are resources) to every connected client."""

    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self._sessions: dict[int, ServerSession] = {}
        self.sent = 0

    def attach(self, session: ServerSession) -> None:
        """Remember a handshake-era connection (from its ``notifications/initialized``)."""
        key = id(session)
        self._sessions[key] = session
        # The SDK offers no public handle on a session's connection; its exit stack is where
        # per-connection cleanup belongs, so a closed client is forgotten at once.
        connection = getattr(session, "_connection", None)
        exit_stack = getattr(connection, "exit_stack", None)
        if exit_stack is not None:
            exit_stack.callback(self._sessions.pop, key, None)

    @property
    def connections(self) -> int:
        """Handshake-era connections currently attached."""
        return len(self._sessions)

    async def send(self) -> None:
        """Notify every handshake connection and every ``subscriptions/listen`` stream."""
        self.sent += 1
        await self.bus.publish(ToolsListChanged())
        await self.bus.publish(ResourcesListChanged())
        async with anyio.create_task_group() as tasks:
            for session in list(self._sessions.values()):
                tasks.start_soon(self._notify, session)

    @staticmethod
    async def _notify(session: ServerSession) -> None:
        # One client that stopped reading must not hold up the others, nor the next poll.
        with anyio.move_on_after(SEND_TIMEOUT_S):
            await session.send_tool_list_changed()
            await session.send_resource_list_changed()


class FoundryMCPServer(Server[dict[str, Any]]):
    """The SDK's low-level server, announcing ``tools.listChanged`` and
    ``resources.listChanged`` on every transport."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        # The streamable-HTTP session manager builds these options with no arguments.
        return super().create_initialization_options(
            notification_options or NotificationOptions(tools_changed=True, resources_changed=True),
            experimental_capabilities,
            extensions,
        )


def meta_tool_entries(meta: dict[str, DeclaredTool]) -> list[dict[str, Any]]:
    """``tools/list`` entries of the meta-tools, in the order of ``META_TOOL_NAMES``."""
    entries = []
    for name in META_TOOL_NAMES:
        entry = mcp_tool(meta[name].spec)
        if name in _REGISTRY_WRITERS:
            entry["annotations"] = {
                **entry["annotations"],
                "destructiveHint": False,
                **_REGISTRY_WRITERS[name],
            }
        entries.append(entry)
    return entries


def build_mcp_server(
    foundry: Foundry,
    *,
    broadcast: ToolListBroadcast | None = None,
    poll_interval_s: float = DEFAULT_INTERVAL_S,
    tools: Sequence[DeclaredTool] = (),
    page_size: int = DEFAULT_PAGE_SIZE,
    surface: str = "full",
) -> FoundryMCPServer:
    """An MCP server over ``foundry``; its lifespan polls the registry for active-set changes.

    Args:
        foundry: the foundry whose registry is served.
        broadcast: where change notifications go (a new one by default).
        poll_interval_s: seconds between active-set polls.
        tools: the project's declared tools, served next to the meta-tools.
        page_size: ``tools/list`` entries per page (the rest follow by ``nextCursor``), and
            tools per ``resources/list`` page (two resources each).
        surface: ``full`` (every active tool is listed) or ``compact`` (the meta-tools only,
            in short form: server/mcp/surface.py); either way every tool can be called.

    Raises:
        ValueError: two of ``tools``, or one of them and a meta-tool, share a name; or
            ``page_size`` is out of range (``spec.limits.LIST_PAGE_BOUND``).
    """
    fan_out = broadcast or ToolListBroadcast()
    meta = {tool.spec.name: tool for tool in builtin_tools(foundry)}
    short_calls = ShortCalls()
    local = dict(meta)
    for tool in tools:
        if tool.spec.name in local:
            raise ValueError(f"two served tools are named {tool.spec.name!r}")
        local[tool.spec.name] = tool
    local_output = {name: mcp_tool(t.spec).get("outputSchema") for name, t in local.items()}
    if surface not in SURFACES:
        raise ValueError(f"surface must be one of {', '.join(SURFACES)}, not {surface!r}")
    compact = surface == "compact"
    expose = foundry.config.serve.expose_upstream and foundry.upstreams is not None
    listing = ToolListing(
        foundry,
        meta,
        compact_entries(meta_tool_entries(meta))
        if compact
        else meta_tool_entries(meta) + mcp_tools([t.spec for t in tools]),
        tools,
        page_size=page_size,
        library=not compact,
        upstream=(lambda: exposed_entries(foundry)) if expose else None,
    )
    resources = ToolResources(foundry, hidden=[t.spec.name for t in tools], page_size=page_size)

    async def on_change() -> None:
        listing.invalidate()  # before clients hear of it, so the list they ask for is new
        await fan_out.send()

    watcher = ActiveSetWatcher(foundry.registry, on_change, interval_s=poll_interval_s)
    # each called version's outputSchema (None: it has none), bounded like every cache
    output_schemas: SizedLRU[tuple[str, int], tuple[dict[str, Any] | None]] = SizedLRU(
        1024, 16 * MIB, lambda key, kept: text_cost(key[0], encode(kept[0]))
    )

    @asynccontextmanager
    async def lifespan(_: Server[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
        async with anyio.create_task_group() as tasks:
            await watcher.check()
            tasks.start_soon(watcher.run)
            tasks.start_soon(lambda: watch_upstreams(foundry, on_change, exposed=expose))
            yield {"foundry": foundry, "watcher": watcher, "broadcast": fan_out}
            tasks.cancel_scope.cancel()

    async def list_tools(
        ctx: ServerRequestContext[dict[str, Any]], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        try:
            cursor = params.cursor if params is not None else None
            kept = listing.kept(cursor)  # a page served since the last change: no thread hop
            if kept is not None:
                return kept
            return await anyio.to_thread.run_sync(listing.page, cursor)
        except InvalidCursor as exc:
            raise MCPError(types.INVALID_PARAMS, str(exc)) from None

    async def call_tool(
        ctx: ServerRequestContext[dict[str, Any]], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        name, args = params.name, params.arguments or {}
        declared = local.get(name)
        if declared is not None:
            result = await anyio.to_thread.run_sync(declared.call, args)
            if name in _REGISTRY_WRITERS:
                listing.invalidate()
                watcher.nudge()
            return call_tool_result(result, local_output[name])
        if expose and "." in name:  # UPSTREAM.TOOL, listed by [serve] expose_upstream
            result = await anyio.to_thread.run_sync(foundry.call, name, args)
            if result.error is not None and result.error.kind.value == "not_found":
                raise MCPError(types.INVALID_PARAMS, result.error.message)
            return call_tool_result(result, None)
        # One resolution per call: Foundry.call says which version answered, and a name it
        # could not resolve (no version in the details) is unknown to MCP too. A tool that
        # answers in a few ms runs right here, without a worker thread (short_calls.py).
        if short_calls.on_loop(name):
            result = foundry.call(name, args)
        else:
            result = await anyio.to_thread.run_sync(foundry.call, name, args)
        short_calls.saw(name, result.duration_ms)
        number = result.details.get("version")
        if number is None:
            close = ""
            if result.error is not None and result.error.kind is ErrorKind.NOT_FOUND:
                close = await anyio.to_thread.run_sync(_close_to, foundry, name, list(local))
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {name!r}{close}")
        key = (name, number)
        kept = output_schemas.get(key)
        if kept is None:
            spec = await anyio.to_thread.run_sync(_spec_of, foundry, name, number)
            kept = output_schemas.put(key, (mcp_tool(spec).get("outputSchema"),))
        return call_tool_result(result, kept[0])

    async def list_resources(
        ctx: ServerRequestContext[dict[str, Any]], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        return await anyio.to_thread.run_sync(resources.list, cursor)

    async def read_resource(
        ctx: ServerRequestContext[dict[str, Any]], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await anyio.to_thread.run_sync(resources.read, str(params.uri))

    async def on_initialized(
        ctx: ServerRequestContext[dict[str, Any]], params: types.NotificationParams
    ) -> None:
        fan_out.attach(ctx.session)

    server = FoundryMCPServer(
        SERVER_NAME,
        version=package_version("toolfoundry"),
        instructions=instructions(foundry.config.policy, compact=compact),
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscriptions_listen=ListenHandler(fan_out.bus),
    )
    server.add_notification_handler(
        "notifications/initialized", types.NotificationParams, on_initialized
    )
    return server


def _close_to(foundry: Foundry, name: str, local: list[str]) -> str:
    """The "did you mean" of an unknown name (spec/names.py, as the CLI's), among the names a
    client may call: the meta-tools, the declared tools and the registry's active tools."""
    active = [n for n, _ in foundry.registry.active_set()]
    return did_you_mean(name, [*local, *active])


def _spec_of(foundry: Foundry, name: str, number: int) -> ToolSpec:
    return foundry.show(name, number).spec


async def serve_stdio(
    foundry: Foundry,
    *,
    poll_interval_s: float = DEFAULT_INTERVAL_S,
    tools: Sequence[DeclaredTool] = (),
    page_size: int = DEFAULT_PAGE_SIZE,
) -> None:
    """Serve MCP over this process's stdin/stdout until the client closes them.

    Every line is read through the JSON gate (:mod:`toolfoundry.server.mcp.stdio`): a
    malformed one gets a JSON-RPC error response and the server reads on.

    Args:
        foundry: the foundry whose registry is served.
        poll_interval_s: seconds between active-set polls.
        tools: the project's declared tools, served next to the meta-tools.
        page_size: ``tools/list`` entries (and ``resources/list`` tools) per page.
    """
    await run_stdio(
        build_mcp_server(foundry, poll_interval_s=poll_interval_s, tools=tools, page_size=page_size)
    )


async def run_stdio(server: FoundryMCPServer) -> None:
    """Serve an already built ``server`` (:func:`build_mcp_server`) over stdin/stdout until
    the client closes them, as :func:`serve_stdio` does."""
    from toolfoundry.server.mcp.stdio import gated_stdio

    async with gated_stdio() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
