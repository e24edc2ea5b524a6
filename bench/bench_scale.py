"""How the foundry scales with the number of tools: 1 / 100 / 1 000 / 10 000 on SQLite, and
1 000 on PostgreSQL.

    .venv/bin/python bench/bench_scale.py                # every size, SQLite + PostgreSQL
    .venv/bin/python bench/bench_scale.py --quick        # 1 / 100 / 1 000, SQLite only
    .venv/bin/python bench/bench_scale.py --sizes 1 100 --no-postgres

Per size, on a fresh database:

- **seed**: the tools are registered through the registry API (``Registry.add_version``, an
  active version each), not the forge: creating 10 000 tools through the forge would mean
  10 000 sandbox test runs (minutes of CPU on the shared 2-core machine), and the forge's own
  cost does not depend on how many tools exist. ``create`` below does go through the forge.
- **create**: ``Foundry.create_tool`` of a new tool (static check, sandbox test run, duplicate
  search, registry write), p50 over ``--creates`` tools added on top of the seeded ones.
- **list**: ``Foundry.tools()`` (every tool's current version, one query).
- **search**: ``Foundry.search`` (top 5), p50 over a few queries.
- **describe**: ``Foundry.catalog("json")`` right after a change (the projection of every
  active tool; unchanged sets are served from a cache and cost one narrow read).
- **MCP tools/list in process**: the official MCP client on the SDK's in-memory transport
  (``mcp.Client(server)``): the first page, p50 of repeated requests: the server's own cost.
- **MCP tools/list**: a real ``toolfoundry serve --http`` process and the official MCP client
  over Streamable HTTP: the first page (first request after start, then p50 of repeated
  requests) and every page (following ``nextCursor``, 100 tools a page).
- **server RSS**: that process's resident memory after listing every page (VmRSS).

Printed as a table with the growth factor per decade (the figure at 10x the tools divided by
the figure before). Times are medians on a loaded machine (load average printed): read the
ratios, not the absolute values.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from harness import (
    fresh_database,
    goal_line,
    load,
    markdown_row,
    print_load_after,
    print_load_before,
    seconds,
    serve_http,
)
from toolfoundry import Foundry
from toolfoundry.registry import NewVersion, VersionStatus

WORDS = [
    *[
        "convert",
        "parse",
        "format",
        "slug",
        "title",
        "json",
        "csv",
        "yaml",
        "date",
        "time",
        "currency",
        "exchange",
        "rate",
    ],
    *[
        "weather",
        "city",
        "temperature",
        "markdown",
        "table",
        "text",
        "upper",
        "lower",
        "count",
        "words",
        "lines",
    ],
    *[
        "sort",
        "unique",
        "merge",
        "split",
        "join",
        "filter",
        "map",
        "reduce",
        "hash",
        "encode",
        "decode",
        "url",
        "query",
    ],
]
QUERIES = ["convert currency rate", "parse csv table", "weather in a city", "slug title"]
CODE = "export function handler({ text }) { return String(text).toUpperCase(); }\n"
PARAMS = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "the input text"}},
    "required": ["text"],
}


def seeded(i: int) -> NewVersion:
    words = " ".join(WORDS[(i * k) % len(WORDS)] for k in (1, 7, 13))
    return NewVersion(
        name=f"tool_{i:05d}",
        code=CODE,
        description=f"Tool {i}: {words}",
        parameters=PARAMS,
        status=VersionStatus.ACTIVE,
    )


def draft(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"Shout the text back in capitals ({name})",
        "parameters": PARAMS,
        "code": CODE.replace("toUpperCase()", f"toUpperCase() + {name!r}.slice(0, 0)"),
        "tests": [{"input": {"text": "a"}, "expected": "A"}],
    }


def ms(fn: Callable[[], Any]) -> float:
    return seconds(fn) * 1000.0


@dataclass
class Row:
    backend: str
    size: int
    seconds_to_seed: float = 0.0
    figures: dict[str, float] = field(default_factory=dict)


COLUMNS = [
    ("create", "create p50 ms"),
    ("list", "list ms"),
    ("search", "search p50 ms"),
    ("describe", "describe ms"),
    ("inproc_first", "tools/list 1st page in process p50 ms"),
    ("mcp_first_cold", "tools/list 1st page, 1st request ms"),
    ("mcp_first", "tools/list 1st page p50 ms"),
    ("mcp_all", "tools/list all pages ms"),
    ("pages", "pages"),
    ("rss", "server RSS MiB"),
]


def measure(url: str, backend: str, size: int, creates: int, tmp: Path) -> Row:
    row = Row(backend, size)
    fd = Foundry.open(url)
    try:
        started = time.perf_counter()
        for i in range(size):
            fd.registry.add_version(seeded(i))
        row.seconds_to_seed = time.perf_counter() - started
        fd.create_tool(draft("warm_up"))  # the sandbox and forge warmed, outside the figures
        made = iter(range(creates))
        row.figures["create"] = statistics.median(
            ms(lambda: fd.create_tool(draft(f"made_{next(made):03d}"))) for _ in range(creates)
        )
        row.figures["list"] = statistics.median(ms(fd.tools) for _ in range(3))
        queries = iter(QUERIES * 2)
        row.figures["search"] = statistics.median(
            ms(lambda: fd.search(next(queries))) for _ in range(len(QUERIES) * 2)
        )
        row.figures["describe"] = ms(lambda: fd.catalog("json"))
        row.figures.update(anyio.run(in_process_figures, fd))
    finally:
        fd.close()
    row.figures.update(anyio.run(mcp_figures, url, tmp))
    return row


async def in_process_figures(fd: Foundry) -> dict[str, float]:
    """tools/list through the official client over the SDK's in-memory transport: the
    server's own cost, without HTTP."""
    from mcp import Client

    from toolfoundry.server.mcp.server import build_mcp_server

    async with Client(build_mcp_server(fd), mode="legacy") as client:
        await client.list_tools(cache_mode="bypass")
        firsts = []
        for _ in range(9):
            started = time.perf_counter()
            await client.list_tools(cache_mode="bypass")
            firsts.append((time.perf_counter() - started) * 1000.0)
    return {"inproc_first": statistics.median(firsts)}


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


async def mcp_figures(url: str, tmp: Path) -> dict[str, float]:
    import httpx2
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    with serve_http(url, tmp) as [(base, pid)]:
        client = httpx2.AsyncClient(timeout=httpx2.Timeout(60, read=300))
        async with (
            client,
            streamable_http_client(f"{base}/mcp", http_client=client) as (
                read,
                write,
            ),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            started = time.perf_counter()
            await session.list_tools()
            cold = (time.perf_counter() - started) * 1000.0
            firsts = []
            for _ in range(7):
                started = time.perf_counter()
                await session.list_tools()
                firsts.append((time.perf_counter() - started) * 1000.0)
            started = time.perf_counter()
            page = await session.list_tools()
            pages, names = 1, len(page.tools)
            while page.next_cursor is not None:
                page = await session.list_tools(
                    params=types.PaginatedRequestParams(cursor=page.next_cursor)
                )
                pages += 1
                names += len(page.tools)
            every = (time.perf_counter() - started) * 1000.0
            rss = rss_mib(pid)
    return {
        "mcp_first_cold": cold,
        "mcp_first": statistics.median(firsts),
        "mcp_all": every,
        "pages": pages,
        "listed": names,
        "rss": rss,
    }


def table(rows: list[Row]) -> None:
    head = markdown_row([f"{'backend':<10}", f"{'tools':>6}", *(t for _, t in COLUMNS)])
    print(head)
    print("|" + "|".join("-" * (len(c) + 2) for c in head.strip("|").split("|")) + "|")
    previous: dict[str, Row] = {}
    for row in rows:
        cells = []
        before = previous.get(row.backend)
        for key, _ in COLUMNS:
            value = row.figures.get(key, float("nan"))
            cell = f"{value:.0f}" if key == "pages" else f"{value:.1f}"
            if before is not None and before.size * 10 == row.size and key != "pages":
                cell += f" (x{value / before.figures[key]:.2f})"
            cells.append(cell)
        print(markdown_row([f"{row.backend:<10}", f"{row.size:>6}", *cells]))
        previous[row.backend] = row
    print()
    print("(xN): growth over the size ten times smaller on the same backend.")
    for row in rows:
        first = row.figures.get("mcp_first")
        if first is not None and row.size >= 10_000:
            measure = f"tools/list first page over HTTP, {row.size} tools ({row.backend})"
            goal_line(measure, first, "ms", goal="<= 50 ms", met=first <= 50)
    for row in rows:
        listed = row.figures.get("listed", 0)
        print(
            f"{row.backend} {row.size}: seeded in {row.seconds_to_seed:.1f} s through the "
            f"registry API; tools/list returned {listed:.0f} entries (meta-tools included)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 100, 1000, 10000])
    parser.add_argument("--quick", action="store_true", help="1 / 100 / 1 000, no PostgreSQL")
    parser.add_argument("--creates", type=int, default=5, help="forge creates per size")
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--postgres-size", type=int, default=1000)
    ns = parser.parse_args()
    sizes = [1, 100, 1000] if ns.quick else ns.sizes
    postgres = not (ns.quick or ns.no_postgres)
    print_load_before()
    rows: list[Row] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "toolfoundry.toml").write_text("[limits]\ntimeout_s = 20.0\n")
        for size in sizes:
            url = f"sqlite:///{work}/scale-{size}.db"
            rows.append(measure(url, "sqlite", size, ns.creates, work))
            print(f"  sqlite {size}: done (load {load():.2f})", flush=True)
        if postgres:
            with fresh_database() as url:
                rows.append(measure(url, "postgresql", ns.postgres_size, ns.creates, work))
    print()
    table(rows)
    print_load_after()


if __name__ == "__main__":
    main()
