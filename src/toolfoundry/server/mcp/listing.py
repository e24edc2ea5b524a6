"""The MCP ``tools/list`` answer: paged by an opaque cursor, kept up to date by change events.

Order is stable: the meta-tools (in ``META_TOOL_NAMES`` order), the project's declared tools,
then every active registry tool by name. A page holds at most ``page_size`` entries and, when
more follow, a ``nextCursor`` naming the last entry it held; the next page starts after that
entry. So paging over an unchanged set returns every tool exactly once, and a cursor stays
meaningful across a change (and across server processes on one database): a tool added or
removed meanwhile only shifts what later pages hold. Clients learn of changes from
``notifications/tools/list_changed`` and list again.

Nothing is rebuilt per request. The listing keeps the active set's ``(name, version)`` pairs
(one narrow query, :meth:`Registry.active_set`), the projected entry of each pair it has
served, and each page's result as it was answered; a request reads the database only after
:meth:`ToolListing.invalidate` (the server calls it on every active-set change event, before
notifying clients, and after its own create/rollback meta-tools), and then projects only the
entries of its page that are not kept already. A version never changes, so an entry kept under
its pair is never stale; a kept page lives until the next invalidation. A page asked for again
costs a dictionary lookup whatever the number of tools, and :meth:`ToolListing.kept` answers it
without blocking, so the server need not hop to a worker thread for it. With 10 000 active
tools the first request after a change costs the active-set read and one page of projection
(``bench/bench_scale.py``).
"""

from __future__ import annotations

import base64
import binascii
import logging
import threading
from bisect import bisect_right
from collections.abc import Callable, Sequence
from typing import Any

import mcp_types as types

from toolfoundry.base.json_gate import InvalidJson, JsonLimits, decode, encode
from toolfoundry.catalog import mcp_tool
from toolfoundry.foundry import Foundry
from toolfoundry.spec import DeclaredTool
from toolfoundry.spec.limits import LIST_PAGE_BOUND, LIST_PAGE_SIZE

logger = logging.getLogger(__name__)

DEFAULT_PAGE_SIZE = LIST_PAGE_SIZE
MAX_PAGE_SIZE = int(LIST_PAGE_BOUND.high)
_CURSOR_LIMITS = JsonLimits(max_bytes=1024, max_depth=2)
_LOCAL, _REGISTRY = "local", "tool"


class InvalidCursor(ValueError):
    """A ``tools/list`` cursor this server did not make (the server answers ``-32602``)."""


class ToolListing:
    """Pages of ``tools/list`` for one foundry, its meta-tools and declared tools.

    Args:
        foundry: the foundry whose active registry tools are listed.
        meta: the meta-tools by name, listed first (entries made by the caller).
        local_entries: the ``tools/list`` entries of the meta-tools and declared tools, in
            the order they are listed.
        declared: the project's declared tools; a registry tool of the same name is hidden.
        page_size: entries per page (1 to ``MAX_PAGE_SIZE``).
        library: list the registry's active tools after the local entries (False: the
            compact surface, server/mcp/surface.py).
        upstream: the entries of the upstream servers' tools to list among the registry's
            (``[serve] expose_upstream``; their ``UPSTREAM.TOOL`` names never meet a registry
            name), read again at each refresh; None lists none.

    Raises:
        ValueError: ``page_size`` out of range.
    """

    def __init__(
        self,
        foundry: Foundry,
        meta: dict[str, DeclaredTool],
        local_entries: Sequence[dict[str, Any]],
        declared: Sequence[DeclaredTool] = (),
        *,
        page_size: int = DEFAULT_PAGE_SIZE,
        library: bool = True,
        upstream: Callable[[], list[dict[str, Any]]] | None = None,
    ) -> None:
        if (problem := LIST_PAGE_BOUND.problem(page_size)) is not None:
            raise ValueError(f"page_size {problem}")
        self.foundry = foundry
        self.page_size = page_size
        self.library = library  # False: the compact surface lists no registry tool
        self._upstream = upstream
        self._local = [types.Tool.model_validate(e) for e in local_entries]
        self._shadowed = set(meta) | {tool.spec.name for tool in declared}
        self._declared = {tool.spec.name for tool in declared}
        self._lock = threading.Lock()
        self._names: list[str] = []  # active registry tools, sorted
        self._versions: dict[str, int] = {}
        self._entries: dict[tuple[str, int], types.Tool] = {}
        self._pages: dict[int, types.ListToolsResult] = {}  # by first index, this generation
        self._wanted = 1  # generation asked for (bumped by invalidate)
        self._built = 0  # generation the names were read at
        self._warned: set[str] = set()
        self.reads = 0  # active-set reads, for tests and benchmarks

    def invalidate(self) -> None:
        """The active set may have changed: the next request reads it again (thread-safe)."""
        self._wanted += 1

    def kept(self, cursor: str | None = None) -> types.ListToolsResult | None:
        """The page after ``cursor`` if it is kept from a request since the last change, else
        None (then :meth:`page` must read the registry). Never blocks: safe on the event loop.

        Raises:
            InvalidCursor: ``cursor`` is not one this listing made.
        """
        if not self._lock.acquire(blocking=False):  # a worker is reading: not kept yet
            return None
        try:
            if self._built != self._wanted:
                return None
            return self._pages.get(self._start(cursor))
        finally:
            self._lock.release()

    def page(self, cursor: str | None = None) -> types.ListToolsResult:
        """The page after ``cursor`` (the first page when None); blocking: run it in a worker
        thread.

        Raises:
            InvalidCursor: ``cursor`` is not one this listing made.
        """
        with self._lock:
            self._refresh()
            start = self._start(cursor)
            if (kept := self._pages.get(start)) is not None:
                return kept
            local = len(self._local)
            end = start + self.page_size
            tools = self._local[start:end] if start < local else []
            first_name = max(start - local, 0)
            names = self._names[first_name : max(end - local, 0)]
            tools += self._project(names)
            next_cursor = None
            if end < local + len(self._names):  # the last entry the page covers, active or not
                next_cursor = (
                    _cursor(_LOCAL, end - 1) if end <= local else _cursor(_REGISTRY, names[-1])
                )
            result = types.ListToolsResult(tools=tools, next_cursor=next_cursor)
            self._pages[start] = result
            return result

    def tools(self) -> list[types.Tool]:
        """Every entry, all pages in order (blocking)."""
        out: list[types.Tool] = []
        cursor: str | None = None
        while True:
            page = self.page(cursor)
            out += page.tools
            if page.next_cursor is None:
                return out
            cursor = page.next_cursor

    def _start(self, cursor: str | None) -> int:
        # the index of the page's first entry in the current generation (the lock is held)
        if cursor is None:
            return 0
        kind, where = _parse(cursor)
        if kind == _REGISTRY:
            return len(self._local) + bisect_right(self._names, where)
        if not isinstance(where, int) or not 0 <= where < len(self._local):
            raise InvalidCursor("the cursor names no entry of this server's tool list")
        return where + 1

    def _refresh(self) -> None:
        wanted = self._wanted
        if self._built == wanted:
            return
        if not self.library:
            self._built = wanted
            return
        pairs = self.foundry.registry.active_set()
        self.reads += 1
        versions = {}
        for name, number in pairs:
            if name in self._declared:
                self._warn_hidden(name)
            elif name not in self._shadowed:
                versions[name] = number
        for entry in self._upstream() if self._upstream is not None else []:
            versions[entry["name"]] = 0  # an upstream tool has no version: its entry is new
            self._entries[(entry["name"], 0)] = types.Tool.model_validate(entry)
        self._versions = versions
        self._names = sorted(versions)
        kept = set(versions.items())
        self._entries = {key: e for key, e in self._entries.items() if key in kept}
        self._pages = {}
        self._built = wanted

    def _project(self, names: list[str]) -> list[types.Tool]:
        missing = [n for n in names if (n, self._versions[n]) not in self._entries]
        if missing:
            for spec in self.foundry.registry.active_specs(missing):
                # the version read now is the current one; a newer pair replaces an older
                assert spec.version is not None  # a registry spec always has its version
                key = (spec.name, spec.version)
                self._versions[spec.name] = spec.version
                self._entries[key] = types.Tool.model_validate(mcp_tool(spec))
        out = []
        for name in names:
            entry = self._entries.get((name, self._versions[name]))
            if entry is not None:  # None: no longer active; the change event follows
                out.append(entry)
        return out

    def _warn_hidden(self, name: str) -> None:
        if name not in self._warned:
            self._warned.add(name)
            logger.warning(
                "registry tool %r is hidden by the project's declared tool of the same name "
                "([catalog] sources); rename one of them to serve both",
                name,
            )


def _cursor(kind: str, where: str | int) -> str:
    text = encode([kind, where])
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _parse(cursor: str) -> tuple[str, str | int]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        value = decode(raw, _CURSOR_LIMITS)
    except (binascii.Error, ValueError, InvalidJson):
        raise InvalidCursor("the cursor is not one this server made") from None
    if (
        isinstance(value, list)
        and len(value) == 2
        and (
            (value[0] == _LOCAL and type(value[1]) is int)
            or (value[0] == _REGISTRY and isinstance(value[1], str))
        )
    ):
        return value[0], value[1]
    raise InvalidCursor("the cursor is not one this server made")
