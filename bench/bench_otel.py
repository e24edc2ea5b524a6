"""Telemetry benchmark: what the OpenTelemetry hook costs on the call path.

    .venv/bin/python bench/bench_otel.py                  # all three modes
    .venv/bin/python bench/bench_otel.py --rounds 40 --calls 50

Each mode runs in its own interpreter (the check for OpenTelemetry happens once, at import):

- ``absent``: opentelemetry cannot be imported, as without the [otel] extra;
- ``noop``: opentelemetry-api is there but no SDK is set up (no-op spans);
- ``sdk``: the SDK records every span (batch processor, in-memory exporter) and metric.

In each, ``Foundry.call`` is timed against its own hookless path (the ``Caller`` the facade
delegates to, i.e. the call path as it was before the hook) in the same run, interleaved:
each round times ``--calls`` calls of one then of the other, alternating which goes first.
The ratio is the median over rounds of (Foundry.call median / hookless median); 1.00 means
no cost. The ``control`` row times the hookless refused call against itself: how far from
1.00 a ratio strays on this machine when nothing differs. Goal: with
OpenTelemetry absent, the call path's cost is unchanged (its goal lines: within 5 % of 1x).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from harness import child_env, each, goal_line

MODES = ("absent", "noop", "sdk")
DRAFT: dict[str, Any] = {
    "name": "word_count",
    "description": "Count the words of a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "code": (
        "export function handler({ text }) { return text.split(/\\s+/).filter(Boolean).length; }"
    ),
    "tests": [{"input": {"text": "a b"}, "expected": 2}],
}
# a call that runs in the sandbox, and one refused by validation (no sandbox: the shortest
# path through the hook, where its cost would show most)
WORKLOADS = {"sandbox": {"text": "tools that last a while"}, "refused": {"text": 42}}


def _timed(fn: Callable[[], Any], calls: int) -> list[float]:
    """Microseconds of each of ``calls`` calls of ``fn``."""
    return [s * 1e6 for s in each(fn, calls)]


def run_mode(mode: str, rounds: int, calls: int) -> dict[str, Any]:
    """Time one mode in this interpreter (called in a fresh one per mode)."""
    if mode == "absent":
        sys.modules["opentelemetry"] = None  # type: ignore[assignment]
    from toolfoundry import Foundry
    from toolfoundry.foundry import telemetry

    exporter = None
    if mode == "sdk":
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        exporter = InMemorySpanExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(BatchSpanProcessor(exporter))
        meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
        telemetry.configure(tracer_provider=tracer_provider, meter_provider=meters)
    if mode == "noop":
        import opentelemetry.trace  # noqa: F401  (the API in use, no provider set)
    assert (telemetry.instruments() is None) == (mode == "absent")

    with tempfile.TemporaryDirectory() as tmp:
        fd = Foundry.open(f"sqlite:///{Path(tmp) / 'bench.db'}")
        assert fd.create_tool(DRAFT).status == "active"
        hookless = fd._caller  # the path Foundry.call delegates to
        results = {}
        for workload, args in WORKLOADS.items():
            results[workload] = _compare(
                partial(fd.call, "word_count", args),
                partial(hookless.call, "word_count", args),
                rounds,
                calls,
                exporter,
            )
        # the same hookless call on both sides: the ratio this machine shows for no change
        refused = WORKLOADS["refused"]
        results["control"] = _compare(
            lambda: hookless.call("word_count", refused),
            lambda: hookless.call("word_count", refused),
            rounds,
            calls,
            exporter,
        )
        fd.close()
    return {"mode": mode, "calls": rounds * calls, "workloads": results}


def _compare(
    facade: Callable[[], Any],
    bare: Callable[[], Any],
    rounds: int,
    calls: int,
    exporter: Any,
) -> dict[str, float]:
    for _ in range(calls):  # warm the version cache, the engine and the database
        facade()
        bare()
    ratios, with_hook, without = [], [], []
    for index in range(rounds):
        if index % 2:
            b = _timed(bare, calls)
            f = _timed(facade, calls)
        else:
            f = _timed(facade, calls)
            b = _timed(bare, calls)
        with_hook += f
        without += b
        ratios.append(statistics.median(f) / statistics.median(b))
        if exporter is not None:
            exporter.clear()
    return {
        "hookless_p50_us": statistics.median(without),
        "foundry_call_p50_us": statistics.median(with_hook),
        "ratio": statistics.median(ratios),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--mode", choices=MODES, help="time one mode here (used internally)")
    opts = parser.parse_args()
    if opts.mode:
        print(json.dumps(run_mode(opts.mode, opts.rounds, opts.calls)))
        return
    header = f"{'mode':<8} {'call':<8} {'calls':>6} {'hookless p50 us':>16}"
    print(header + f" {'Foundry.call p50 us':>20} ratio")
    for mode in MODES:
        command = [sys.executable, __file__, "--mode", mode]
        command += ["--rounds", str(opts.rounds), "--calls", str(opts.calls)]
        out = subprocess.run(command, capture_output=True, text=True, check=True, env=child_env())
        r = json.loads(out.stdout.strip().splitlines()[-1])
        for workload, w in r["workloads"].items():
            print(
                f"{r['mode']:<8} {workload:<8} {r['calls']:>6} {w['hookless_p50_us']:>16.1f} "
                f"{w['foundry_call_p50_us']:>20.1f} {w['ratio']:.3f}"
            )
        for workload in ("sandbox", "refused"):
            measure = f"Foundry.call ({workload}) with OpenTelemetry {r['mode']} vs hookless"
            ratio = r["workloads"][workload]["ratio"]
            if r["mode"] == "absent":
                goal_line(measure, ratio, goal="<= 1.05x", met=ratio <= 1.05)
            elif workload == "sandbox":
                goal_line(measure, ratio)


if __name__ == "__main__":
    main()
