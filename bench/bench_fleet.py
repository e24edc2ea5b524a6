"""Throughput of a fleet: calls/s with 1, 2 and 4 ``serve --http`` processes on one database.

    .venv/bin/python bench/bench_fleet.py [--rounds 3] [--seconds 5] [--concurrency 16]
        [--db postgresql+psycopg://postgres@127.0.0.1:5432/test]

Four ``toolfoundry serve --http`` processes are started on one registry (a fresh schema of the
PostgreSQL database, dropped after) holding one active JavaScript tool, ``trim``. In each round
the fleet sizes 1, 2 and 4 run in a shuffled order: one client process keeps ``--concurrency``
requests in flight for ``--seconds``, spread round-robin over the first N servers (what any
load balancer does), each request a ``POST /api/tools/trim/call`` (validate, run in the
sandbox, record usage in the shared database). Printed: the median calls/s per fleet size, its
ratio to the single server measured in the same rounds, p50/p95 latency, and CPU time per call
of the servers, of the client (a minimal keep-alive HTTP/1.1 client, so that the load generator
takes little of the cores it shares with the servers) and of the whole machine (which adds
PostgreSQL, and whatever else runs: on a shared machine, other work).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from harness import (
    PG_SERVER,
    fresh_schema,
    goal_line,
    load,
    markdown_row,
    percentile,
    serve_http,
)
from toolfoundry import Foundry

SIZES = (1, 2, 4)
TRIM = {
    "name": "trim",
    "description": "Trims the text it is given.",
    "code": "export function handler({ text }) { return text.trim() }\n",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "tests": [{"input": {"text": " a "}, "expected": "a"}],
}


class Connection:
    """One keep-alive HTTP/1.1 connection: the least a client can spend per request, so the
    load generator takes as little as possible of the cores the servers share with it."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(cls, base: str) -> Connection:
        host, _, port = base.removeprefix("http://").partition(":")
        return cls(*await asyncio.open_connection(host, int(port)))

    async def post(self, path: str, body: bytes) -> tuple[int, bytes]:
        self.writer.write(
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body
        )
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    def close(self) -> None:
        self.writer.close()


async def drive(bases: list[str], seconds: float, concurrency: int) -> list[float]:
    """Latencies (s) of the calls completed in ``seconds`` with ``concurrency`` in flight, the
    connections spread round-robin over ``bases``."""
    latencies: list[float] = []
    body = json.dumps({"args": {"text": " x "}}).encode()
    path = "/api/tools/trim/call"
    conns = [await Connection.open(bases[i % len(bases)]) for i in range(concurrency)]
    stop = time.perf_counter() + seconds

    async def worker(conn: Connection) -> None:
        while time.perf_counter() < stop:
            started = time.perf_counter()
            status, answer = await conn.post(path, body)
            if status != 200 or json.loads(answer).get("value") != "x":
                raise RuntimeError(f"call failed: {status} {answer[:300]!r}")
            latencies.append(time.perf_counter() - started)

    try:
        await asyncio.gather(*(worker(conn) for conn in conns))
    finally:
        for conn in conns:
            conn.close()
    return latencies


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of ``pids`` so far (Linux /proc)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def machine_cpu_seconds() -> float:
    """CPU seconds every core of the machine has been busy so far (Linux /proc/stat)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(f) for f in fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--db", default=PG_SERVER, help="PostgreSQL server URL (a schema is made)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, fresh_schema(opts.db) as url:
        cwd = Path(tmp)
        (cwd / "toolfoundry.toml").write_text("[limits]\ntimeout_s = 20.0\n")
        with Foundry.open(url) as fd:
            created = fd.create_tool(TRIM)
            if created.status != "active":
                raise RuntimeError(f"seeding failed: {created}")
        with serve_http(url, cwd, max(SIZES)) as fleet:
            bases = [base for base, _ in fleet]
            asyncio.run(drive(bases, 2.0, opts.concurrency))  # warm every server's sandbox
            rates: dict[int, list[float]] = {n: [] for n in SIZES}
            lat: dict[int, list[float]] = {n: [] for n in SIZES}
            cpu: dict[int, list[list[float]]] = {n: [] for n in SIZES}
            server_pids = [pid for _, pid in fleet]
            for _ in range(opts.rounds):
                for n in random.sample(SIZES, len(SIZES)):
                    wall = time.perf_counter()
                    before = (cpu_seconds(server_pids), time.process_time(), machine_cpu_seconds())
                    latencies = asyncio.run(drive(bases[:n], opts.seconds, opts.concurrency))
                    wall = time.perf_counter() - wall
                    after = (cpu_seconds(server_pids), time.process_time(), machine_cpu_seconds())
                    done = len(latencies)
                    rates[n].append(done / wall)
                    lat[n].extend(latencies)
                    cpu[n].append([(b - a) / done for a, b in zip(before, after, strict=True)])
        with Foundry.open(url) as fd:
            calls = fd.usage("trim").calls
    print(
        f"{os.cpu_count()} CPUs, load average {load():.2f} at the end; "
        f"{opts.rounds} rounds x {opts.seconds:g} s per fleet size, {opts.concurrency} in flight, "
        f"POST /api/tools/trim/call on PostgreSQL; {calls} calls recorded in the registry"
    )
    print()
    print(
        "| servers | calls/s (median) | x 1 server | p50 ms | p95 ms "
        "| CPU ms/call: servers | client | whole machine |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    one = statistics.median(rates[1])
    for n in SIZES:
        rate = statistics.median(rates[n])
        per_call = (f"{1000 * statistics.median(c[i] for c in cpu[n]):.2f}" for i in range(3))
        p50, p95 = percentile(lat[n], 0.5), percentile(lat[n], 0.95)
        cells = [f"{n}", f"{rate:.0f}", f"{rate / one:.2f}", f"{1000 * p50:.1f}"]
        print(markdown_row([*cells, f"{1000 * p95:.1f}", *per_call]))
    for n in SIZES:
        goal_line(
            f"calls/s, {n} server(s) on one PostgreSQL", statistics.median(rates[n]), "calls/s"
        )


if __name__ == "__main__":
    main()
