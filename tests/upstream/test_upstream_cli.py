"""``toolfoundry upstream list|show|approve|revoke`` against the real Python SDK ``notes`` server,
and ``doctor`` on an upstream whose process exits: what a person at a terminal decides with."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.factories import error_of
from tests.upstream.conftest import notes_entry, toml_text

from toolfoundry import Foundry
from toolfoundry.config import load_config
from toolfoundry.spec import ErrorKind


def toolfoundry(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolfoundry", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "toolfoundry.toml").write_text(toml_text({"upstream": [notes_entry()]}))
    return tmp_path


def db(at: Path) -> str:
    return f"sqlite:///{at / 'registry.db'}"


def as_json(out: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(out.stdout)


def test_list_show_approve_revoke(project: Path) -> None:
    listed = toolfoundry("upstream", "list", "--db", db(project), "--json", cwd=project)
    assert listed.returncode == 0, listed.stderr
    found = as_json(listed)
    [server] = found["servers"]
    assert (server["name"], server["state"], server["tools"]) == ("notes", "ready", 8)
    standing = {t["name"]: t["standing"] for t in found["tools"]}
    assert standing["notes.delete_notes"] == "needs_approval"
    assert standing["notes.list_notes"] == "allowed"
    text = toolfoundry("upstream", "list", "--db", db(project), cwd=project).stdout
    assert "notes: 8 tools from notes 1.0 (stdio " in text
    assert "8 upstream tool(s), 1 waiting for a person" in text

    shown = as_json(toolfoundry("upstream", "show", "notes.delete_notes", "--json", cwd=project))
    assert shown["policy_reason"] == "destructive (destructiveHint)"
    schema = shown["schema_hash"]

    stale = toolfoundry(
        "upstream", "approve", "notes.delete_notes", "--schema-hash", "0" * 64,
        "--db", db(project), cwd=project,
    )  # fmt: skip
    assert stale.returncode == 1
    assert stale.stderr.startswith("error (schema_changed): notes.delete_notes's input schema")

    approved = toolfoundry(
        "upstream", "approve", "notes.delete_notes", "--schema-hash", schema,
        "--by", "alice", "--reason", "scratch notes", "--db", db(project), cwd=project,
    )  # fmt: skip
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout == (
        f"approved notes.delete_notes for schema {schema[:12]}: now approved\n"
    )
    fd = Foundry.open(db(project), config=load_config(project / "toolfoundry.toml"))
    try:
        assert fd.call("notes.delete_notes", {}).value == "deleted 0"  # another process sees it
        revoked = toolfoundry(
            "upstream", "revoke", "notes.delete_notes", "--reason", "not here",
            "--db", db(project), "--json", cwd=project,
        )  # fmt: skip
        assert revoked.returncode == 0, revoked.stderr
        assert as_json(revoked)["standing"] == "needs_approval"
        assert as_json(revoked)["decision"]["reason"] == "not here"
        assert error_of(fd.call("notes.delete_notes", {})).kind is ErrorKind.NOT_ACTIVE
    finally:
        fd.close()

    show = toolfoundry("upstream", "show", "notes.delete_notes", "--db", db(project), cwd=project)
    assert "revoked by " in show.stdout
    assert ": not here" in show.stdout


def test_refusals_name_what_is_wrong(project: Path) -> None:
    unlisted = toolfoundry("upstream", "show", "notes.nope", "--db", db(project), cwd=project)
    assert unlisted.returncode == 1
    assert unlisted.stderr.startswith("error (not_found): upstream 'notes' does not list 'nope'")
    other = toolfoundry("upstream", "approve", "wiki.edit", "--db", db(project), cwd=project)
    assert other.stderr == "error (not_found): no upstream 'wiki' is configured (known: notes)\n"
    bare = toolfoundry("upstream", "show", "notes", "--db", db(project), cwd=project)
    assert bare.returncode == 2
    assert "expected UPSTREAM.TOOL" in bare.stderr
    (project / "toolfoundry.toml").write_text("")
    none = toolfoundry("upstream", "list", "--db", db(project), cwd=project)
    assert none.stdout == "no [[upstream]] server is configured (toolfoundry.toml)\n"


QUITS = "import sys; sys.stderr.write('fatal: no database configured\\n'); sys.exit(3)"


def test_a_down_upstream_is_said_plainly(tmp_path: Path) -> None:
    """An upstream whose process exits at once: doctor says so with its stderr's last line
    and what to run; its tools cannot be approved, and the refusal says why."""
    quits = {"name": "quits", "command": sys.executable, "args": ["-c", QUITS]}
    (tmp_path / "toolfoundry.toml").write_text(toml_text({"upstream": [quits]}))
    doctor = toolfoundry("doctor", "--db", db(tmp_path), "--json", cwd=tmp_path)
    [row] = [c for c in as_json(doctor)["checks"] if c["name"] == "upstream quits"]
    assert row["status"] == "failed"
    assert not row["required"]
    assert row["detail"].startswith(
        "down: its process ended (or closed its output) before the MCP handshake (stdio "
    )
    assert row["detail"].endswith("; its stderr ends: fatal: no database configured")
    assert row["fix"].startswith(f"run it by hand to see why: {sys.executable} -c ")

    refused = toolfoundry(
        "upstream", "approve", "quits.x", "--wait", "5", "--db", db(tmp_path), cwd=tmp_path
    )
    assert refused.returncode == 1
    assert refused.stderr.startswith("error (unavailable): upstream 'quits' is down: ")
    listed = toolfoundry("upstream", "list", "--db", db(tmp_path), cwd=tmp_path).stdout
    assert listed.startswith("quits: down: ")
