"""The reads of every tool at once (issue 15: ``Foundry.tools()``, the catalogue): their cost
grows with the rows and no faster. Checked by counting, not timing: no cyclic collection
runs while the records are built, the SQLite plan sorts nothing, and the positional row
mapping and the JSON fast path give what the mapping and ``json.loads`` give."""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import text

from toolfoundry.base.collector import gc_paused
from toolfoundry.registry import NewVersion, Registry, VersionStatus
from toolfoundry.registry import versions as version_reads
from toolfoundry.registry.codecs import (
    ROW_COLUMNS,
    decoded,
    version_record,
    version_records,
)
from toolfoundry.spec import Capabilities

TOOLS = 40


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
def reg(db_url: str) -> Iterator[Registry]:
    registry = Registry.open(db_url)
    for i in range(TOOLS):
        registry.add_version(new(i))
    yield registry
    registry.close()


def collections_during(fn: Callable[[], Any]) -> int:
    """How many cyclic collections start while ``fn`` runs, with the youngest generation's
    threshold low enough that building a few hundred objects sets one off."""
    started: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started.append(info["generation"])

    threshold = gc.get_threshold()
    gc.set_threshold(10, 10, 10)
    gc.callbacks.append(count)
    try:
        fn()
    finally:
        gc.callbacks.remove(count)
        gc.set_threshold(*threshold)
    return len(started)


@pytest.mark.parametrize("read", ["current", "listing"])
def test_bulk_reads_build_their_records_without_a_collection(reg: Registry, read: str) -> None:
    if not gc.isenabled():
        pytest.skip("the collector is paused for this whole process")
    reader = getattr(version_reads, read)
    with reg.engine.connect() as conn:
        reader(conn), reader(conn, limit=1)  # statements compiled and cached outside the count
        # the collector is global: another thread's allocations (a pool, PostgreSQL's
        # listener) may set one off meanwhile, hence the fewest of three against the most
        one = max(collections_during(lambda: reader(conn, limit=1)) for _ in range(3))
        every = min(collections_during(lambda: reader(conn)) for _ in range(3))
        # the statements cost the same few collections; the rows add none, but that of what
        # the read built, which may start as the collector resumes
        assert every <= one + 1, (one, every)
        assert collections_during(lambda: [{"a": [i]} for i in range(TOOLS * 20)]) > 20


def test_gc_paused_nests_and_restores() -> None:
    was = gc.isenabled()
    gc.enable()
    try:
        with gc_paused():
            assert not gc.isenabled()
            with gc_paused():
                assert not gc.isenabled()
            assert not gc.isenabled()  # the inner pause leaves the outer one alone
        assert gc.isenabled()
        gc.disable()
        with gc_paused():
            pass
        assert not gc.isenabled()  # paused by someone else: still paused
    finally:
        (gc.enable if was else gc.disable)()


def test_the_current_versions_read_sorts_nothing_on_sqlite(reg: Registry) -> None:
    if reg.engine.dialect.name != "sqlite":
        pytest.skip("SQLite's query plan")
    for status in (None, VersionStatus.ACTIVE):
        query = version_reads._current(version_reads._versions(), status, None, None, 0)
        compiled = query.compile(reg.engine, compile_kwargs={"literal_binds": True})
        with reg.engine.connect() as conn:
            plan = [row[3] for row in conn.execute(text(f"EXPLAIN QUERY PLAN {compiled}"))]
        assert not any("TEMP B-TREE" in step for step in plan), plan  # ORDER BY name: the index
        assert any(step.startswith("SEARCH tf_versions") for step in plan), plan


def test_positional_records_equal_mapped_records(reg: Registry) -> None:
    with reg.engine.connect() as conn:
        result = conn.execute(
            version_reads._current(version_reads._versions(), None, None, None, 0)
        )
        keys, rows = list(result.keys()), result.all()
    assert tuple(keys) == ROW_COLUMNS
    positional = version_records(keys, rows, {})
    mapped = [version_record(row._mapping, {}) for row in rows]
    assert positional == mapped == reg.current_versions()
    assert len(positional) == TOOLS
    # columns in another order go through the mapping
    order = list(reversed(range(len(keys))))
    shuffled = version_records([keys[i] for i in order], [[r[i] for i in order] for r in rows], {})
    assert shuffled == positional


@pytest.mark.parametrize(
    "stored",
    [
        "[]",
        "{}",
        "null",
        '{"type": "object", "properties": {"q": {"type": "string"}}}',
        '[{"name": "#0", "passed": true}]',
        " [1, 2] ",
        "[1] ",
        '"caf\\u00e9 \\ud83d\\ude00"',
        "1e400",
        "-0.0",
        "123456789012345678901234567890",
    ],
)
def test_decoded_is_json_loads(stored: str) -> None:
    out = decoded(stored)
    assert out == json.loads(stored) or (out != out and json.loads(stored) != json.loads(stored))
    assert type(out) is type(json.loads(stored))


@pytest.mark.parametrize("stored", ["", "[1] x", "\ufeff[]", "[1,]", "{'a': 1}"])
def test_decoded_refuses_what_json_loads_refuses(stored: str) -> None:
    with pytest.raises(json.JSONDecodeError) as expected:
        json.loads(stored)
    with pytest.raises(json.JSONDecodeError) as got:
        decoded(stored)
    assert str(got.value) == str(expected.value)
