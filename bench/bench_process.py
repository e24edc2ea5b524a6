"""Python-tier benchmark: cold jail, warm-pool call and throughput, against plain subprocess.

    .venv/bin/python bench/bench_process.py [--rounds 100] [--seconds 5] [--json]

The baseline, measured in the same run, is the same runner and the same host-side exchange
in a plain ``subprocess`` (``python3 -I -S -B``, no bubblewrap): what the jail itself costs is
the difference. The three kinds are interleaved: latency rounds are ABC (one call of each kind
per round, the pool refilled before its call, as in an idle server), throughput alternates
the kinds in slices of ``--seconds / 5`` (calls per second from two client threads, refills
included). Ratios are against the subprocess baseline of the same run.
Goals: warm call <= 3 ms p50, cold call <= 25 ms p99. Not a test: numbers depend on
the machine and its load (printed with the results).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from harness import goal_line, load, percentile
from toolfoundry.sandbox.process.bwrap import BwrapExecutor
from toolfoundry.sandbox.process.exchange import exchange, request_bytes
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.jail import RUNNER_SOURCE, Jail, JailConfig
from toolfoundry.sandbox.process.pool import WarmPool
from toolfoundry.spec import CallResult

TOOL = (
    "import json\n\ndef handler(args):\n    return {'sum': sum(args['xs']), 'n': len(args['xs'])}\n"
)
ARGS = {"xs": list(range(100))}
LIMITS = ProcessLimits()


class PlainSubprocess:
    """The baseline: the same runner and exchange in an unjailed ``python3`` subprocess."""

    def run(self, code: str, args: Any, limits: ProcessLimits, *, tool: str | None = None) -> Any:
        started = time.monotonic()
        (result_r, result_w), (ask_r, ask_w), (answer_r, answer_w) = (os.pipe() for _ in "abc")
        theirs = (result_w, ask_w, answer_r)
        process = subprocess.Popen(
            [JailConfig().interpreter, "-I", "-S", "-B", "-c", RUNNER_SOURCE]
            + [str(fd) for fd in theirs],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=theirs,
            start_new_session=True,
        )
        for fd in theirs:
            os.close(fd)
        jail = Jail(process, result_r, ask_r, answer_w)
        return exchange(jail, request_bytes(code, args, limits, []), limits, started)

    def close(self) -> None:
        pass


def percentiles(samples: list[float]) -> dict[str, float]:
    figures = {f"p{q}": round(percentile(samples, q / 100), 2) for q in (50, 95, 99)}
    return {**figures, "mean": round(statistics.mean(samples), 2)}


def interleaved_latency(
    runs: dict[str, tuple[Callable[[], CallResult], Callable[[], None]]], rounds: int
) -> dict[str, list[float]]:
    """Milliseconds per call of each kind, one call of every kind per round (ABC ABC ...)."""
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, (call, between) in runs.items():
            between()
            started = time.perf_counter()
            result = call()
            samples[name].append((time.perf_counter() - started) * 1000)
            if result.value != {"sum": 4950, "n": 100}:
                raise SystemExit(f"wrong result from {name}: {result}")
    return samples


def throughput(
    call: Callable[[], CallResult], seconds: float, threads: int = 2
) -> tuple[int, float]:
    """(calls done, seconds taken) by ``threads`` clients calling for ``seconds``."""
    done = [0] * threads
    stop = time.monotonic() + seconds

    def work(slot: int) -> None:
        while time.monotonic() < stop:
            assert call().ok
            done[slot] += 1

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(done), time.monotonic() - started


def interleaved_throughput(
    calls: dict[str, Callable[[], CallResult]], seconds: float, slices: int = 5
) -> dict[str, float]:
    """Calls per second of each kind, the kinds taking turns in ``slices`` slices each."""
    totals = {name: [0, 0.0] for name in calls}
    for _ in range(slices):
        for name, call in calls.items():
            count, took = throughput(call, seconds / slices)
            totals[name][0] += count
            totals[name][1] += took
    return {name: round(count / took, 1) for name, (count, took) in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--pool", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    plain, cold = PlainSubprocess(), BwrapExecutor()
    report: dict[str, Any] = {"load_before": load(), "cpus": os.cpu_count()}
    with WarmPool(options.pool) as pool:
        pool.wait_ready(30)
        runs: dict[str, tuple[Callable[[], CallResult], Callable[[], None]]] = {
            "subprocess baseline": (lambda: plain.run(TOOL, ARGS, LIMITS), lambda: None),
            "cold jail": (lambda: cold.run(TOOL, ARGS, LIMITS), lambda: None),
            "warm pool": (lambda: pool.run(TOOL, ARGS, LIMITS), lambda: _settle(pool)),
        }
        for call, _ in runs.values():
            call()  # first-call effects (page cache) are not what we measure
        samples = interleaved_latency(runs, options.rounds)
        for name in runs:
            report[name] = percentiles(samples[name])
        rates = interleaved_throughput({n: c for n, (c, _) in runs.items()}, options.seconds)
        for name, rate in rates.items():
            report[name]["calls_per_s"] = rate
    report["load_after"] = load()
    if options.json:
        print(json.dumps(report, indent=2))
        return
    print(f"cpus={report['cpus']} load {report['load_before']:.2f} -> {report['load_after']:.2f}")
    base = report["subprocess baseline"]
    head = f"{'':22}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}{'p50 / plain':>13}"
    print(head + f"{'calls/s (2 threads)':>22}")
    for name in runs:
        row = report[name]
        ratio = f"{row['p50'] / base['p50']:.2f}x"
        print(
            f"{name:22}{row['p50']:>9}{row['p95']:>9}{row['p99']:>9}{ratio:>13}"
            f"{row['calls_per_s']:>22}"
        )
    extra = report["cold jail"]["p50"] - base["p50"]
    print(f"what the jail adds to a cold call (p50, cold jail - subprocess): {extra:+.2f} ms")
    warm, cold_row = report["warm pool"], report["cold jail"]
    goal_line("cold jail call p50 vs a plain subprocess", cold_row["p50"] / base["p50"])
    goal_line("warm pool call p50", warm["p50"], "ms", goal="<= 3 ms", met=warm["p50"] <= 3)
    goal_line("cold call p99", cold_row["p99"], "ms", goal="<= 25 ms", met=cold_row["p99"] <= 25)


def _settle(pool: WarmPool) -> None:
    pool.wait_ready(30)
    time.sleep(0.01)  # let the previous jail's teardown (reaped off the call path) finish


if __name__ == "__main__":
    main()
