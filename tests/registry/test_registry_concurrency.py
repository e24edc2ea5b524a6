"""Many processes writing one tool at once, and kill -9 in the middle of registering a version."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolfoundry.registry import AuditEvent, Registry, VersionStatus
from toolfoundry.registry.faults import ENV

WRITER = """
import os, sys, time
from pathlib import Path
from toolfoundry.registry import NewVersion, Registry, VersionStatus
url, gate, tag = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
reg = Registry.open(url)
while not gate.exists():
    time.sleep(0.005)
v = reg.add_version(NewVersion(
    name="shared", code=f"export const handler = () => {tag!r};", description="writer " + tag,
    parameters={"type": "object"}, status=VersionStatus.ACTIVE,
    test_results=[{"passed": True}]))
print(v.version)
"""


def _python(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )


def _check_consistent(reg: Registry, name: str) -> None:
    history = reg.history(name)
    numbers = [v.version for v in history]
    assert numbers == list(range(1, len(numbers) + 1))
    current = reg.get(name)
    assert current.status is VersionStatus.ACTIVE
    # every version here activates, so the last one committed (the highest) is current
    assert current.version == numbers[-1]
    created = [e.version or 0 for e in reg.audit(name) if e.event is AuditEvent.CREATED]
    assert sorted(created) == numbers


# 4 processes race by default; 8 (about 30 s of start-ups on a loaded 2-core machine) under slow
@pytest.mark.parametrize("writers", [4, pytest.param(8, marks=pytest.mark.slow)])
def test_concurrent_writers_get_distinct_versions(
    db_url: str, tmp_path: Path, writers: int
) -> None:
    Registry.open(db_url).close()  # migrate once; the race under test is on versions
    gate = tmp_path / "go"
    procs = [_python(WRITER, db_url, str(gate), f"w{i}") for i in range(writers)]
    time.sleep(1.0)  # let every process import and connect before the gate opens
    gate.touch()
    outputs = [p.communicate(timeout=90) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    versions = sorted(int(out) for out, _ in outputs)
    assert versions == list(range(1, writers + 1))
    reg = Registry.open(db_url)
    _check_consistent(reg, "shared")
    assert {v.description for v in reg.history("shared")} == {
        f"writer w{i}" for i in range(writers)
    }
    reg.close()


def test_concurrent_first_open_migrates_once(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    gate = tmp_path / "go"
    gate.touch()
    procs = [_python(WRITER, url, str(gate), f"w{i}") for i in range(4)]
    outputs = [p.communicate(timeout=90) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outputs]
    reg = Registry.open(url)
    _check_consistent(reg, "shared")
    reg.close()


@pytest.mark.parametrize(
    "point", ["after_tool_row", "after_version_insert", "after_pointer_move", "before_commit"]
)
def test_kill_9_inside_the_transaction_leaves_nothing_half_done(
    db_url: str, tmp_path: Path, point: str
) -> None:
    reg = Registry.open(db_url)
    gate = tmp_path / "go"
    gate.touch()
    first = _python(WRITER, db_url, str(gate), "ok")
    assert first.communicate(timeout=60)[0].strip() == "1"
    victim = _python(WRITER, db_url, str(gate), "doomed", env={ENV: point})
    _, err = victim.communicate(timeout=60)
    assert victim.returncode == -signal.SIGKILL, err
    reg.close()
    reg = Registry.open(db_url)  # the next open works
    assert [v.version for v in reg.history("shared")] == [1]
    _check_consistent(reg, "shared")
    assert [h.version for h in reg.search("writer")] == [1]
    # and the store still takes writes, numbering on from where it was
    after = _python(WRITER, db_url, str(gate), "after")
    assert after.communicate(timeout=60)[0].strip() == "2"
    _check_consistent(reg, "shared")
    reg.close()


def test_kill_9_right_after_commit_keeps_the_whole_version(db_url: str, tmp_path: Path) -> None:
    gate = tmp_path / "go"
    gate.touch()
    victim = _python(WRITER, db_url, str(gate), "kept", env={ENV: "after_commit"})
    victim.communicate(timeout=60)
    assert victim.returncode == -signal.SIGKILL
    reg = Registry.open(db_url)
    _check_consistent(reg, "shared")
    assert reg.get("shared").description == "writer kept"
    reg.close()
