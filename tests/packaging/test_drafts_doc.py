"""docs/drafts.md is true: its field tables are the forge's, and each example gives its status."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolfoundry import Foundry
from toolfoundry.config import load_config
from toolfoundry.forge.draft_json import (
    DRAFT_DEFAULTS,
    DRAFT_FIELDS,
    DRAFT_REQUIRED,
    FIXTURE_FIELDS,
    TEST_FIELDS,
)

DOC = (Path(__file__).resolve().parents[2] / "docs" / "drafts.md").read_text(encoding="utf-8")
EXAMPLES = re.findall(r"<!-- expect: ([a-z_]+)((?: [a-z_]+)*) -->\n```json\n(.*?)```", DOC, re.S)


def table_fields(heading: str) -> list[str]:
    """The first column's field names of the first table under ``## heading``."""
    match = re.search(rf"^## {heading}\n(.*?)(?=^## |\Z)", DOC, re.S | re.M)
    assert match, heading
    lines = match.group(1).splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[start + 2 :]:  # after the header and its separator
        if not line.startswith("|"):
            break
        table.append(re.findall(r"`([a-z_]+)`", line.split("|")[1])[0])
    return table


@pytest.mark.parametrize(
    ("heading", "declared"),
    [("Fields", DRAFT_FIELDS), ("Tests", TEST_FIELDS), ("Fixtures: [^\\n]*", FIXTURE_FIELDS)],
)
def test_each_table_lists_exactly_the_declared_fields(
    heading: str, declared: tuple[str, ...]
) -> None:
    assert table_fields(heading) == list(declared)


def fields_rows() -> dict[str, tuple[str, str]]:
    """The Fields table: each field's ``required`` and ``what`` cells."""
    match = re.search(r"^## Fields\n(.*?)(?=^## |\Z)", DOC, re.S | re.M)
    assert match
    rows = {}
    for line in match.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        found = re.fullmatch(r"`([a-z_]+)`", cells[0]) if len(cells) == 3 else None
        if found:
            rows[found.group(1)] = (cells[1], cells[2])
    return rows


def test_the_fields_table_says_what_the_declaration_requires_and_defaults() -> None:
    rows = fields_rows()
    for name in DRAFT_FIELDS:
        required, what = rows[name]
        if name in DRAFT_REQUIRED:
            assert required == "yes", name
        else:  # optional, or required only without another field ("yes, unless from_run")
            assert required == "no" or required.startswith("yes, unless "), name
        default = DRAFT_DEFAULTS.get(name)
        if default is not None:  # a default other than "none": the page says which
            shown = default if isinstance(default, str) else json.dumps(default)
            assert f"`{shown}`" in what, (name, what)
            assert "default" in what.lower(), (name, what)


def test_the_examples_give_the_status_written_above_them(tmp_path: Path) -> None:
    assert len(EXAMPLES) >= 4
    # the default limits but the time, so a loaded machine does not turn a slow case into a
    # refusal the page does not promise
    relaxed = tmp_path / "toolfoundry.toml"
    relaxed.write_text("[limits]\ntimeout_s = 20.0\n")
    config = load_config(relaxed)
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}", config=config) as fd:
        for status, blockers, block in EXAMPLES:
            result = fd.create_tool(json.loads(block))
            shown = json.dumps(result.to_dict(), indent=1)[:2000]
            assert result.status == status, shown
            assert set(blockers.split()) <= set(result.step.blockers), shown
        history = [(v.version, v.status.value) for v in fd.history("slugify")]
    assert history == [(1, "active"), (2, "active"), (3, "active")]  # v3: the patch


def test_an_unknown_field_is_refused_as_the_page_says(tmp_path: Path) -> None:
    draft = json.loads(EXAMPLES[0][2])
    draft["tests"][0]["expect"] = draft["tests"][0].pop("expected")
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd:
        result = fd.create_tool(draft)
    assert result.status == "rejected"
    paths = {f.path: f.message for f in result.findings}
    assert paths["$.tests[0].expect"].startswith("unknown field; a test has: name, input, expected")
    assert "`$.tests[0].expect: unknown field; a test has: name, input, expected, ...`" in DOC
