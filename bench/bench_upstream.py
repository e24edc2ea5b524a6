"""Upstream MCP servers in code mode: what a snippet's calls cost, and what they save a client.

    .venv/bin/python bench/bench_upstream.py [--rounds 9]

Real servers of the official SDKs: the Python SDK's ``notes`` (stdio) and ``tracker``
(Streamable HTTP, bearer token), tests/upstream/servers/python_server.py, and the TypeScript
SDK's ``words`` (stdio), bench/node/upstream_server.mjs (``npm ci --prefix bench/node``).

1. Ten calls of one upstream tool (``notes.list_notes``): a client of ``toolfoundry serve``
   (stdio, the official client) sends one ``run_js`` whose snippet makes the ten calls through
   the gate, against the same client making ten ``tools/call`` straight to the upstream server.
   Sides interleaved round by round (ABBA), medians. The machine time of the calls only: the
   snippet saves the ten model turns the direct calls would each cost.
2. A task over three upstreams (read the 40 notes of ``notes``, count their words with
   ``words``, open a ticket titled with the count on ``tracker``, return the ticket): a client
   connected to the three servers itself (it reads each one's ``tools/list``, then makes the
   three calls, reading each result) against a client of ``toolfoundry serve --surface
   compact`` (its ``tools/list``, then one ``run_js``). Counted apart, as JSON (what a model
   would read): the listings, paid once a session, and the results, paid per task. Goal:
   results >= 50 % fewer.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from harness import (
    REPO,
    free_port,
    goal_line,
    print_load_after,
    print_load_before,
    print_machine,
)

PYTHON_SERVER = str(REPO / "tests" / "upstream" / "servers" / "python_server.py")
TS_SERVER = str(REPO / "bench" / "node" / "upstream_server.mjs")
TOKEN = "bench-upstream-token"
TEN = (
    "export default async () => { const out = [];"
    " for (let i = 0; i < 10; i++) out.push(await tools.notes.list_notes({}));"
    " return out.length; }"
)
TASK = """
export default async () => {
  const { notes } = await tools.notes.list_notes({});
  const { words } = await tools.words.word_stats({ text: notes.join(" ") });
  return await tools.tracker.open_ticket({ title: `${words} words to read` });
}
"""
FILL = (
    "export default async ({ text }) => {"
    " for (let i = 0; i < 40; i++) await tools.notes.add_note({ text: `${i}: ${text}` }); }"
)
TEXT = "upstream servers reached from one snippet keep the context small"


def toml(config: dict[str, Any]) -> str:
    lines: list[str] = []

    def value(v: Any) -> str:
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{k} = {value(x)}" for k, x in v.items()) + " }"
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return json.dumps(v)

    for section, table in config.items():
        for item in table if isinstance(table, list) else [table]:
            lines.append(f"[[{section}]]" if isinstance(table, list) else f"[{section}]")
            lines += [f"{k} = {value(v)}" for k, v in item.items()]
    return "\n".join(lines) + "\n"


def received(result: Any) -> int:
    """The characters a client (a model) reads of one answer: its JSON."""
    return len(result.model_dump_json(by_alias=True, exclude_none=True))


@asynccontextmanager
async def stdio_session(
    command: str, args: list[str], cwd: Path, env: dict[str, str]
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=command, args=args, cwd=str(cwd), env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def http_session(url: str) -> AsyncIterator[ClientSession]:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with (
        httpx2.AsyncClient(headers=headers) as client,
        streamable_http_client(url, http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


async def measure(rounds: int, cwd: Path, url: str) -> None:
    env = {**os.environ, "TRACKER_TOKEN": TOKEN, "PYTHONUNBUFFERED": "1"}
    env.pop("TOOLFOUNDRY_DB", None)
    db = f"sqlite:///{cwd / 'registry.db'}"
    serve = [sys.executable, "-m", "toolfoundry", "serve", "--db", db, "--surface", "compact"]
    async with AsyncExitStack() as stack:
        ours = await stack.enter_async_context(stdio_session(serve[0], serve[1:], cwd, env))
        notes = await stack.enter_async_context(
            stdio_session(sys.executable, [PYTHON_SERVER, "notes"], cwd, env)
        )
        words = await stack.enter_async_context(stdio_session("node", [TS_SERVER], cwd, env))
        tracker = await stack.enter_async_context(http_session(url))
        # the first run_js waits for the upstreams' first connection
        with anyio.fail_after(60):
            while (await ours.call_tool("run_js", {"code": TEN})).is_error:
                await anyio.sleep(0.5)

        async def snippet() -> float:
            began = time.perf_counter()
            got = await ours.call_tool("run_js", {"code": TEN})
            assert not got.is_error, got
            return time.perf_counter() - began

        async def direct() -> float:
            began = time.perf_counter()
            for _ in range(10):
                got = await notes.call_tool("list_notes", {})
                assert not got.is_error
            return time.perf_counter() - began

        times: dict[str, list[float]] = {"snippet": [], "direct": []}
        for r in range(rounds):
            order = ("snippet", "direct") if r % 2 == 0 else ("direct", "snippet")
            for side in order:
                times[side].append(await (snippet() if side == "snippet" else direct()))
        med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
        ratio = med["snippet"] / med["direct"]
        print(f"{'ten calls of notes.list_notes':44} {'median s':>9}")
        print(f"{'  one run_js through toolfoundry serve':44} {med['snippet']:9.4f}")
        print(f"{'  ten tools/call straight to the upstream':44} {med['direct']:9.4f}")
        goal_line("ten upstream calls: one run_js snippet vs ten direct MCP calls", ratio)

        # the three-upstream task, both ways, over a notebook of 40 notes (filled first, on
        # both notes servers: the client's own and serve's): what the client receives
        for i in range(40):
            await notes.call_tool("add_note", {"text": f"{i}: {TEXT}"})
        assert not (await ours.call_tool("run_js", {"code": FILL, "args": {"text": TEXT}})).is_error
        listed = sum([received(await s.list_tools()) for s in (words, notes, tracker)])
        results = 0
        kept = await notes.call_tool("list_notes", {})
        results += received(kept)
        text = " ".join((kept.structured_content or {})["notes"])
        stats = await words.call_tool("word_stats", {"text": text})
        results += received(stats)
        count = (stats.structured_content or {})["words"]
        ticket = await tracker.call_tool("open_ticket", {"title": f"{count} words to read"})
        results += received(ticket)
        ours_listed = received(await ours.list_tools())
        one = await ours.call_tool("run_js", {"code": TASK})
        assert not one.is_error, one
        ours_results = received(one)
        print(f"{'three-upstream task':36} {'calls':>5} {'listing chars':>14} {'result chars':>13}")
        print(f"{'  the client on the three servers':36} {3:>5} {listed:>14} {results:>13}")
        shown = "  the client on serve --surface compact"
        print(f"{shown:36} {1:>5} {ours_listed:>14} {ours_results:>13}")
        fewer = 100 * (1 - ours_results / results)
        print(f"result characters {fewer:.1f} % fewer; calls 3 -> 1")
        goal_line(
            "a three-upstream task: result characters a client receives, run_js vs direct",
            ours_results / results,
            goal="<= 0.5x (>= 50 % fewer)",
            met=fewer >= 50,
        )
        goal_line(
            "a three-upstream task: listing characters, serve --surface compact vs 3 servers",
            ours_listed / listed,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    print_machine()
    print_load_before()
    port = free_port()
    tracker = subprocess.Popen(
        [sys.executable, PYTHON_SERVER, "tracker", "--http", str(port), "--token", TOKEN],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        time.sleep(2.0)  # uvicorn listening
        with tempfile.TemporaryDirectory() as tmp:
            cwd = Path(tmp)
            credential = {"header": "Authorization", "env": "TRACKER_TOKEN", "prefix": "Bearer "}
            config = {
                "limits": {"timeout_s": 20.0},
                "upstream": [
                    {"name": "notes", "command": sys.executable, "args": [PYTHON_SERVER, "notes"]},
                    {"name": "tracker", "url": url, "credentials": [credential]},
                    {"name": "words", "command": "node", "args": [TS_SERVER]},
                ],
            }
            (cwd / "toolfoundry.toml").write_text(toml(config))
            anyio.run(measure, args.rounds, cwd, url)
    finally:
        tracker.terminate()
        tracker.wait(10)
    print_load_after()


if __name__ == "__main__":
    main()
