"""Argument validation: the Python ``jsonschema`` validator the host used vs base/json_schema.py.

    .venv/bin/python bench/bench_validation.py [--rounds 30]

The argument is an object whose ``items`` array holds 1 000 objects of five
fields (integer with a minimum, string with a pattern and a minLength, number, array of
strings, boolean; required fields, no additional properties). Both validators are compiled
once beforehand (as a version's validator is), then timed round by round, interleaved, so
both see the same machine load: ``old`` is ``Draft202012Validator.iter_errors`` (what
``argument_problems`` called), ``new`` is ``CompiledSchema.problems`` (what it calls now),
``JSON gate`` is the gate's own walk of the value (json_gate.check: depth, numbers, Unicode),
and ``call path`` is ``argument_problems`` itself, gate walk included. Printed: the
median per call and the ratio new/old. Then the hostile case, new engine only: ``^(a+)+$``
against 30 characters (Python's ``re`` takes minutes there; it is not run).
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from jsonschema import Draft202012Validator

from harness import goal_line, interleaved, load, timed
from toolfoundry.base.json_gate import check
from toolfoundry.base.json_schema import compile_schema
from toolfoundry.foundry.call import argument_problems

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "minimum": 0},
                    "name": {"type": "string", "minLength": 1, "pattern": "^[a-z ]+$"},
                    "price": {"type": "number"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "active": {"type": "boolean"},
                },
                "required": ["id", "name"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["items"],
}
ARGUMENT = {
    "items": [
        {"id": i, "name": "item name", "price": 1.5, "tags": ["a", "b"], "active": True}
        for i in range(1000)
    ]
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    rounds = parser.parse_args().rounds
    old = Draft202012Validator(SCHEMA)
    new = compile_schema(SCHEMA)
    assert not list(old.iter_errors(ARGUMENT))
    assert not new.problems(ARGUMENT)
    seconds = interleaved(
        {
            "old: jsonschema iter_errors": timed(lambda: list(old.iter_errors(ARGUMENT))),
            "new: CompiledSchema.problems": timed(lambda: new.problems(ARGUMENT)),
            "JSON gate: check (its own walk)": timed(lambda: check(ARGUMENT)),
            "call path: argument_problems": timed(
                lambda: argument_problems(SCHEMA, ARGUMENT, validator=new)
            ),
        },
        rounds,
    )
    medians = {name: s * 1e3 for name, s in seconds.items()}
    base = medians["old: jsonschema iter_errors"]
    print(f"load average {load():.2f}, {rounds} interleaved rounds, median per call")
    print(f"{'1 000-object argument':34} {'ms':>9} {'x old':>8}")
    for name, ms in medians.items():
        print(f"{name:34} {ms:9.3f} {ms / base:8.3f}")
    ours = medians["new: CompiledSchema.problems"]
    goal_line("a 1 000-object argument validated vs jsonschema's iter_errors", ours / base)
    goal_line("a 1 000-object argument validated", ours, "ms", goal="<= 2 ms", met=ours <= 2)
    started = time.perf_counter()
    compile_schema(dict(SCHEMA, title="fresh")).problems(ARGUMENT)
    print(f"{'compile + validate, uncached':34} {(time.perf_counter() - started) * 1e3:9.3f}")
    hostile = compile_schema({"type": "string", "pattern": "^(a+)+$"})
    for length in (30, 100_000):
        text = "a" * length + "!"
        started = time.perf_counter()
        assert hostile.problems(text)
        took = (time.perf_counter() - started) * 1e3
        print(f"{f'^(a+)+$ vs {length} chars + !':34} {took:9.3f}   (Python re: not run)")


if __name__ == "__main__":
    main()
