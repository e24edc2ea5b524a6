"""Forge timings: the create path's parts, one draft of 10 tests, medians of repeated runs.

    .venv/bin/python bench/bench_forge.py

``forge_draft`` end to end (parse, static check, the tests in the sandbox, policy),
``parse_draft`` alone and ``check_javascript`` on a small tool and on a ~300 KiB module.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from harness import goal_line
from toolfoundry.forge import check_javascript, forge_draft, parse_draft

DRAFT: dict[str, Any] = {
    "name": "slugify",
    "description": "Make slugs",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "code": "export function handler({ text }) {\n"
    "  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-')\n}",
    "tests": [
        {"input": {"text": f"Hello World {i}"}, "expected": f"hello-world-{i}"} for i in range(10)
    ],
}
BIG = (
    "export function handler({ a }) {\n"
    + "".join(f"  const v{i} = a.map(x => x * {i});\n" for i in range(7000))
    + "}\n"
)


def p50(fn: Callable[[], object], runs: int = 40) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    assert forge_draft(DRAFT).status.value == "active"  # warm the engine first
    forged = p50(lambda: forge_draft(DRAFT))
    print(f"forge_draft, 10 tests (end to end): p50 {forged:.1f} ms")
    goal_line("forge_draft of a draft with 10 tests, p50", forged, "ms")
    print(f"parse_draft: p50 {p50(lambda: parse_draft(DRAFT)):.2f} ms")
    print(
        f"check_javascript, small tool: p50 {p50(lambda: check_javascript(DRAFT['code'])):.2f} ms"
    )
    size = len(BIG) // 1024
    print(f"check_javascript, {size} KiB: p50 {p50(lambda: check_javascript(BIG), 3):.0f} ms")


if __name__ == "__main__":
    main()
