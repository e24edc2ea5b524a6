"""Across real processes: restarts keep tools and usage, kill -9 mid-create, 8 writers at once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from toolfoundry import Foundry
from toolfoundry.registry.faults import ENV, POINTS

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit

CLI = "import sys; from toolfoundry.cli import main; sys.exit(main())"


def toolfoundry(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a fresh Python process."""
    return subprocess.run(
        [sys.executable, "-c", CLI, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )


def test_a_tool_created_in_one_process_is_called_from_another(db_url: str, kit: type[Kit]) -> None:
    created = toolfoundry("create", str(kit.slugify_path), "--db", db_url, "--json")
    assert created.returncode == 0, created.stderr
    for text in ("One Two", "Three"):
        called = toolfoundry(
            "call", "slugify", "--args", json.dumps({"text": text}), "--db", db_url
        )
        assert called.returncode == 0, called.stderr
    assert called.stdout.strip() == "three"
    usage = toolfoundry("tools", "usage", "slugify", "--db", db_url, "--json")
    stats = json.loads(usage.stdout)
    assert stats["calls"] == 2
    assert stats["last_used"] is not None
    fd = Foundry.open(db_url)
    assert fd.usage("slugify").calls == 2
    fd.close()


def test_default_store_is_under_the_working_directory(tmp_path: Path, kit: type[Kit]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TOOLFOUNDRY_DB"}
    proc = subprocess.run(
        [sys.executable, "-c", CLI, "create", str(kit.slugify_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / ".toolfoundry" / "registry.db").is_file()
    listed = subprocess.run(
        [sys.executable, "-c", CLI, "tools", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert [t["name"] for t in json.loads(listed.stdout)] == ["slugify"]


# two points in the fast suite; every point under -m slow
KILL_POINTS = [
    p if p in ("after_forge", "before_commit") else pytest.param(p, marks=pytest.mark.slow)
    for p in POINTS
    if p != "after_commit"
]


@pytest.mark.parametrize("point", KILL_POINTS)
def test_kill_9_during_create_tool_leaves_no_half_version(
    db_url: str, kit: type[Kit], tmp_path: Path, point: str
) -> None:
    assert toolfoundry("create", str(kit.slugify_path), "--db", db_url).returncode == 0
    fd = Foundry.open(db_url)
    before = kit.snapshot(fd)
    update = tmp_path / "v2.json"
    update.write_text(json.dumps(kit.slugify(code=kit.better)))
    killed = toolfoundry("create", str(update), "--db", db_url, env={ENV: point})
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert kit.snapshot(fd) == before
    fd.close()
    fd = Foundry.open(db_url)  # the next open works
    assert [v.version for v in fd.history("slugify")] == [1]
    assert fd.show("slugify").version == 1
    assert fd.call("slugify", {"text": "-a-"}).value == "-a-"
    retried = fd.create_tool(kit.slugify(code=kit.better))
    assert retried.version == 2
    assert fd.show("slugify").version == 2
    fd.close()


def test_kill_9_after_commit_keeps_the_whole_version(
    db_url: str, kit: type[Kit], tmp_path: Path
) -> None:
    killed = toolfoundry("create", str(kit.slugify_path), "--db", db_url, env={ENV: "after_commit"})
    assert killed.returncode == -signal.SIGKILL
    fd = Foundry.open(db_url)
    assert fd.show("slugify").version == 1
    assert fd.call("slugify", {"text": "A b"}).value == "a-b"
    fd.close()


WRITER = """
import json, sys, time
from pathlib import Path
from toolfoundry import Foundry
url, gate, draft = sys.argv[1], Path(sys.argv[2]), json.loads(Path(sys.argv[3]).read_text())
fd = Foundry.open(url)
# load the sandbox before the race (a tool made for it would be slugify's refused duplicate)
assert fd.run_js(draft["code"], {"text": "A b"}).value == "a-b"
while not gate.exists():
    time.sleep(0.005)
r = fd.create_tool(draft)
print(json.dumps({"status": r.status, "version": r.version, "step": r.step.to_dict()}))
"""


@pytest.mark.slow  # 8 sandboxes at once; the registry-level race runs in the fast suite
def test_eight_processes_create_versions_of_one_tool(
    db_url: str, kit: type[Kit], tmp_path: Path
) -> None:
    Foundry.open(db_url).close()
    gate = tmp_path / "go"
    procs = []
    for i in range(8):
        # same behaviour, different code: each passes its own and any earlier version's tests
        path = tmp_path / f"draft{i}.json"
        path.write_text(json.dumps(kit.slugify(code=f"// writer {i}\n" + kit.slugify()["code"])))
        procs.append(
            subprocess.Popen(
                [sys.executable, "-c", WRITER, db_url, str(gate), str(path), str(i)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    time.sleep(3.0)
    gate.touch()
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e[-2000:] for _, e in outs]
    results = [json.loads(o.strip().splitlines()[-1]) for o, _ in outs]
    assert all(r["status"] == "active" for r in results), results
    assert sorted(r["version"] for r in results) == list(range(1, 9))
    fd = Foundry.open(db_url)
    history = fd.history("slugify")
    assert [v.version for v in history] == list(range(1, 9))
    assert len({v.sha256 for v in history}) == 8
    current = fd.show("slugify")
    assert current.version == 8
    assert current.status.value == "active"
    assert fd.call("slugify", {"text": "X y"}).value == "x-y"
    fd.close()
