"""What one SQLite change poll of a server costs at 10 000 active tools, with and without the
cheap check (``registry.change_probe.ChangeProbe``: ``PRAGMA data_version`` on a kept connection).

    .venv/bin/python bench/bench_poll.py                 # 10 000 tools, 200 rounds
    .venv/bin/python bench/bench_poll.py --tools 1000 --rounds 100

The tools are seeded through ``Registry.add_version`` (one active version each). Each round
times, interleaved, ``ActiveSetWatcher.check()`` (the server's poll, thread hop included) of

- **full read**: a watcher without the probe, i.e. the poll before (the whole active set read
  and hashed every time);
- **idle**: the same watcher with its probe, nothing committed since its last poll;
- **after a commit**: with its probe, right after another registry committed a usage row (the
  probe says "maybe", the set is read and found unchanged).

Printed: medians, the ratio to the full read, and the share of a core a server would spend
polling every 0.5 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from harness import goal_line
from toolfoundry import Foundry
from toolfoundry.registry import NewVersion, VersionStatus
from toolfoundry.server.changes import DEFAULT_INTERVAL_S, ActiveSetWatcher


def seeded(i: int) -> NewVersion:
    return NewVersion(
        name=f"tool_{i:05d}",
        code="export const handler = () => 1;",
        description=f"seeded tool number {i}",
        parameters={"type": "object", "properties": {}},
        status=VersionStatus.ACTIVE,
    )


async def nothing() -> None:
    return None


async def timed(watcher: ActiveSetWatcher) -> float:
    started = time.perf_counter()
    await watcher.check()
    return (time.perf_counter() - started) * 1000


async def rounds(server: Foundry, other: Foundry, count: int) -> dict[str, list[float]]:
    full = ActiveSetWatcher(server.registry, nothing)
    full.probe = None
    cheap = ActiveSetWatcher(server.registry, nothing)
    await full.check()
    await cheap.check()
    samples: dict[str, list[float]] = {"full read": [], "idle": [], "after a commit": []}
    for _ in range(count):
        samples["full read"].append(await timed(full))
        samples["idle"].append(await timed(cheap))
        other.registry.record_call("tool_00000", 1, duration_ms=1.0, error_kind=None)
        samples["after a commit"].append(await timed(cheap))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'registry.db'}"
        with Foundry.open(url) as server, Foundry.open(url) as other:
            started = time.perf_counter()
            for i in range(args.tools):
                other.registry.add_version(seeded(i))
            seed_s = time.perf_counter() - started
            samples = anyio.run(rounds, server, other, args.rounds)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{args.tools} active tools on SQLite (seeded in {seed_s:.1f} s), {args.rounds} rounds")
    print(f"load average {load}")
    base = statistics.median(samples["full read"])
    for label, values in samples.items():
        median = statistics.median(values)
        share = median / 1000 / DEFAULT_INTERVAL_S * 100
        print(
            f"  {label:<15} p50 {median:8.3f} ms  x{median / base:6.3f} of the full read  "
            f"{share:6.3f} % of a core at one poll per {DEFAULT_INTERVAL_S} s"
        )
        if label != "full read":
            goal_line(f"a server's change poll, {label}, vs the full read", median / base)


if __name__ == "__main__":
    main()
