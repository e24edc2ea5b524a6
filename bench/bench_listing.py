"""Listing and catalogue at 10 000 tools: ``tools list``, ``fd.tools()``, ``fd.catalog()``.

    .venv/bin/python bench/bench_listing.py [--tools 10000] [--rounds 3] [--compare-src DIR]

The registry is seeded through ``Registry.add_version`` (every fifth tool asks for a network
host), once per size and schema revision, into a cached SQLite file under
``~/.cache/toolfoundry-bench/`` (seeding 10 000 versions takes a minute or two).

Every row is measured in ABAB rounds against its baseline, medians printed with their ratio:
- ``tools list`` piped (the plain renderer), ``--json`` and ``--limit 50``, each a new process,
  against ``tools list --limit 1`` (the same start-up, imports and query set-up, one row): the
  difference is what listing 10 000 tools costs. Goal (issue 16): ``tools list`` <= 1 s.
  Processes keep their bytecode (``PYTHONPYCACHEPREFIX`` under the cache directory, one
  untimed process first), as an installed package does.
- ``fd.tools()`` against a bare ``SELECT`` of the same rows with sqlite3 (no records);
- ``fd.catalog("openai")`` against ``json.dumps(indent=2)`` of its own output (the text alone):
  a first call (a new Foundry), and a call again with nothing changed (the kept text).

``--compare-src DIR`` also runs the three commands from another source tree (``PYTHONPATH``,
e.g. ``git archive`` of an older commit), interleaved with ours: a before/after in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from toolfoundry import Foundry
from toolfoundry.registry import NewVersion, Registry, VersionStatus
from toolfoundry.registry.engine import SCHEMA_HEAD
from toolfoundry.spec import Capabilities

CACHE = Path.home() / ".cache" / "toolfoundry-bench"
CODE = "export function handler({ text }) { return text.trim() }\n"
CLI = "from toolfoundry.cli import main; main()"


def seeded(count: int) -> Path:
    """A registry of ``count`` active tools, built once through ``Registry.add_version``."""
    path = CACHE / f"listing-{count}-{SCHEMA_HEAD}.db"
    if path.exists():
        return path
    CACHE.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    registry = Registry.open(f"sqlite:///{partial}")
    start = time.perf_counter()
    for i in range(count):
        caps = {"network": [f"api{i % 7}.example.com"]} if i % 5 == 0 else {}
        registry.add_version(
            NewVersion(
                name=f"tool_{i:06d}",
                code=CODE,
                description=f"Tool {i}: trims the text it is given (variant {i % 13}).",
                parameters={
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "the text"}},
                    "required": ["text"],
                },
                status=VersionStatus.ACTIVE,
                capabilities=Capabilities.from_dict(caps),
            )
        )
    registry.engine.dispose()
    partial.rename(path)
    print(f"seeded {count} tools in {time.perf_counter() - start:.0f} s: {path}")
    return path


def process_s(args: list[str], src: str | None) -> float:
    # Bytecode kept between processes, as in an installed package (pip compiles on install):
    # with PYTHONDONTWRITEBYTECODE (set in some environments, e.g. this repository's CI
    # sandbox) every process would compile the package's ~80 modules again (~0.2 s). Kept
    # under the cache directory, not beside the sources; a changed source is compiled again.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(CACHE / "pycache")
    if src is not None:
        env["PYTHONPATH"] = src
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CLI, *args], capture_output=True, env=env, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{args} failed: {done.stderr.decode()[-500:]}")
    return elapsed


def interleaved(sides: dict[str, Callable[[], float]], rounds: int) -> dict[str, float]:
    """Median seconds of each side, the sides taking turns round by round (ABAB)."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(rounds):
        for name, side in sides.items():
            times[name].append(side())
    return {name: statistics.median(values) for name, values in times.items()}


def timed(fn: Callable[[], object]) -> Callable[[], float]:
    def run() -> float:
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare-src", default=None, help="another tree's src/ (before)")
    opts = parser.parse_args()
    path = seeded(opts.tools)
    url = f"sqlite:///{path}"
    n = opts.tools
    print(f"{'measure':58} {'ours':>9} {'baseline':>9} {'ratio':>7}  baseline")

    def line(name: str, ours: float, base: float, what: str) -> None:
        print(f"{name:58} {ours:8.3f}s {base:8.3f}s {ours / base:6.2f}x  {what}")

    commands = {
        "tools list (piped: plain lines)": ["tools", "list", "--db", url],
        "tools list --json": ["tools", "list", "--json", "--db", url],
        "tools list --limit 50": ["tools", "list", "--limit", "50", "--db", url],
    }
    one = ["tools", "list", "--limit", "1", "--db", url]
    process_s(one, None)  # the first process compiles and keeps the bytecode: not timed
    if opts.compare_src:
        process_s(one, opts.compare_src)
    for name, args in commands.items():
        sides = {
            "ours": lambda a=args: process_s(a, None),
            "one row": lambda: process_s(one, None),
        }
        if opts.compare_src and "--limit" not in args:
            sides["before"] = lambda a=args: process_s(a, opts.compare_src)
        got = interleaved(sides, opts.rounds)
        line(f"{name}, {n} tools, new process", got["ours"], got["one row"], "tools list --limit 1")
        if "before" in got:
            line(f"  same command from {opts.compare_src}", got["before"], got["ours"], "ours")

    fd = Foundry.open(url)
    query = (
        "SELECT v.*, t.name, t.current_version FROM tf_versions v JOIN tf_tools t"
        " ON t.id = v.tool_id WHERE v.version = t.current_version ORDER BY t.name"
    )
    bare = sqlite3.connect(path)
    fd.tools()
    got = interleaved(
        {
            "ours": timed(fd.tools),
            "bare": timed(lambda: bare.execute(query).fetchall()),
        },
        opts.rounds,
    )
    line(
        f"fd.tools(), {n} tools, in process", got["ours"], got["bare"], "sqlite3 SELECT, no records"
    )
    text = fd.catalog("openai")
    data = json.loads(text)

    def first_catalog() -> object:
        fresh = Foundry.open(url)  # nothing kept yet: every tool is derived and rendered
        try:
            return fresh.catalog("openai")
        finally:
            fresh.close()

    got = interleaved(
        {
            "ours": timed(first_catalog),
            "dump": timed(lambda: json.dumps(data, indent=2, ensure_ascii=False)),
            "again": timed(lambda: fd.catalog("openai")),
        },
        opts.rounds,
    )
    line(
        f'fd.catalog("openai"), {n} tools, first',
        got["ours"],
        got["dump"],
        "json.dumps of its output",
    )
    line(
        f'fd.catalog("openai"), {n} tools, again (no change)',
        got["again"],
        got["dump"],
        "json.dumps of its output",
    )
    fd.close()
    bare.close()
    print(f"machine: {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
