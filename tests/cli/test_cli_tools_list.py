"""``toolfoundry tools list``: paging with --limit/--offset, the unchanged JSON shape, and the
plain renderer used when stdout is not a terminal (what a pipe or CliRunner gets)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolfoundry.cli import main
from toolfoundry.registry import NewVersion, Registry
from toolfoundry.spec import Capabilities, VersionStatus

SUMMARY_KEYS = [
    "name",
    "version",
    "status",
    "current",
    "sha256",
    "capabilities",
    "author",
    "created_at",
    "parent_version",
    "description",
    "pending_versions",
]
NAMES = ["alpha", "bravo", "charlie", "delta", "echo"]


@pytest.fixture
def db(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    registry = Registry.open(url)
    for i, name in enumerate(reversed(NAMES)):  # inserted out of order: listings sort by name
        registry.add_version(
            NewVersion(
                name=name,
                code="export function handler({ text }) { return text }\n",
                description=f"Tool {name}\x1b[2K\nsecond line",
                parameters={"type": "object", "properties": {"text": {"type": "string"}}},
                status=VersionStatus.PENDING_APPROVAL if name == "delta" else VersionStatus.ACTIVE,
                capabilities=Capabilities.from_dict(
                    {"network": ["api.example.com"]} if i % 2 else {}
                ),
            )
        )
    registry.engine.dispose()
    return url


def run(db: str, *args: str) -> str:
    result = CliRunner().invoke(main, ["tools", "list", "--db", db, *args])
    assert result.exit_code == 0, result.output
    return result.output


def listed(db: str, *args: str) -> list[dict[str, object]]:
    rows = json.loads(run(db, "--json", *args))
    assert isinstance(rows, list)
    return rows


def test_json_rows_keep_their_shape(db: str) -> None:
    rows = listed(db)
    assert [r["name"] for r in rows] == NAMES
    for row in rows:
        assert list(row) == SUMMARY_KEYS
        assert row["version"] == 1
        assert row["current"] is True
    assert rows[1]["capabilities"] == {"network": ["api.example.com"]}
    assert rows[0]["description"] == "Tool alpha\x1b[2K\nsecond line"  # JSON: lossless
    assert [r["status"] for r in rows].count("pending_approval") == 1
    assert [r["pending_versions"] for r in rows] == [[], [], [], [1], []]


def test_limit_and_offset_page_by_name(db: str) -> None:
    assert [r["name"] for r in listed(db, "--limit", "2")] == ["alpha", "bravo"]
    assert [r["name"] for r in listed(db, "--limit", "2", "--offset", "2")] == ["charlie", "delta"]
    assert [r["name"] for r in listed(db, "--offset", "4")] == ["echo"]
    assert listed(db, "--offset", "9") == []
    assert listed(db, "--limit", "0") == []
    pages = [listed(db, "--limit", "2", "--offset", str(o)) for o in range(0, 6, 2)]
    assert [r for page in pages for r in page] == listed(db)  # pages tile the listing
    active = [r["name"] for r in listed(db, "--active", "--limit", "3", "--offset", "2")]
    assert active == ["charlie", "echo"]  # delta (pending) is not counted by the offset


@pytest.mark.parametrize("option", ["--limit", "--offset"])
def test_a_negative_page_is_a_usage_error(db: str, option: str) -> None:
    result = CliRunner().invoke(main, ["tools", "list", "--db", db, option, "-1"])
    assert result.exit_code == 2
    assert "-1 is not in the range x>=0" in result.output


def test_plain_listing_is_one_aligned_escaped_line_per_tool(db: str) -> None:
    lines = run(db, "--limit", "3", "--offset", "1").splitlines()
    assert lines[0] == "3 tool(s) from #2"
    header, *rows = lines[1:]
    assert header.split() == ["name", "version", "status", "capabilities", "description"]
    assert [r.split()[0] for r in rows] == ["bravo", "charlie", "delta"]
    start = header.index("description")
    for row in rows:
        assert "\x1b" not in row
        assert row[start:].startswith("Tool ")
        assert row[start:].endswith("\\x1b[2K\\nsecond line")
    assert rows[0].split()[3] == '{"network":["api.example.com"]}'
    assert rows[1].split()[3] == "-"
    assert rows[2].split()[2] == "pending_approval"
    empty = run(db, "--offset", "5").splitlines()
    assert empty == ["0 tool(s)", "name  version  status  capabilities  description"]


def in_terminal(db: str, lines: int) -> str:
    """``tools list`` with its stdout on a pseudo-terminal of ``lines`` rows (PAGER=cat)."""
    main_fd, child_fd = pty.openpty()
    env = {**os.environ, "LINES": str(lines), "COLUMNS": "200", "PAGER": "cat", "TERM": "dumb"}
    command = ("tools", "list", "--db", db)
    proc = subprocess.Popen(
        [sys.executable, "-c", "from toolfoundry.cli import main; main()", *command],
        stdout=child_fd,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(child_fd)
    chunks = []
    while True:
        try:
            chunk = os.read(main_fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(main_fd)
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    return b"".join(chunks).decode("utf-8")


def test_a_terminal_gets_the_table_or_the_pager(db: str) -> None:
    table = in_terminal(db, 100)  # fits: the rich table
    assert "5 tool(s)" in table
    assert "┃ name" in table or "| name" in table
    assert "\x1b[2K" not in table  # the hostile description is shown escaped
    paged = in_terminal(db, 5)  # does not fit: the plain lines, through the pager
    lines = [line.rstrip() for line in paged.replace("\r\n", "\n").splitlines()]
    assert lines[0] == "5 tool(s)"
    assert lines[1].split() == ["name", "version", "status", "capabilities", "description"]
    assert [line.split()[0] for line in lines[2:7]] == NAMES


def test_a_tool_with_a_pending_version_is_flagged(db: str) -> None:
    registry = Registry.open(db)
    for status in (VersionStatus.PENDING_APPROVAL, VersionStatus.PENDING_APPROVAL):
        registry.add_version(
            NewVersion(
                name="bravo",
                code="export function handler() { return 2 }\n",
                description="Tool bravo, next",
                parameters={"type": "object"},
                status=status,
                capabilities=Capabilities.from_dict({"network": ["api.example.org"]}),
            )
        )
    registry.engine.dispose()
    rows = {r["name"]: r for r in listed(db)}
    assert (rows["bravo"]["version"], rows["bravo"]["status"]) == (1, "active")
    assert rows["bravo"]["pending_versions"] == [2, 3]
    assert rows["delta"]["pending_versions"] == [1]  # its own current version: no flag
    lines = {line.split()[0]: line for line in run(db).splitlines()[2:]}
    assert "  active, v2 v3 pending  " in lines["bravo"]
    assert "pending" not in lines["alpha"]
    assert "pending_approval  " in lines["delta"]
    assert "v1 pending" not in lines["delta"]
