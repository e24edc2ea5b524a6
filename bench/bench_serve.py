"""Throughput of ``serve``: server CPU per MCP call and calls/s against both official SDK servers.

    .venv/bin/python bench/bench_serve.py [--rounds 3] [--seconds 3] [--clients 1 4 16]

Three servers, each one process on loopback, Streamable HTTP at ``/mcp`` with JSON responses
and a session per client, serving one tiny pure tool, ``add_one(x) -> x + 1``:

- **ours**: ``toolfoundry serve --http`` on a SQLite registry holding ``add_one`` as a
  JavaScript tool (validated, run in a pristine sandbox, counted and audited);
- **python sdk**: the official Python SDK's ``MCPServer`` with the same tool in plain Python
  (``bench/servers/sdk_server.py``): the protocol's cost alone;
- **ts sdk**: the official TypeScript SDK's ``McpServer`` running the same JavaScript in a fresh
  node ``vm`` context per call (``bench/node/mcp_server.mjs``; ``npm ci --prefix bench/node``,
  which ``scripts/setup.sh`` runs; skipped with a line saying so when missing).

One client process keeps N connections busy (a minimal keep-alive HTTP/1.1 client, so the load
generator takes little of the cores it shares with the servers), each its own MCP session
calling ``tools/call`` back to back. In each round every client count runs every server for
``--seconds``, the servers in a shuffled order. Printed per client count: calls/s and the
server process's CPU per call (from ``/proc``, medians over rounds), each against the Python
SDK's in the same rounds. Goals: ours <= 1.3x the Python SDK's CPU per call at each count, and
at least its calls/s at 16 clients.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from harness import child_env, free_port, goal_line, load, markdown_row, serve_http
from toolfoundry import Foundry

BENCH = Path(__file__).resolve().parent
NODE_DIR = BENCH / "node"
PROTOCOL = "2025-06-18"
TOOL = {
    "name": "add_one",
    "description": "Add one to an integer.",
    "parameters": {
        "type": "object",
        "properties": {"x": {"type": "integer"}},
        "required": ["x"],
    },
    "code": "export function handler({ x }) { return x + 1 }\n",
    "tests": [{"input": {"x": 1}, "expected": 2}],
}


class McpClient:
    """One keep-alive HTTP/1.1 connection carrying one MCP session."""

    def __init__(self, port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.port, self.reader, self.writer = port, reader, writer
        self.session: str | None = None
        self.protocol = PROTOCOL
        self.next_id = 1

    @classmethod
    async def open(cls, port: int) -> McpClient:
        client = cls(port, *await asyncio.open_connection("127.0.0.1", port))
        init = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "1"},
        }
        _, headers, body = await client.post({"method": "initialize", "params": init}, True)
        client.session = headers.get("mcp-session-id")
        client.protocol = json.loads(body)["result"]["protocolVersion"]
        await client.post({"method": "notifications/initialized"}, False)
        return client

    async def post(self, message: dict[str, object], request: bool) -> tuple[int, dict, bytes]:
        payload: dict[str, object] = {"jsonrpc": "2.0", **message}
        if request:
            payload["id"] = self.next_id
            self.next_id += 1
        body = json.dumps(payload).encode()
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
            f"Content-Length: {len(body)}\r\nMCP-Protocol-Version: {self.protocol}\r\n"
        )
        if self.session:
            head += f"Mcp-Session-Id: {self.session}\r\n"
        self.writer.write((head + "\r\n").encode() + body)
        return await self._response()

    async def call(self, x: int) -> object:
        params = {"name": "add_one", "arguments": {"x": x}}
        status, _, body = await self.post({"method": "tools/call", "params": params}, True)
        answer = json.loads(body) if status == 200 else None
        if answer is None or "result" not in answer or answer["result"].get("isError"):
            raise RuntimeError(f"call failed: {status} {body[:300]!r}")
        return answer["result"]

    async def _response(self) -> tuple[int, dict, bytes]:
        raw = await self.reader.readuntil(b"\r\n\r\n")
        lines = raw.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name:
                headers[name.strip().lower()] = value.strip()
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int((await self.reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await self.reader.readexactly(size + 2)
                if size == 0:
                    break
                chunks.append(chunk[:-2])
            return status, headers, b"".join(chunks)
        length = int(headers.get("content-length", "0"))
        return status, headers, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


async def drive(port: int, clients: int, seconds: float) -> int:
    """Calls completed by ``clients`` sessions calling back to back for ``seconds``."""
    sessions = [await McpClient.open(port) for _ in range(clients)]
    done = 0
    stop = time.perf_counter() + seconds

    async def worker(client: McpClient) -> None:
        nonlocal done
        x = 0
        while time.perf_counter() < stop:
            await client.call(x)
            x += 1
            done += 1

    try:
        await asyncio.gather(*(worker(s) for s in sessions))
    finally:
        for s in sessions:
            s.close()
    return done


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def process(argv: list[str], cwd: Path, env: dict[str, str], logs: Path) -> Iterator[int]:
    """A server process that prints ``ready`` once it listens; its pid. Its stderr goes to a
    file in ``logs``, out of the report."""
    log = logs / f"server-{Path(argv[1]).stem}.log"
    with log.open("w") as stderr:
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True
        )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if "ready" not in line:
            raise RuntimeError(f"{argv[0]} did not start: {line!r}")
        yield proc.pid
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def wait_listening(port: int, timeout: float = 60) -> None:
    end = time.monotonic() + timeout

    async def probe() -> None:
        (await McpClient.open(port)).close()

    while time.monotonic() < end:
        try:
            asyncio.run(probe())
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing serves MCP on port {port}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 4, 16])
    opts = parser.parse_args()
    notes = []
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        cwd = Path(tmp)
        url = f"sqlite:///{cwd / 'registry.db'}"
        # the library review serve runs by itself is not a call's cost: off while measuring
        (cwd / "toolfoundry.toml").write_text('[review]\nevery = "off"\n')
        with Foundry.open(url) as fd:
            if fd.create_tool(TOOL).status != "active":
                raise RuntimeError("seeding add_one failed")
        servers: dict[str, tuple[int, int]] = {}  # name -> (port, pid)
        ((base, pid),) = stack.enter_context(serve_http(url, cwd))
        servers["ours"] = (int(base.rsplit(":", 1)[1]), pid)
        port = free_port()
        sdk = [sys.executable, str(BENCH / "servers" / "sdk_server.py"), str(port)]
        servers["python sdk"] = (port, stack.enter_context(process(sdk, cwd, child_env(), cwd)))
        if shutil.which("node") and (NODE_DIR / "node_modules" / "@modelcontextprotocol").exists():
            port = free_port()
            ts = ["node", "mcp_server.mjs", str(port)]
            started = process(ts, NODE_DIR, dict(os.environ), cwd)
            servers["ts sdk"] = (port, stack.enter_context(started))
        else:
            notes.append("ts sdk: not installed (npm ci --prefix bench/node); skipped")
        for port, _ in servers.values():
            wait_listening(port)
            asyncio.run(drive(port, 2, 1.0))  # warm: imports, sandbox, statements
        rates: dict[tuple[int, str], list[float]] = {}
        cpu: dict[tuple[int, str], list[float]] = {}
        client_cpu: dict[tuple[int, str], list[float]] = {}
        load_before = load()
        for _ in range(opts.rounds):
            for clients in opts.clients:
                for name in random.sample(list(servers), len(servers)):
                    port, pid = servers[name]
                    before, mine = cpu_seconds(pid), time.process_time()
                    started = time.perf_counter()
                    done = asyncio.run(drive(port, clients, opts.seconds))
                    wall = time.perf_counter() - started
                    key = (clients, name)
                    rates.setdefault(key, []).append(done / wall)
                    cpu.setdefault(key, []).append((cpu_seconds(pid) - before) / done)
                    client_cpu.setdefault(key, []).append((time.process_time() - mine) / done)
    report(opts, servers, rates, cpu, client_cpu, load_before, notes)


def report(
    opts: argparse.Namespace,
    servers: dict[str, tuple[int, int]],
    rates: dict[tuple[int, str], list[float]],
    cpu: dict[tuple[int, str], list[float]],
    client_cpu: dict[tuple[int, str], list[float]],
    load_before: float,
    notes: list[str],
) -> None:
    print(
        f"{os.cpu_count()} CPUs, load average {load_before:.2f} before, {load():.2f} after;"
        f" {opts.rounds} rounds x {opts.seconds:g} s per server and client count, servers"
        " shuffled each time; medians over rounds"
    )
    print()
    head = ["clients", "server", "calls/s", "x python sdk", "server CPU ms/call"]
    print(markdown_row([*head, "x python sdk", "client CPU ms/call"]))
    print("|---:|---|---:|---:|---:|---:|---:|")
    goals: list[tuple[str, float, str, str, bool]] = []
    for clients in opts.clients:
        base_rate = statistics.median(rates[(clients, "python sdk")])
        base_cpu = statistics.median(cpu[(clients, "python sdk")])
        for name in servers:
            rate = statistics.median(rates[(clients, name)])
            per_call = statistics.median(cpu[(clients, name)])
            mine = statistics.median(client_cpu[(clients, name)])
            cells = [str(clients), name, f"{rate:.0f}", f"{rate / base_rate:.2f}x"]
            cells += [f"{per_call * 1000:.2f}", f"{per_call / base_cpu:.2f}x", f"{mine * 1000:.2f}"]
            print(markdown_row(cells))
            if name == "ours":
                ratio = per_call / base_cpu
                measure = f"server CPU per MCP call vs the Python SDK's, {clients} client(s)"
                goals.append((measure, ratio, "x", "<= 1.3x", ratio <= 1.3))
                if clients == max(opts.clients):
                    # time per call against the SDK's: the inverse of calls/s, so below 1x wins
                    measure = f"time per call (1 / calls/s) vs the Python SDK's, {clients} clients"
                    goals.append((measure, base_rate / rate, "x", "<= 1x", rate >= base_rate))
    print()
    for measure, value, unit, goal, met in goals:
        goal_line(measure, value, unit, goal=goal, met=met)
    for line in notes:
        print(line)


if __name__ == "__main__":
    main()
