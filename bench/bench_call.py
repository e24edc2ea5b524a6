"""The call path's cost over the sandbox: ``Foundry.call`` vs a bare ``run_js`` of the same code,
on SQLite and on PostgreSQL side by side.

    .venv/bin/python bench/bench_call.py [--rounds 15] [--batch 5] [--postgres]

Two workloads: a JSON transform of 1 000 objects (arguments and result both about 60 kB of
JSON) and a trivial call. For each, ``run_js`` of the tool's own code under the tool's own
sandbox policy is the baseline; ``Foundry.call`` adds the name lookup, the JSON gate and schema
validation of the arguments, and the usage + audit record. With ``--postgres`` the same tool is
called on a fresh PostgreSQL database too. Every side runs in every round, the order reversed
each round (ABC CBA), so load from other processes hits all alike; each cell is the median
over rounds of a batch's mean. Printed: ms per call, call / run_js, PostgreSQL / SQLite. Goals:
call <= 1.2x run_js on the 1 000-object transform; a trivial call on PostgreSQL <= 1.5x the same
call on SQLite. The breakdown lines time the call path's own parts alone.
"""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from collections.abc import Callable
from functools import partial
from typing import Any

from harness import (
    PG_SERVER,
    fresh_database,
    goal_line,
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
    """Median ms per call of each side, a batch of each a round, the order reversed every
    round."""
    for fn in sides.values():  # warm: engine pool, module cache, validators, statements
        for _ in range(3):
            fn()
    batches = {name: partial(batch_ms, fn, batch) for name, fn in sides.items()}
    return interleaved(batches, rounds, abba=True)


def bench(stores: dict[str, Foundry], rounds: int, batch: int) -> None:
    labels = list(stores)
    on = " and ".join(labels)
    print(f"Foundry.call vs run_js of the same code on {on}, {rounds} rounds x {batch}")
    head = f"  {'workload':<24} {'run_js ms':>10}"
    for label in labels:
        head += f" {label + ' ms':>15} {'/ run_js':>9}"
    if len(labels) > 1:
        head += f" {labels[1] + ' / ' + labels[0]:>22}"
    print(head)
    for workload, (draft, args) in drafts().items():
        one(stores, workload, draft, args, rounds, batch)


def one(
    stores: dict[str, Foundry],
    workload: str,
    draft: dict[str, Any],
    args: dict[str, Any],
    rounds: int,
    batch: int,
) -> None:
    name = draft["name"]
    for fd in stores.values():
        created = fd.create_tool(draft)
        assert created.status == "active", created
        check = fd.call(name, args)
        assert check.ok, check.error
    first = next(iter(stores.values()))
    # the version and sandbox policy the call path prepared for itself
    prepared = first._caller._prepared(*_row(first, name))
    tool, policy = prepared[0], prepared[1]
    code = tool.code
    sides: dict[str, Callable[[], Any]] = {"run_js": lambda: run_js(code, args, policy)}
    for label, fd in stores.items():
        sides[label] = partial(fd.call, name, args)
    medians = abba(sides, rounds, batch)
    line = f"  {workload:<24} {medians['run_js']:>10.2f}"
    for label in stores:
        line += f" {medians[label]:>15.2f} {medians[label] / medians['run_js']:>8.2f}x"
    labels = list(stores)
    if len(labels) > 1:
        line += f" {medians[labels[1]] / medians[labels[0]]:>21.2f}x"
    print(line)
    if workload.startswith("1 000"):
        for label in labels:
            ratio = medians[label] / medians["run_js"]
            measure = f"Foundry.call vs run_js, {workload} ({label})"
            goal_line(measure, ratio, goal="<= 1.2x", met=ratio <= 1.2)
    elif len(labels) > 1:
        pg = medians[labels[1]] / medians[labels[0]]
        measure = f"{workload}: {labels[1]} vs {labels[0]}"
        goal_line(measure, pg, goal="<= 1.5x", met=pg <= 1.5)
    for label, fd in stores.items():
        validator = fd._caller._prepared(*_row(fd, name))[2]
        parts = {
            "lookup": partial(fd.registry.calls.resolve, name, None),
            "gate + schema": partial(gated_arguments, tool.parameters, args, validator=validator),
            "usage + audit record": partial(
                fd.registry.record_call, name, 1, duration_ms=1.0, error_kind=None
            ),
        }
        shown = ", ".join(f"{k} {batch_ms(fn, batch * 4):.3f} ms" for k, fn in parts.items())
        print(f"    {label} parts alone: {shown}")


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
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        stores = {"sqlite": stack.enter_context(Foundry.open(f"sqlite:///{tmp}/bench.db"))}
        if ns.postgres:
            url = stack.enter_context(fresh_database())
            stores["postgresql"] = stack.enter_context(Foundry.open(url))
        bench(stores, ns.rounds, ns.batch)
    print_load_after()


if __name__ == "__main__":
    main()
