"""Server caches are bounded by bytes: 150 distinct ~1 MB rejected drafts through
Foundry.create_tool do not grow the process (they grew a server from 101 to 701 MB).

Measured as RSS in a fresh subprocess, after a warm-up of 20 drafts (the interpreter, the
sandbox and the caches' first fill), so nothing else in the test process counts. Before the
caches were bounded by bytes (base/lru.SizedLRU) the same run grew by ~145 MB.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolfoundry import Foundry

SCRIPT = r"""
import gc, json, sys
from toolfoundry import Foundry
from toolfoundry.config import Config

def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20

def draft(i):
    # ~1 MB: ten 100 KB descriptions, distinct per draft; its test fails, so it is rejected
    props = {f"p{k}": {"type": "string", "description": f"{i} " + "x" * 100_000} for k in range(10)}
    return {"name": f"big_{i}", "description": "A big draft.",
            "parameters": {"type": "object", "properties": props},
            "code": "export function handler() { return 1 }",
            "tests": [{"input": {}, "expected": 2}]}

fd = Foundry.open(f"sqlite:///{sys.argv[1]}", config=Config())
marks = []
for i in range(150):
    assert fd.create_tool(draft(i)).status == "rejected"
    if i in (19, 149):
        gc.collect()
        marks.append(rss_mib())
print(json.dumps(marks))
"""

GROWTH_MIB = 48  # unbounded, the 130 drafts after the warm-up held ~145 MiB


@pytest.mark.slow
def test_distinct_rejected_drafts_do_not_grow_the_process(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "registry.db")],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    warm, end = json.loads(out.stdout)
    assert end - warm < GROWTH_MIB, (warm, end)


def test_the_call_path_cache_counts_each_versions_bytes(fd: Foundry) -> None:
    for mark in "abc":  # three versions of ~200 KB of code each
        code = f"// {mark * 200_000}\nexport function handler() {{ return '{mark}' }}"
        draft = {
            "name": "padded",
            "description": "Returns its version's letter.",
            "code": code,
            "tests": [{"input": {}, "expected": mark}],
            "changes_tests": [0] if mark != "a" else [],
        }
        assert fd.create_tool(draft).status == "active"
    cache = fd._caller._versions  # the Caller's per-version SizedLRU
    assert [fd.call("padded", {}, version=v).value for v in (1, 2, 3)] == ["a", "b", "c"]
    assert len(cache) == 3
    assert cache.size >= 3 * 200_000  # the code is counted
    cache.clear()
    cache.max_bytes = 450_000  # room for two: the bound holds as versions keep coming
    assert [fd.call("padded", {}, version=v).value for v in (1, 2, 3)] == ["a", "b", "c"]
    assert cache.size <= 450_000
    assert len(cache) == 2
