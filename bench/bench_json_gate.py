"""JSON gate benchmark: decode and encode against the stdlib they are built on.

    .venv/bin/python bench/bench_json_gate.py [--rounds 30]

Each document is decoded by ``json.loads`` (the baseline: no limits, RecursionError and
Infinity possible) and by ``toolfoundry.spec.json_gate.decode``, interleaved round by round
so both see the same machine load; the same for ``json.dumps`` and ``encode``, and for
``json.dumps`` and ``check`` (a Python value, as ``Foundry.call`` checks its arguments).
Printed: the median of each and the gate's ratio to the baseline. Also the cost of refusing
hostile input.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from toolfoundry.spec.json_gate import InvalidJson, check, decode, encode


def documents() -> dict[str, bytes]:
    item = {"id": 7, "name": "item café", "score": 1.5, "tags": ["a", "b"], "n": {"x": [1, None]}}
    return {
        "small result (40 B)": json.dumps({"slug": "hello-world", "n": 3}).encode(),
        "medium (10 KB, 250 brackets)": json.dumps([item] * 80, ensure_ascii=False).encode(),
        "large (2 MB)": json.dumps([item] * 20000, ensure_ascii=False).encode(),
        "astral text, ensure_ascii (200 KB)": json.dumps(["emoji 😀 " * 20] * 1000).encode(),
    }


def hostile() -> dict[str, bytes]:
    return {
        "1,000,000 deep": b"[" * 1_000_000 + b"]" * 1_000_000,
        "5000-digit integer": b"1" * 5000,
        "lone surrogate in 2 MB": json.dumps(["x" * 100] * 20000 + ["\ud800"]).encode(),
    }


def median_us(fn: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e6


def pair(
    base: Callable[[], Any], gate: Callable[[], Any], rounds: int, inner: int
) -> tuple[float, float]:
    base_t: list[float] = []
    gate_t: list[float] = []
    for _ in range(rounds):  # interleaved: each round measures both under the same load
        for fn, out in ((base, base_t), (gate, gate_t)):
            started = time.perf_counter()
            for _ in range(inner):
                fn()
            out.append((time.perf_counter() - started) / inner)
    return statistics.median(base_t) * 1e6, statistics.median(gate_t) * 1e6


def refuse(data: bytes) -> None:
    try:
        decode(data)
    except InvalidJson:
        return
    raise AssertionError("not refused")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    print(f"{'document':38} {'stdlib us':>11} {'gate us':>11} {'ratio':>7}")
    for name, data in documents().items():
        inner = max(1, 200_000 // len(data))
        base, gate = pair(lambda d=data: json.loads(d), lambda d=data: decode(d), rounds, inner)
        print(f"decode {name:31} {base:11.1f} {gate:11.1f} {gate / base:7.2f}")
        value = json.loads(data)
        base, gate = pair(
            lambda v=value: json.dumps(v, ensure_ascii=False, allow_nan=False),
            lambda v=value: encode(v),
            rounds,
            inner,
        )
        print(f"encode {name:31} {base:11.1f} {gate:11.1f} {gate / base:7.2f}")
        base, gate = pair(
            lambda v=value: json.dumps(v, ensure_ascii=False, allow_nan=False),
            lambda v=value: check(v),
            rounds,
            inner,
        )
        print(f"check  {name:31} {base:11.1f} {gate:11.1f} {gate / base:7.2f}")
    for name, data in hostile().items():
        print(f"refuse {name:31} {'':11} {median_us(lambda d=data: refuse(d), 5):11.1f}")


if __name__ == "__main__":
    main()
