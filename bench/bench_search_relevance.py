"""Search relevance: the floor's effect on a realistic library, and what weighing costs.

    .venv/bin/python bench/bench_search_relevance.py                  # SQLite and PostgreSQL
    .venv/bin/python bench/bench_search_relevance.py --no-postgres --tools 100000

Part 1 sweeps the relevance floor over tests/registry/search_library.py: how often the right
tool ranks first (plain-language queries and near-synonyms), how many needs no tool covers get
nothing, and how many other hits the matched queries carry. Part 2 times search(k=5) over a
large synthetic registry for queries that take the widened (any-word) path, the only one that
weighs relevance, against the same search with weighing switched off (the previous code path),
interleaved in the same run.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' search library

from tests.registry.search_library import LIBRARY, NEAR, QUERIES, UNRELATED

from bench_registry import seed
from harness import fresh_schema, percentile
from toolfoundry import Foundry
from toolfoundry.registry import NewVersion, Registry
from toolfoundry.registry import search as fulltext
from toolfoundry.spec import VersionStatus

FLOORS = (0.0, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6)


def fill(registry: Registry) -> None:
    for name, description, parameters in LIBRARY:
        registry.add_version(
            NewVersion(
                name=name,
                code=f"export function handler() {{ return {name!r}; }}\n",
                description=description,
                parameters=parameters,
                status=VersionStatus.ACTIVE,
            )
        )


def sweep(url: str, label: str) -> None:
    registry = Registry.open(url)
    fill(registry)
    matched = QUERIES + NEAR
    print(f"[{label}] {len(LIBRARY)} tools, {len(matched)} queries, {len(UNRELATED)} unrelated")
    for floor in FLOORS:
        tops, others = 0, 0
        for query, wanted in matched:
            hits = registry.search(query, 5, floor=floor)
            tops += bool(hits) and hits[0].name == wanted
            others += max(len(hits) - 1, 0)
        empty = sum(1 for q in UNRELATED if not registry.search(q, 5, floor=floor))
        mark = "  <- RELEVANCE_FLOOR" if floor == fulltext.RELEVANCE_FLOOR else ""
        print(
            f"  floor {floor:.2f}: right tool first {tops:2}/{len(matched)}   "
            f"unrelated get nothing {empty:2}/{len(UNRELATED)}   other hits {others:3}{mark}"
        )
    registry.close()


def unweighed(conn: Any, counts: Any, hits: list[tuple[int, Any]]) -> list[Any]:
    return [hit for _, hit in hits]


def cost(url: str, label: str, count: int, runs: int) -> None:
    print(f"[{label}] search over {count} synthetic tools, {runs} widened queries each way")
    rng = random.Random(11)
    fd = Foundry.open(url)
    corpus = seed(fd, count, rng)
    # two words of a tool plus one no tool has: the all-words search finds nothing, so the
    # any-word search runs and its hits are weighed
    queries = [" ".join([*rng.sample(rng.choice(corpus), 2), "zebrafoo"]) for _ in range(runs)]
    weighed = fulltext._weighed
    for q in queries[:5]:
        fd.search(q)
    with_floor: list[float] = []
    without: list[float] = []
    for q in queries:  # interleaved: the same load for both
        for out, fn in ((with_floor, weighed), (without, unweighed)):
            fulltext._weighed = fn  # type: ignore[assignment,unused-ignore]
            started = time.perf_counter()
            fd.search(q, 5)
            out.append((time.perf_counter() - started) * 1000)
    fulltext._weighed = weighed
    fd.close()
    for name, values in (("without weighing (baseline)", without), ("with the floor", with_floor)):
        p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
        ratio = p50 / percentile(without, 0.5)
        print(f"  {name:28} p50 {p50:7.3f} ms   p95 {p95:7.3f} ms   x{ratio:.2f}")


def on_postgres(run: Callable[[str], None]) -> None:
    with fresh_schema() as url:
        run(url)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tools", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        sweep(f"sqlite:///{tmp}/library.db", "sqlite")
        cost(f"sqlite:///{tmp}/scale.db", "sqlite", args.tools, args.runs)
    if not args.no_postgres:
        on_postgres(lambda url: sweep(url, "postgresql"))
        on_postgres(lambda url: cost(url, "postgresql", args.tools, args.runs))


if __name__ == "__main__":
    main()
