"""Every bundled library does real work inside the sandbox, in the import forms models write."""

from __future__ import annotations

from typing import Any

import pytest

from toolfoundry.sandbox import run_js
from toolfoundry.sandbox.js.modules import MANIFEST

pytestmark = pytest.mark.skipif(not MANIFEST.exists(), reason="npm libraries not built")

CASES: list[tuple[str, str, Any]] = [
    (
        "decimal.js",
        """import Decimal from "decimal.js";
        export default new Decimal("0.1").plus("0.2").times(3).toFixed(2)""",
        "0.90",
    ),
    (
        "decimal.js named",
        """import { Decimal } from "decimal.js";
        export default Decimal.sqrt(2).toSignificantDigits(5).toString()""",
        "1.4142",
    ),
    (
        "js-yaml default",
        """import yaml from "js-yaml";
        export default yaml.load("a: 1\\nb: [x, y]\\n")""",
        {"a": 1, "b": ["x", "y"]},
    ),
    (
        "js-yaml named",
        """import { dump } from "js-yaml"; export default dump({ k: [1, 2] })""",
        "k:\n  - 1\n  - 2\n",
    ),
    (
        "dayjs with plugin",
        """import dayjs from "dayjs"; import utc from "dayjs/plugin/utc";
        dayjs.extend(utc);
        export default dayjs.utc("2024-02-28T10:00:00Z").add(1, "day").format("YYYY-MM-DD")""",
        "2024-02-29",
    ),
    (
        "papaparse",
        """import Papa from "papaparse";
        export default Papa.parse("a,b\\n1,2\\n3,4", { header: true, dynamicTyping: true }).data""",
        [{"a": 1, "b": 2}, {"a": 3, "b": 4}],
    ),
    (
        "marked",
        """import { marked } from "marked"; export default marked.parse("# Hi *there*")""",
        "<h1>Hi <em>there</em></h1>\n",
    ),
    (
        "fast-xml-parser",
        """import { XMLParser } from "fast-xml-parser";
        export default new XMLParser().parse("<r><i>1</i><i>2</i></r>")""",
        {"r": {"i": [1, 2]}},
    ),
    (
        "diff",
        """import * as Diff from "diff";
        const parts = Diff.diffWords("the cat", "the dog");
        export default parts.filter((p) => p.added).map((p) => p.value)""",
        ["dog"],
    ),
    (
        "jsonpath-plus",
        """import { JSONPath } from "jsonpath-plus";
        const json = { items: [{ id: 1 }, { id: 2 }] };
        export default JSONPath({ path: "$.items[*].id", json })""",
        [1, 2],
    ),
]


@pytest.mark.parametrize(("name", "code", "expected"), CASES, ids=[c[0] for c in CASES])
def test_library_does_real_work(name: str, code: str, expected: Any) -> None:
    r = run_js(code)
    assert r.ok, r.error
    assert r.value == expected
