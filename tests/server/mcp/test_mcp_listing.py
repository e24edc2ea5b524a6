"""``tools/list`` through the official MCP client: cursor pages, invalid cursors, a list kept
up to date by change events and projected incrementally."""

from __future__ import annotations

import base64
from collections.abc import Iterator

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from tests.factories import NewVersionFactory

from toolfoundry import Foundry
from toolfoundry.server.mcp.server import build_mcp_server
from toolfoundry.spec.names import META_TOOL_NAMES

from .test_mcp_support import Notifications

TOOLS = 130
PAGE = 25


@pytest.fixture
def foundry(db_url: str, new_version: NewVersionFactory) -> Iterator[Foundry]:
    with Foundry.open(db_url) as fd:
        for i in range(TOOLS):
            fd.registry.add_version(new_version(f"tool_{i:03d}"))
        yield fd


async def all_pages(client: Client) -> tuple[list[str], int]:
    """Every name listed, following nextCursor; and how many pages it took."""
    names: list[str] = []
    page = await client.list_tools(cache_mode="bypass")
    pages = 1
    while True:
        names += [tool.name for tool in page.tools]
        assert len(page.tools) <= PAGE
        if page.next_cursor is None:
            return names, pages
        page = await client.list_tools(cursor=page.next_cursor, cache_mode="bypass")
        pages += 1


def test_pages_list_every_tool_exactly_once_in_a_stable_order(foundry: Foundry) -> None:
    async def scenario() -> None:
        server = build_mcp_server(foundry, poll_interval_s=0.05, page_size=PAGE)
        async with Client(server, mode="legacy") as client:
            names, pages = await all_pages(client)
            registry = [f"tool_{i:03d}" for i in range(TOOLS)]
            assert names == [*META_TOOL_NAMES, *registry]  # each once, meta-tools first
            assert pages == -(-len(names) // PAGE)
            again, _ = await all_pages(client)
            assert again == names

    anyio.run(scenario)


def test_a_cursor_this_server_did_not_make_is_invalid_params(foundry: Foundry) -> None:
    def forged(text: str) -> str:
        return base64.urlsafe_b64encode(text.encode()).decode()

    bad = [
        "not a cursor!",
        forged("{"),  # not JSON
        forged('["tool"]'),  # the wrong shape
        forged('["local", 999]'),  # no such entry
        forged('["local", true]'),
        forged('["tool", "\\ud800"]'),  # a lone surrogate
        forged("[" * 50 + "]" * 50),
        "A" * 5000,
    ]

    async def scenario() -> None:
        server = build_mcp_server(foundry, page_size=PAGE)
        async with Client(server, mode="legacy") as client:
            for cursor in bad:
                with pytest.raises(MCPError) as refused:
                    await client.list_tools(cursor=cursor, cache_mode="bypass")
                assert refused.value.error.code == types.INVALID_PARAMS, cursor
                assert "cursor" in refused.value.error.message

    anyio.run(scenario)


def test_a_tool_created_between_pages_is_seen_after_list_changed(
    foundry: Foundry, new_version: NewVersionFactory
) -> None:
    async def scenario() -> None:
        notes = Notifications()
        server = build_mcp_server(foundry, poll_interval_s=0.05, page_size=PAGE)
        async with Client(server, mode="legacy", message_handler=notes) as client:
            first = await client.list_tools(cache_mode="bypass")
            second = await client.list_tools(cursor=first.next_cursor, cache_mode="bypass")
            assert second.next_cursor is not None
            # made by another Foundry (as by another process): only the watcher tells us
            with Foundry.open(str(foundry.registry.engine.url)) as other:
                other.registry.add_version(new_version("aaa_early"))  # sorts before the cursor
                other.registry.add_version(new_version("zzz_late"))  # sorts after it
                other.disable("tool_100")
            await notes.wait_list_changed(0)
            rest: list[str] = []
            cursor: str | None = second.next_cursor
            while cursor is not None:  # the old cursor still means "after this tool"
                page = await client.list_tools(cursor=cursor, cache_mode="bypass")
                rest += [tool.name for tool in page.tools]
                cursor = page.next_cursor
            assert rest[-1] == "zzz_late"
            assert "tool_100" not in rest
            assert "aaa_early" not in rest
            names, _ = await all_pages(client)
            assert "aaa_early" in names
            assert "zzz_late" in names
            assert "tool_100" not in names
            assert len(names) == len(set(names)) == len(META_TOOL_NAMES) + TOOLS + 1

    anyio.run(scenario)


def test_requests_read_the_registry_only_after_a_change(
    foundry: Foundry, new_version: NewVersionFactory
) -> None:
    """Served from memory while nothing changed; after a change, only the changed tool is
    projected again (the other entries are the very objects served before)."""
    from toolfoundry.foundry.meta_tools import builtin_tools
    from toolfoundry.server.mcp.listing import ToolListing
    from toolfoundry.server.mcp.server import meta_tool_entries

    meta = {t.spec.name: t for t in builtin_tools(foundry)}
    listing = ToolListing(foundry, meta, meta_tool_entries(meta), page_size=PAGE)
    before = {tool.name: tool for tool in listing.tools()}
    reads = listing.reads
    assert listing.tools() == list(before.values())
    assert listing.reads == reads  # no change event: no database read
    foundry.registry.add_version(new_version("tool_007"))  # version 2 becomes current
    listing.invalidate()
    after = {tool.name: tool for tool in listing.tools()}
    assert listing.reads == reads + 1
    assert after.keys() == before.keys()
    changed = [name for name in after if after[name] is not before[name]]
    assert changed == ["tool_007"]
    with pytest.raises(ValueError, match="page_size"):
        ToolListing(foundry, meta, [], page_size=0)


def test_a_page_asked_for_again_is_the_kept_result_until_a_change(
    foundry: Foundry, new_version: NewVersionFactory
) -> None:
    """Each page's result is kept from its first request; ``kept`` hands it out without a read
    or a wait (the event loop may call it), and nothing is kept across an invalidation."""
    from toolfoundry.foundry.meta_tools import builtin_tools
    from toolfoundry.server.mcp.listing import InvalidCursor, ToolListing
    from toolfoundry.server.mcp.server import meta_tool_entries

    meta = {t.spec.name: t for t in builtin_tools(foundry)}
    listing = ToolListing(foundry, meta, meta_tool_entries(meta), page_size=PAGE)
    assert listing.kept() is None  # nothing read yet
    first = listing.page()
    second = listing.page(first.next_cursor)
    assert listing.kept() is first
    assert listing.kept(first.next_cursor) is second
    assert listing.page() is first
    assert listing.kept(second.next_cursor) is None  # never asked for
    reads = listing.reads
    assert listing.page(second.next_cursor).tools[0].name != second.tools[0].name
    assert listing.reads == reads
    with pytest.raises(InvalidCursor):
        listing.kept("not a cursor!")
    with listing._lock:  # a worker thread in the middle of a read: kept() does not wait
        assert listing.kept() is None
    foundry.registry.add_version(new_version("aaa_first"))
    listing.invalidate()
    assert listing.kept() is None
    after = listing.page(first.next_cursor)
    assert after is not second
    assert after.tools[0].name == second.tools[0].name  # "after this entry" still holds
    assert "aaa_first" in [tool.name for tool in listing.tools()]
    assert listing.reads == reads + 1
