"""``tools report`` at 10 000 tools: a few set queries, not a round trip per tool.

    .venv/bin/python bench/bench_report.py [--tools 10000] [--rounds 5]

The registry is bench_listing.py's cached one (10 000 active tools, every fifth with a network
host), copied, with calls recorded for every other tool (one in ten of those failing) and a
pending version for every hundredth. Measured in ABAB rounds against a baseline, medians with
their ratio:
- ``fd.report()`` in process against ``fd.registry.active_set()`` (one narrow row per tool:
  the cheapest read of every tool there is) and against ``fd.tools()`` (every current version);
- ``tools report --json`` in a new process against ``tools list --limit 1`` (the same start-up
  and store opening, one row);
- ``fd.verify()`` of 100 tools with 2 tests each (their suites stored as the forge stores
  them) against the same 200 cases as bare ``run_js`` calls, two threads like verify: what
  verify adds to the sandbox runs themselves;
- ``tools verify --json`` of the 10 000 tools (stored without suites, no tests: the per-tool
  cost alone) in a new process against ``tools list --limit 1``.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_listing import seeded
from harness import RatioTable, cli_seconds, goal_line, interleaved, print_machine, timed
from toolfoundry import Foundry
from toolfoundry.registry import NewVersion, Registry, VersionStatus
from toolfoundry.sandbox import run_js
from toolfoundry.spec import Capabilities


def with_usage(source: Path, count: int, into: Path) -> Path:
    """A copy of ``source`` with calls on every other tool and some pending versions."""
    target = into / "report.db"
    shutil.copy(source, target)
    registry = Registry.open(f"sqlite:///{target}")
    start = time.perf_counter()
    for i in range(0, count, 2):
        kind = "runtime_error" if i % 20 == 0 else None
        registry.record_call(f"tool_{i:06d}", 1, duration_ms=1.0 + i % 7, error_kind=kind)
    for i in range(0, count, 100):
        registry.add_version(
            NewVersion(
                name=f"tool_{i:06d}",
                code="export function handler({ text }) { return text }\n",
                description=f"Tool {i}, pending v2",
                parameters={"type": "object", "properties": {"text": {"type": "string"}}},
                status=VersionStatus.PENDING_APPROVAL,
                capabilities=Capabilities.from_dict({"network": ["api.example.com"]}),
            )
        )
    registry.close()
    took = time.perf_counter() - start
    print(f"recorded {count // 2} calls, {count // 100} pending in {took:.0f} s")
    return target


TRIM = "export function handler({ text }) { return text.trim() }\n"
CASES = [
    {"name": "a", "input": {"text": " x "}, "expected": "x"},
    {"name": "b", "input": {"text": "y"}, "expected": "y"},
]


def suites(into: Path, count: int = 100) -> Foundry:
    """``count`` active tools of two tests each, their suites stored as the forge does."""
    fd = Foundry.open(f"sqlite:///{into / 'verify.db'}")
    for i in range(count):
        fd.registry.add_version(
            NewVersion(
                name=f"trim_{i:03d}",
                code=TRIM,
                description=f"Trim {i}",
                parameters={"type": "object", "properties": {"text": {"type": "string"}}},
                status=VersionStatus.ACTIVE,
                tests=CASES,
                extra={"suite": {"earlier": [], "retired": []}},
            )
        )
    return fd


def bare_runs(count: int) -> None:
    args = [case["input"] for _ in range(count) for case in CASES]
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda a: run_js(TRIM, a), args))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    opts = parser.parse_args()
    n = opts.tools
    with tempfile.TemporaryDirectory() as tmp:
        path = with_usage(seeded(n), n, Path(tmp))
        url = f"sqlite:///{path}"
        fd = Foundry.open(url)
        report = fd.report()
        print(
            f"report: {report.tools} tools, {len(report.failures)} failing, "
            f"{len(report.capabilities)} with capabilities, {len(report.pending)} pending"
        )
        table = RatioTable(52)
        table.head()
        line = table.line

        got = interleaved(
            {
                "ours": timed(fd.report),
                "narrow": timed(fd.registry.active_set),
                "tools": timed(fd.tools),
            },
            opts.rounds,
        )
        line(f"fd.report(), {n} tools", got["ours"], got["narrow"], "registry.active_set()")
        line(f"fd.report(), {n} tools", got["ours"], got["tools"], "fd.tools()")
        goal_line(f"fd.report() of {n} tools vs fd.tools()", got["ours"] / got["tools"])
        fd.close()
        report_cmd = ["tools", "report", "--json", "--db", url]
        one = ["tools", "list", "--limit", "1", "--db", url]
        got = interleaved(
            {"ours": lambda: cli_seconds(report_cmd, None), "one": lambda: cli_seconds(one, None)},
            opts.rounds,
        )
        line(
            f"tools report --json, {n} tools, new process",
            got["ours"],
            got["one"],
            "tools list --limit 1",
        )
        checked = suites(Path(tmp))
        checked.verify(["trim_000"])  # the engine warmed
        got = interleaved(
            {"ours": timed(checked.verify), "bare": timed(lambda: bare_runs(100))},
            opts.rounds,
        )
        line("fd.verify(), 100 tools x 2 tests", got["ours"], got["bare"], "200 run_js, 2 threads")
        goal_line(
            "fd.verify() of 100 tools x 2 tests vs their 200 run_js", got["ours"] / got["bare"]
        )
        checked.close()
        verify_cmd = ["tools", "verify", "--json", "--db", url]
        got = interleaved(
            {"ours": lambda: cli_seconds(verify_cmd, None), "one": lambda: cli_seconds(one, None)},
            max(1, opts.rounds // 2),
        )
        line(f"tools verify --json, {n} tools, no tests", got["ours"], got["one"], "tools list")
    print_machine()


if __name__ == "__main__":
    main()
