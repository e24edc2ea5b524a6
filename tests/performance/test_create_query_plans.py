"""create_tool stays flat as the registry grows: no statement of a create reads a whole table.

Timings are not asserted (the machine is shared); the query plans are. SQLite's EXPLAIN QUERY
PLAN names a pass over every row of a table ``SCAN <table>`` (finding rows through an index is
``SEARCH``). The full-text index's ``SCAN tf_search VIRTUAL TABLE`` reads the posting lists of
the query's words only, a ``SCAN`` of a subquery or a CTE reads rows already narrowed, and
``SCAN CONSTANT ROW`` is the one row of a SELECT without FROM (its subqueries have plans of
their own).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from tests.factories import NewVersionFactory

from toolfoundry import Foundry
from toolfoundry.registry import VersionStatus

SKIPPED = ("BEGIN", "COMMIT", "ROLLBACK", "PRAGMA", "SAVEPOINT", "RELEASE")
DRAFTS = Path(__file__).parents[1] / "foundry" / "drafts"
BETTER = (DRAFTS / "slugify_better.js").read_text()  # passes v1's tests, trims dashes


def slugify(**changes: Any) -> dict[str, Any]:
    """The foundry tests' slugify draft with some fields replaced."""
    draft: dict[str, Any] = json.loads((DRAFTS / "slugify.json").read_text())
    return {**draft, **changes}


@pytest.fixture
def fd(foundry: Foundry, new_version: NewVersionFactory) -> Foundry:
    for i in range(40):  # a few of each kind of row a create could wander over
        status = VersionStatus.ACTIVE if i % 4 else VersionStatus.PENDING_APPROVAL
        foundry.registry.add_version(new_version(f"seeded_{i:02d}", status))
    # A process's first search loads every tool's vector into its memory and looks once for
    # tools stored before vectors existed (registry/vectors.py): a pass per process, by
    # design, not per create. Done here, so what is measured is what every create costs.
    foundry.registry.search("seeded", 1)
    return foundry


def full_passes(fd: Foundry, act: Any) -> tuple[int, list[tuple[str, str]]]:
    """Run ``act()``; the number of statements it ran, and each (plan step, statement) of
    theirs that reads every row of a table."""
    seen: list[tuple[str, str]] = []
    count = 0

    def explain(conn: Any, _cursor: Any, statement: str, params: Any, *_: Any) -> None:
        nonlocal count
        if statement.lstrip().split(" ", 1)[0].upper() in SKIPPED:
            return
        count += 1
        raw = conn.connection.driver_connection  # the sqlite3 connection: no event of ours
        for row in raw.execute(f"EXPLAIN QUERY PLAN {statement}", params).fetchall():
            if _reads_a_whole_table(str(row[-1]), statement):
                seen.append((str(row[-1]), " ".join(statement.split())))

    event.listen(fd.registry.engine, "after_cursor_execute", explain)
    try:
        act()
    finally:
        event.remove(fd.registry.engine, "after_cursor_execute", explain)
    return count, seen


def _reads_a_whole_table(step: str, statement: str) -> bool:
    match = re.match(r"SCAN (\S+)", step)
    if match is None or "VIRTUAL TABLE" in step or match[1].startswith("("):
        return False
    if step == "SCAN CONSTANT ROW":  # a SELECT of scalar subqueries: one row, no table
        return False
    cte = re.search(rf"\b{re.escape(match[1])}\s+AS\s+(MATERIALIZED\s+)?\(", statement, re.I)
    return cte is None


def test_a_new_tool_is_created_without_reading_every_tool(fd: Foundry) -> None:
    count, passes = full_passes(fd, lambda: fd.create_tool(slugify()))
    assert fd.show("slugify").version == 1
    assert count > 5  # the hook saw the create's statements
    assert passes == []


def test_a_new_version_and_a_refused_lookalike_read_no_whole_table(fd: Foundry) -> None:
    assert fd.create_tool(slugify()).status == "active"
    _, passes = full_passes(fd, lambda: fd.create_tool(slugify(code=BETTER)))
    assert fd.show("slugify").version == 2
    assert passes == []
    _, passes = full_passes(fd, lambda: fd.create_tool(slugify(name="sIugify")))
    assert passes == []
    assert [t.name for t in fd.tools() if t.name.endswith("ugify")] == ["slugify"]


def test_tools_that_use_tools_read_no_whole_table(fd: Foundry) -> None:
    """A tool calling a tool (its callees resolved, a cycle looked for, its dependency
    written), then a new version of the callee (its dependents found, their suites run)."""
    assert fd.create_tool(slugify()).status == "active"
    caller = slugify(
        name="title_slug",
        description="The slug of a title, with its words capitalised first.",
        code="export default async ({ text }) => tools.slugify({ text: text.toUpperCase() });",
        distinct_from={"name": "slugify", "why": "capitalises first"},
    )
    _, passes = full_passes(fd, lambda: fd.create_tool(caller))
    assert fd.show("title_slug").version == 1
    assert passes == []
    twin = {"name": "title_slug", "why": "keeps the case"}  # it calls slugify, so passes its tests
    _, passes = full_passes(fd, lambda: fd.create_tool(slugify(code=BETTER, distinct_from=twin)))
    assert fd.show("slugify").version == 2
    assert passes == []
