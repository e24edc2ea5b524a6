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
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, text

from toolfoundry import Foundry

PG = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
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


@contextmanager
def fresh_schema(base: str) -> Iterator[str]:
    """A URL to a new, empty schema of ``base``'s database; dropped afterwards."""
    schema = f"tf_bench_{uuid.uuid4().hex[:12]}"
    admin = create_engine(base)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{base}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def servers(url: str, cwd: Path, n: int) -> Iterator[list[tuple[str, int]]]:
    """``n`` ``serve --http`` processes on ``url``; yields (base URL, pid) of each once all
    listen."""
    env = {k: v for k, v in os.environ.items() if k not in ("TOOLFOUNDRY_DB", "TOOLFOUNDRY_TOKEN")}
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []
    bases = []
    try:
        for _ in range(n):
            port = free_port()
            log = cwd / f"serve-{port}.log"
            command = [sys.executable, "-m", "toolfoundry", "serve", "--db", url]
            with log.open("w") as stderr:
                command += ["--http", f"127.0.0.1:{port}"]
                procs.append((subprocess.Popen(command, cwd=cwd, env=env, stderr=stderr), log))
            bases.append(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 180
        for proc, log in procs:
            while "MCP at" not in log.read_text():
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"serve did not start: {log.read_text()}")
                time.sleep(0.1)
        yield [(base, proc.pid) for base, (proc, _) in zip(bases, procs, strict=True)]
    finally:
        for proc, _ in procs:
            proc.terminate()
        for proc, _ in procs:
            proc.wait(timeout=30)


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


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--db", default=PG, help="PostgreSQL server URL (a schema is made)")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, fresh_schema(opts.db) as url:
        cwd = Path(tmp)
        (cwd / "toolfoundry.toml").write_text("[limits]\ntimeout_s = 20.0\n")
        with Foundry.open(url) as fd:
            created = fd.create_tool(TRIM)
            if created.status != "active":
                raise RuntimeError(f"seeding failed: {created}")
        with servers(url, cwd, max(SIZES)) as fleet:
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
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end; "
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
        print(
            f"| {n} | {rate:.0f} | {rate / one:.2f} | {1000 * pct(lat[n], 0.5):.1f} | "
            f"{1000 * pct(lat[n], 0.95):.1f} | "
            + " | ".join(f"{1000 * statistics.median(c[i] for c in cpu[n]):.2f}" for i in range(3))
            + " |"
        )


if __name__ == "__main__":
    main()
