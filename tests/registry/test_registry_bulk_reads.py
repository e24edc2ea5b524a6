"""The reads of every tool at once (``Foundry.tools()``, the catalogue): the positional row
mapping and the JSON fast path give what the mapping and ``json.loads`` give, and the
collector pause they are built under nests. That they build without a cyclic collection and
sort nothing is guarded in tests/performance/ (test_read_collections.py,
test_read_query_plans.py)."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator

import pytest

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
