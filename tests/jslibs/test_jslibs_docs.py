"""docs/js-libraries.md stays true: its table matches the manifest and its code blocks run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from toolfoundry.sandbox import run_js

DOC = Path(__file__).resolve().parents[2] / "docs" / "js-libraries.md"
BLOCKS = re.findall(r"```js\n(.*?)```", DOC.read_text(), flags=re.S)
# block index -> (args, expected value)
EXPECTED: dict[int, tuple[Any, Any]] = {
    0: (None, [1, "0.3"]),
    1: ({"csv": "name,qty\napple,3\npear,1\nfig,2\n"}, ["apple", "fig"]),
    2: (
        None,
        [
            "1.234,50\xa0€",
            "1/1/1970",
            "26\xa0%",
            "1.2M",
            "7/5/2024, 10:07:00 AM",
            "yesterday",
            "two",
            ["a", "á", "b", "B"],
        ],
    ),
}


def test_table_matches_manifest(built: Path) -> None:
    manifest = json.loads((built / "libs" / "manifest.json").read_text())["libs"]
    rows = re.findall(r"^\| ([\w.-]+) \| (\d+\.\d+\.\d+) \| ([\d.]+) KB \|", DOC.read_text(), re.M)
    assert {name: version for name, version, _ in rows} == {
        name: entry["version"] for name, entry in manifest.items() if "/" not in name
    }
    for name, _, size in rows:
        actual = (built / "libs" / manifest[name]["file"]).stat().st_size / 1000
        assert abs(actual - float(size)) <= 0.1, f"{name}: the table says {size} KB"


def test_every_block_is_checked() -> None:
    assert set(EXPECTED) == set(range(len(BLOCKS)))


@pytest.mark.parametrize("index", [0, 1, 2], ids=["import forms", "papaparse tool", "intl"])
def test_code_block_runs(built: Path, index: int) -> None:
    args, expected = EXPECTED[index]
    result = run_js(BLOCKS[index], args)
    assert result.ok, result.error
    assert result.value == expected
