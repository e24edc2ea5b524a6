"""`toolfoundry demo` (the README's first command) runs the whole cycle offline."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from toolfoundry.agent import RunStore
from toolfoundry.foundry import Foundry


@pytest.mark.slow
def test_demo_runs_the_whole_cycle_on_a_fresh_store(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolfoundry", "demo"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "tests_failed" in out
    assert "awaiting_approval" in out
    assert '"blockers": ["regression"]' in out
    assert "found-again-after-a-restart" in out
    assert "REPLAY" in out  # a replayed session is labelled as one
    assert "two.words" in out  # v2 was called after the refused regression
    # it ends by pointing at the review page, with the store it used
    assert out.splitlines()[-4:-1] == [
        "Look at what it made on the review page (versions, diffs, the approval, the audit):",
        "  toolfoundry serve --http 127.0.0.1:8765 --db sqlite:///.toolfoundry/demo.db",
        "  then open http://127.0.0.1:8765/ui/",
    ]

    with Foundry.open(f"sqlite:///{tmp_path / '.toolfoundry' / 'demo.db'}") as foundry:
        history = foundry.history("slugify")
        assert [(v.version, v.current) for v in history] == [(1, True), (2, False)]
        assert foundry.show("weather_now").status.value == "active"
        # five agent runs (four in the demo's process, one in the restarted one), with turns
        runs = RunStore(foundry.registry).recent()
        assert len(runs) == 5
        assert all(r["stop_reason"] == "completed" and r["turns"] >= 2 for r in runs)
        # two parallel calls in the first session, one after the restart, one of v2
        assert foundry.usage("slugify").calls == 4
