"""No call can time what earlier calls imported (issue 11: cross-call state).

An import served from cached bytecode is 5-12x faster than one compiled from source, and the
cache is process-wide, so a cache filled by whatever calls imported was a timing channel
between tools. ``sandbox._prepare_libraries`` compiles every bundled library on the process's
first JavaScript call, before that call's code runs; the cache never changes afterwards. These
tests assert the mechanism, not timings (bench/ measures those).
"""

from __future__ import annotations

import json
import subprocess
import sys

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
