"""No call can time what earlier calls imported (cross-call state).

An import served from cached bytecode is 5-12x faster than one compiled from source, and the
cache is process-wide, so a cache filled by whatever calls imported was a timing channel
between tools. ``sandbox.js.run.prepare_libraries`` compiles every bundled library on the process's
first JavaScript call, before that call's code runs; the cache never changes afterwards. These
tests assert the mechanism, not timings (bench/ measures those).
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = r"""
import json
from toolfoundry.sandbox import run_js
from toolfoundry.sandbox.js.modules import default_catalog
from toolfoundry.sandbox.js import host_calls

catalog = default_catalog()
before = sorted(n for n in catalog.names() if catalog.bytecode(n) is not None)
served_from_source = []
original = host_calls.CallHost._import

def spy(self, specifier):
    answer = original(self, specifier)
    if not self.trusted and answer[:1] == b"S" and specifier in catalog.names():
        served_from_source.append(specifier)
    return answer

host_calls.CallHost._import = spy
first = run_js('import _ from "lodash"; export default _.chunk([1, 2, 3], 2)')
after_first = {n: catalog.bytecode(n) for n in catalog.names()}
second = run_js('import { z } from "zod"; import d from "dayjs"; export default 1')
after_second = {n: catalog.bytecode(n) for n in catalog.names()}
print(json.dumps({
    "before": before,
    "names": catalog.names(),
    "first": first.value,
    "second": second.value,
    "uncached": sorted(n for n, b in after_first.items() if b is None),
    "unchanged": after_first == after_second,
    "served_from_source": served_from_source,
}))
"""


def test_every_library_is_compiled_before_the_first_tool_import_and_never_after() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=True
    )
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["before"] == []  # a new process starts with an empty cache
    assert report["first"] == [[1, 2], [3]]
    assert report["second"] == 1
    assert len(report["names"]) > 10
    # the first call already found every library compiled, and later calls change nothing
    assert report["uncached"] == []
    assert report["unchanged"] is True
    assert report["served_from_source"] == []  # no tool import compiled a bundle itself


KEPT_SCRIPT = r"""
import json
from toolfoundry.sandbox import run_js
from toolfoundry.sandbox.js import library_cache
from toolfoundry.sandbox.js import run as sandbox_run
from toolfoundry.sandbox.js.modules import default_catalog
from toolfoundry.sandbox.js.wasm_engine import default_engine

compiled = []
original = sandbox_run._compile_library

def counting(specifier):
    compiled.append(specifier)
    original(specifier)

sandbox_run._compile_library = counting
result = run_js('import D from "decimal.js"; export default new D(1).plus(2).toString()')
catalog = default_catalog()
kept = library_cache.load(default_engine().snapshot_key, catalog.identity())
print(json.dumps({
    "value": result.value,
    "compiled": compiled,
    "uncached": [n for n in catalog.names() if catalog.bytecode(n) is None],
    "same_as_file": kept == catalog.cached_bytecode(),
}))
"""


def test_a_later_process_reads_the_kept_bytecode_whole_before_its_first_call() -> None:
    runs = [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", KEPT_SCRIPT],
                capture_output=True,
                text=True,
                timeout=300,
                check=True,
            ).stdout.splitlines()[-1]
        )
        for _ in range(2)  # the first may compile (and keep) them; the second must not
    ]
    last = runs[-1]
    assert last["value"] == "3"
    assert last["compiled"] == []  # nothing compiled: every library came from the file
    assert last["uncached"] == []  # and the cache was full before the tool's import
    assert last["same_as_file"] is True


def test_a_kept_file_that_is_not_exactly_ours_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolfoundry.sandbox.js import library_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    entries = {"decimal.js": b"\x01bytecode", "dayjs": b"", "caf\u00e9": b"\xff" * 3}
    library_cache.store("k", b"identity", entries)
    assert library_cache.load("k", b"identity") == entries
    assert library_cache.load("k", b"other library files") == {}
    assert library_cache.load("other guest", b"identity") == {}
    data = library_cache.path_for("k").read_bytes()
    head = len(library_cache.MAGIC) + 32
    damaged = [
        data[:-1],  # truncated inside the last entry
        data[: head + 3],  # truncated inside an entry's lengths
        data[:head] + struct.pack("<II", 2**32 - 1, 0) + data[head + 8 :],  # a length past the end
        data[:head] + struct.pack("<II", 1, 0) + b"\xff",  # a name that is not UTF-8
        b"\x00" + data[1:],  # not the magic
    ]
    for bad in damaged:
        assert library_cache.decode(bad, b"identity") == {}
    assert library_cache.decode(data[:head], b"identity") == {}  # no entries: nothing kept


def test_the_catalog_keeps_only_its_own_libraries_from_a_file() -> None:
    from toolfoundry.sandbox.js.modules import LibraryCatalog

    catalog = LibraryCatalog()
    catalog.keep_bytecode("not-a-bundled-library", b"code")
    catalog.keep_bytecode("decimal.js", b"")  # empty: a failed compile, never kept
    assert catalog.cached_bytecode() == {}
    catalog.keep_bytecode("decimal.js", b"code")
    assert catalog.cached_bytecode() == {"decimal.js": b"code"}
