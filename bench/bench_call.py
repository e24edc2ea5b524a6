"""The call path's cost over the sandbox: ``Foundry.call`` vs a bare ``run_js`` of the same code.

    .venv/bin/python bench/bench_call.py [--rounds 15] [--batch 5] [--postgres]

Two workloads: a JSON transform of 1 000 objects (arguments and result both about
60 kB of JSON) and a trivial call. For each, ``run_js`` of the tool's own code under the tool's
own sandbox policy is the baseline; ``Foundry.call`` adds the name lookup, the JSON gate and
schema validation of the arguments, and the usage + audit record. Sides alternate round by
round (ABBA), so load from other processes hits both alike; each cell is the median over
rounds of a batch's mean. Printed: per-call ms and the ratio call / run_js (goal <= 1.2 on the
1 000-object transform). The breakdown lines time the call path's own parts alone.
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable
from functools import partial
from typing import Any

from harness import (
    PG_SERVER,
    fresh_database,
    interleaved,
    per_call,
    print_load_after,
    print_load_before,
)
from toolfoundry import Foundry
from toolfoundry.foundry.call import gated_arguments
from toolfoundry.sandbox import run_js

TRANSFORM = """export function handler({ items }) {
  return items.map((it) => ({
    id: it.id,
    label: it.name.toUpperCase(),
    total: Math.round(it.price * it.qty * 100) / 100,
    tags: it.tags.filter((t) => t !== "x"),
    active: it.active,
  }));
}
"""
ITEM = {
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": 0},
        "name": {"type": "string", "minLength": 1},
        "price": {"type": "number"},
        "qty": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "active": {"type": "boolean"},
    },
    "required": ["id", "name", "price", "qty", "tags"],
    "additionalProperties": False,
}
TRANSFORM_PARAMS = {
    "type": "object",
    "properties": {"items": {"type": "array", "items": ITEM}},
    "required": ["items"],
}
ITEMS = [
    {
        "id": i,
        "name": f"item {i}",
        "price": i * 0.5,
        "qty": i % 7,
        "tags": ["a", "x", "b"],
        "active": i % 2 == 0,
    }
    for i in range(1000)
]
TRIVIAL = "export function handler({ x }) { return x + 1; }\n"
TRIVIAL_PARAMS = {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}


def drafts() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """name -> (draft, the arguments timed)."""
    two = ITEMS[:2]
    expected = [
        {"id": 0, "label": "ITEM 0", "total": 0, "tags": ["a", "b"], "active": True},
        {"id": 1, "label": "ITEM 1", "total": 0.5, "tags": ["a", "b"], "active": False},
    ]
    transform = {
        "name": "transform_items",
        "description": "Turn a list of items into labelled totals without the x tag.",
        "parameters": TRANSFORM_PARAMS,
        "code": TRANSFORM,
        "tests": [{"input": {"items": two}, "expected": expected}],
    }
    trivial = {
        "name": "add_one",
        "description": "Add one to an integer.",
        "parameters": TRIVIAL_PARAMS,
        "code": TRIVIAL,
        "tests": [{"input": {"x": 1}, "expected": 2}],
    }
    return {
        "1 000-object transform": (transform, {"items": ITEMS}),
        "trivial call": (trivial, {"x": 41}),
    }


def batch_ms(fn: Callable[[], Any], n: int) -> float:
    return per_call(fn, n) * 1000.0


def abba(sides: dict[str, Callable[[], Any]], rounds: int, batch: int) -> dict[str, float]:
    """Median ms per call of each side, a batch of each a round, in ABBA order."""
    for fn in sides.values():  # warm: engine pool, module cache, validators, statements
        for _ in range(3):
            fn()
    batches = {name: partial(batch_ms, fn, batch) for name, fn in sides.items()}
    return interleaved(batches, rounds, abba=True)


def bench(fd: Foundry, label: str, rounds: int, batch: int) -> None:
    print(f"[{label}] Foundry.call vs run_js of the same code, {rounds} rounds x {batch}")
    print(f"  {'workload':<26} {'run_js ms':>10} {'call ms':>10} {'ratio':>7}")
    for workload, (draft, args) in drafts().items():
        one(fd, workload, draft, args, rounds, batch)


def one(
    fd: Foundry, workload: str, draft: dict[str, Any], args: dict[str, Any], rounds: int, batch: int
) -> None:
    created = fd.create_tool(draft)
    assert created.status == "active", created
    name = draft["name"]
    check = fd.call(name, args)
    assert check.ok, check.error
    # the version, sandbox policy and validator the call path prepared for itself
    tool, policy, validator = fd._caller._prepared(*_row(fd, name))
    code = tool.code
    medians = abba(
        {"run_js": lambda: run_js(code, args, policy), "call": lambda: fd.call(name, args)},
        rounds,
        batch,
    )
    ratio = medians["call"] / medians["run_js"]
    goal = "  goal <= 1.2: " + ("met" if ratio <= 1.2 else "MISSED")
    goal = goal if workload.startswith("1 000") else ""
    print(
        f"  {workload:<26} {medians['run_js']:>10.2f} {medians['call']:>10.2f} {ratio:>6.2f}x{goal}"
    )
    parts = {
        "lookup": lambda: fd.registry.resolve(name),
        "gate + schema": lambda: gated_arguments(tool.parameters, args, validator=validator),
        "usage + audit record": lambda: fd.registry.record_call(
            name, 1, duration_ms=1.0, error_kind=None
        ),
    }
    shown = ", ".join(f"{k} {batch_ms(fn, batch * 4):.3f} ms" for k, fn in parts.items())
    print(f"    parts alone: {shown}")


def _row(fd: Foundry, name: str) -> tuple[int, str, int]:
    row_id, number, _ = fd.registry.resolve(name)
    return row_id, name, number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=15, help="ABBA rounds")
    parser.add_argument("--batch", type=int, default=5, help="calls per side per round")
    parser.add_argument("--postgres", action="store_true", help=f"also on {PG_SERVER}")
    ns = parser.parse_args()
    print_load_before()
    with tempfile.TemporaryDirectory() as tmp:
        fd = Foundry.open(f"sqlite:///{tmp}/bench.db")
        try:
            bench(fd, "sqlite", ns.rounds, ns.batch)
        finally:
            fd.close()
    if ns.postgres:
        bench_postgres(ns.rounds, ns.batch)
    print_load_after()


def bench_postgres(rounds: int, batch: int) -> None:
    with fresh_database() as url:
        fd = Foundry.open(url)
        try:
            bench(fd, "postgresql", rounds, batch)
        finally:
            fd.close()


if __name__ == "__main__":
    main()
