"""Reads of every tool at once build their records without a cyclic collection (the cost of
``Foundry.tools()``, the catalogue and the MCP listing grows with the rows and no faster).

Counted, not timed: the counting runs in an interpreter of its own, with nothing else
allocating (in the test process, a pool or a listener thread left by an earlier test could set
a collection off during the count), and each count starts from empty generations. The
youngest generation's threshold is set low enough that building a few hundred objects sets
one off, so a read that built its records with the collector running would start several.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.performance.interpreter import run_json

from toolfoundry.registry import NewVersion, Registry, VersionStatus
from toolfoundry.spec import Capabilities

TOOLS = 40

# argv[1]: the registry's URL. Prints {read: [collections for one tool, for every tool]}.
COUNT = """
import gc, json, sys
from toolfoundry.registry import Registry, VersionStatus
from toolfoundry.registry import versions as reads

def collections_during(fn):
    started = []
    def count(phase, info):
        if phase == "start":
            started.append(info["generation"])
    threshold = gc.get_threshold()
    gc.collect()  # every count starts from empty generations: the same work, the same count
    gc.set_threshold(10, 10, 10)
    gc.callbacks.append(count)
    try:
        fn()
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*threshold)
    return len(started)

registry = Registry.open(sys.argv[1])
one = ["tool_001"]
cases = {
    "current": (lambda c: reads.current(c, limit=1), lambda c: reads.current(c)),
    "listing": (lambda c: reads.listing(c, limit=1), lambda c: reads.listing(c)),
    "specs": (
        lambda c: reads.specs(c, names=one),
        lambda c: reads.specs(c, status=VersionStatus.ACTIVE),
    ),
}
counts = {}
with registry.engine.connect() as conn:
    for name, (few, every) in cases.items():
        few(conn), every(conn)  # statements compiled and cached outside the count
        counts[name] = [
            collections_during(lambda: few(conn)),
            collections_during(lambda: every(conn)),
        ]
counts["control"] = [collections_during(lambda: [{"a": [i]} for i in range(800)]), 0]
registry.close()
print(json.dumps(counts))
"""


def new(i: int) -> NewVersion:
    return NewVersion(
        name=f"tool_{i:03d}",
        code=f"export function handler() {{ return {i}; }}",
        description=f"Tool {i}",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        status=VersionStatus.ACTIVE if i % 3 else VersionStatus.PENDING_APPROVAL,
        capabilities=Capabilities(network=("api.example.com",)) if i % 2 else Capabilities(),
        tests=[{"input": {"q": "a"}, "expected": i}],
        test_results=[{"name": "#0", "passed": True}],
    )


@pytest.fixture
def seeded(db_url: str) -> str:
    registry = Registry.open(db_url)
    for i in range(TOOLS):
        registry.add_version(new(i))
    registry.close()
    return db_url


def test_bulk_reads_build_their_records_without_a_collection(seeded: str, tmp_path: Path) -> None:
    counts = run_json(COUNT, tmp_path, args=[seeded])
    # the control shows the low threshold works: 800 small objects set several off
    assert counts.pop("control")[0] > 20
    for read, (one, every) in counts.items():
        # the statements cost the same few collections whatever the rows; the rows add none,
        # but the one of what the read built, which may start as the collector resumes
        assert every <= one + 1, (read, one, every)
