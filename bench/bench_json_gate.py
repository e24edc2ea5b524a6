"""JSON gate benchmark: decode and encode against the stdlib they are built on.

    .venv/bin/python bench/bench_json_gate.py [--rounds 30]

Each document is decoded by ``json.loads`` (the baseline: no limits, RecursionError and
Infinity possible) and by ``toolfoundry.base.json_gate.decode``, interleaved round by round
so both see the same machine load; the same for ``json.dumps`` and ``encode``, and for
``json.dumps`` and ``check`` (a Python value, as ``Foundry.call`` checks its arguments).
Printed: the median of each and the gate's ratio to the baseline. Also the cost of refusing
hostile input.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections.abc import Callable
from functools import partial
from typing import Any

from harness import each, goal_line, interleaved, per_call
from toolfoundry.base.json_gate import InvalidJson, check, decode, encode


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
    return statistics.median(each(fn, rounds)) * 1e6


def pair(
    base: Callable[[], Any], gate: Callable[[], Any], rounds: int, inner: int
) -> tuple[float, float]:
    got = interleaved(
        {"base": lambda: per_call(base, inner), "gate": lambda: per_call(gate, inner)}, rounds
    )
    return got["base"] * 1e6, got["gate"] * 1e6


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
        value = json.loads(data)
        dumps = partial(json.dumps, value, ensure_ascii=False, allow_nan=False)
        sides: list[tuple[str, Callable[[], Any], Callable[[], Any]]] = [
            ("decode", partial(json.loads, data), partial(decode, data)),
            ("encode", dumps, partial(encode, value)),
            ("check ", dumps, partial(check, value)),
        ]
        for what, stdlib, ours in sides:
            base, gate = pair(stdlib, ours, rounds, inner)
            print(f"{what} {name:31} {base:11.1f} {gate:11.1f} {gate / base:7.2f}")
            if what != "check " and name.startswith(("small", "large")):  # a call's, a big one
                goal_line(f"{what} {name} vs the standard library's json", gate / base)
    for name, data in hostile().items():
        print(f"refuse {name:31} {'':11} {median_us(partial(refuse, data), 5):11.1f}")


if __name__ == "__main__":
    main()
