"""Upstream MCP servers for the tests, written with the official Python SDK's low-level server.

    python python_server.py notes                     # stdio
    python python_server.py tracker --http PORT --token TOKEN   # Streamable HTTP, bearer token

``notes`` (stdio) keeps notes in memory and has the tools the tests need an upstream to misbehave
with: ``crash`` ends the process mid-call, ``sleep`` is slow, ``hostile`` answers a lone
surrogate, 200-deep nesting or 20 MB of text, ``reshape`` changes ``delete_notes``' input schema
(or, given ``drop``, stops listing that tool) and ``grow`` adds a tool (each followed by
``notifications/tools/list_changed``). Its listing comes in pages of three. ``tracker`` (HTTP)
refuses any request without ``Authorization: Bearer TOKEN``; its ``whoami`` answers the header it
was sent (an upstream echoing its credential).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server

PAGE = 3
EMPTY = {"type": "object", "properties": {}}


def text(value: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=value)])


def tool(name: str, description: str, schema: dict[str, Any], **hints: bool) -> types.Tool:
    annotations = types.ToolAnnotations.model_validate(hints) if hints else None
    return types.Tool(
        name=name, description=description, input_schema=schema, annotations=annotations
    )


def notes_server() -> Server[Any]:
    notes: list[str] = []
    delete_schema: dict[str, Any] = EMPTY
    extra: list[types.Tool] = []
    dropped: set[str] = set()

    def listing() -> list[types.Tool]:
        return [t for t in every_tool() if t.name not in dropped]

    def every_tool() -> list[types.Tool]:
        return [
            tool(
                "add_note",
                "Add a note to the notebook.",
                {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
                destructiveHint=False,
                openWorldHint=False,
            ),
            tool("list_notes", "List the notes of the notebook.", EMPTY, readOnlyHint=True),
            tool("delete_notes", "Delete every note.", delete_schema, destructiveHint=True),
            tool(
                "crash",
                "End the server's process in the middle of the call.",
                EMPTY,
                readOnlyHint=True,
            ),
            tool(
                "sleep",
                "Answer after some seconds.",
                {"type": "object", "properties": {"seconds": {"type": "number"}}},
                readOnlyHint=True,
            ),
            tool(
                "hostile",
                "Answer something the host must refuse.",
                {"type": "object", "properties": {"kind": {"enum": ["surrogate", "deep", "huge"]}}},
                readOnlyHint=True,
            ),
            tool(
                "reshape",
                "Give delete_notes a new parameter, or stop listing the tool named by drop.",
                {"type": "object", "properties": {"drop": {"type": "string"}}},
                readOnlyHint=True,
            ),
            tool("grow", "Add a tool to this server.", EMPTY, readOnlyHint=True),
            *extra,
        ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        tools = listing()
        more = start + PAGE < len(tools)
        return types.ListToolsResult(
            tools=tools[start : start + PAGE], next_cursor=str(start + PAGE) if more else None
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        nonlocal delete_schema
        args = params.arguments or {}
        name = params.name
        if name == "add_note":
            notes.append(str(args["text"]))
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=f"{len(notes)} notes")],
                structured_content={"count": len(notes)},
            )
        if name == "list_notes":
            return types.CallToolResult(content=[], structured_content={"notes": list(notes)})
        if name == "delete_notes":
            deleted = len(notes)
            notes.clear()
            return text(f"deleted {deleted}")
        if name == "crash":
            os._exit(3)
        if name == "sleep":
            await anyio.sleep(float(args.get("seconds", 60)))
            return text("awake")
        if name == "hostile":
            kind = args.get("kind")
            if kind == "surrogate":
                return text("bad \ud800 text")
            if kind == "deep":
                deep: Any = "bottom"
                for _ in range(200):
                    deep = {"d": deep}
                return types.CallToolResult(content=[], structured_content={"v": deep})
            return text("x" * (20 * 1024 * 1024))
        if name == "reshape" and "drop" in args:
            dropped.add(str(args["drop"]))
            await ctx.session.send_tool_list_changed()
            return text("dropped")
        if name == "reshape":
            delete_schema = {
                "type": "object",
                "properties": {"older_than_days": {"type": "integer"}},
            }
            await ctx.session.send_tool_list_changed()
            return text("reshaped")
        if name == "grow":
            extra.append(
                tool(f"added_{len(extra) + 1}", "A tool added later.", EMPTY, readOnlyHint=True)
            )
            await ctx.session.send_tool_list_changed()
            return text(f"{len(extra)} added")
        if any(t.name == name for t in extra):
            return text(f"{name} ran")
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=f"no tool {name}")], is_error=True
        )

    return Server("notes", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


def tracker_server() -> Server[Any]:
    tickets: list[str] = []

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                tool(
                    "open_ticket",
                    "Open a ticket in the tracker.",
                    {
                        "type": "object",
                        "properties": {"title": {"type": "string", "minLength": 1}},
                        "required": ["title"],
                    },
                    destructiveHint=False,
                    openWorldHint=False,
                ),
                tool("count_tickets", "How many tickets are open.", EMPTY, readOnlyHint=True),
                tool("whoami", "The credentials this request came with.", EMPTY, readOnlyHint=True),
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        args = params.arguments or {}
        if params.name == "open_ticket":
            tickets.append(str(args["title"]))
            return types.CallToolResult(
                content=[], structured_content={"id": len(tickets), "title": args["title"]}
            )
        if params.name == "count_tickets":
            return types.CallToolResult(content=[], structured_content={"open": len(tickets)})
        if params.name == "whoami":
            request = ctx.request
            header = request.headers.get("authorization") if request is not None else None
            return text(json.dumps({"authorization": header}))
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="unknown")], is_error=True
        )

    return Server("tracker", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


def serve_http(server: Server[Any], port: int, token: str) -> None:
    import uvicorn
    from starlette.types import ASGIApp, Receive, Scope, Send

    app = server.streamable_http_app()

    def guarded(inner: ASGIApp) -> ASGIApp:
        async def checked(scope: Scope, receive: Receive, send: Send) -> None:
            if scope["type"] == "http":
                headers = dict(scope["headers"])
                if headers.get(b"authorization") != f"Bearer {token}".encode():
                    await send({"type": "http.response.start", "status": 401, "headers": []})
                    await send({"type": "http.response.body", "body": b"no"})
                    return
            await inner(scope, receive, send)

        return checked

    uvicorn.run(guarded(app), host="127.0.0.1", port=port, log_level="warning", lifespan="on")


async def serve_stdio(server: Server[Any]) -> None:
    from mcp.server.stdio import stdio_server

    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("profile", choices=["notes", "tracker"])
    parser.add_argument("--http", type=int)
    parser.add_argument("--token", default="")
    given = parser.parse_args()
    server = notes_server() if given.profile == "notes" else tracker_server()
    if given.http:
        serve_http(server, given.http, given.token)
    else:
        anyio.run(serve_stdio, server)


if __name__ == "__main__":
    sys.setrecursionlimit(10_000)
    time.sleep(0)
    main()
