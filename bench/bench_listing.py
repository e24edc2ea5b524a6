"""Listing and catalogue at 10 000 tools: ``tools list``, ``fd.tools()``, ``fd.catalog()``.

    .venv/bin/python bench/bench_listing.py [--tools 10000] [--rounds 3] [--compare-src DIR]

The registry is seeded through ``Registry.add_version`` (every fifth tool asks for a network
host), once per size and schema revision, into a cached SQLite file under
``~/.cache/toolfoundry-bench/`` (seeding 10 000 versions takes a minute or two).

Every row is measured in ABAB rounds against its baseline, medians printed with their ratio:
- ``tools list`` piped (the plain renderer), ``--json`` and ``--limit 50``, each a new process,
  against ``tools list --limit 1`` (the same start-up, imports and query set-up, one row): the
  difference is what listing 10 000 tools costs. Goal: ``tools list`` <= 1 s.
  Processes keep their bytecode (``harness.child_env``, one untimed process first), as an
  installed package does.
- ``fd.tools()`` against a bare ``SELECT`` of the same rows with sqlite3 (no records);
- ``fd.catalog("openai")`` against ``json.dumps(indent=2)`` of its own output (the text alone):
  a first call (a new Foundry), and a call again with nothing changed (the kept text).

``--compare-src DIR`` also runs the three commands from another source tree (``PYTHONPATH``,
e.g. ``git archive`` of an older commit), interleaved with ours: a before/after in one run.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import time
from functools import partial
from pathlib import Path

from harness import CACHE, RatioTable, cli_seconds, goal_line, interleaved, print_machine, timed
from toolfoundry import Foundry
from toolfoundry.registry import NewVersion, Registry, VersionStatus
from toolfoundry.registry.sqlite_file import SCHEMA_HEAD
from toolfoundry.spec import Capabilities

CODE = "export function handler({ text }) { return text.trim() }\n"


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare-src", default=None, help="another tree's src/ (before)")
    opts = parser.parse_args()
    path = seeded(opts.tools)
    url = f"sqlite:///{path}"
    n = opts.tools
    table = RatioTable(58)
    table.head()
    line = table.line

    commands = {
        "tools list (piped: plain lines)": ["tools", "list", "--db", url],
        "tools list --json": ["tools", "list", "--json", "--db", url],
        "tools list --limit 50": ["tools", "list", "--limit", "50", "--db", url],
    }
    one = ["tools", "list", "--limit", "1", "--db", url]
    cli_seconds(one, None)  # the first process compiles and keeps the bytecode: not timed
    if opts.compare_src:
        cli_seconds(one, opts.compare_src)
    for name, args in commands.items():
        sides = {"ours": partial(cli_seconds, args), "one row": partial(cli_seconds, one)}
        if opts.compare_src and "--limit" not in args:
            sides["before"] = partial(cli_seconds, args, opts.compare_src)
        got = interleaved(sides, opts.rounds)
        line(f"{name}, {n} tools, new process", got["ours"], got["one row"], "tools list --limit 1")
        if "--limit" not in args:  # the goal: the whole list of 10 000 tools within a second
            goal = "<= 1 s" if n == 10_000 else ""
            met = got["ours"] <= 1.0 if goal else None
            goal_line(f"{name}, {n} tools, new process", got["ours"], "s", goal=goal, met=met)
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
    goal_line(f'fd.catalog("openai") of {n} tools vs json.dumps of it', got["ours"] / got["dump"])
    fd.close()
    bare.close()
    print_machine()


if __name__ == "__main__":
    main()
