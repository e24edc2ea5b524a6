"""``toolfoundry serve``'s start-up (issue 15): what it pauses, and what it does not import.

Each case runs in a new interpreter, as tests/test_startup_imports.py does: these check
behaviour and laziness (the names of modules loaded), never timings (bench/bench_startup.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolfoundry.registry import Registry


def run_python(code: str, cwd: Path, stdin: str = "") -> list[object]:
    """Run ``code`` in a new interpreter; the JSON list its last stdout line prints."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert isinstance(loaded, list)
    return loaded


@pytest.fixture(scope="module")
def current_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('serve-startup') / 'registry.db'}"
    Registry.open(url).engine.dispose()  # migrated here: the child opens a current schema
    return url


def test_setting_up_pauses_the_collector_then_freezes_what_it_built(tmp_path: Path) -> None:
    code = (
        "import gc, json\n"
        "from toolfoundry.cli.startup import setting_up\n"
        "seen = []\n"
        "with setting_up():\n"
        "    seen.append(gc.isenabled())\n"
        "    kept = [[i] for i in range(5000)]\n"
        "seen += [gc.isenabled(), gc.get_freeze_count() >= 5000]\n"
        "frozen = gc.get_freeze_count()\n"
        "gc.disable()\n"  # a caller that paused it itself: left alone, nothing frozen
        "with setting_up():\n"
        "    pass\n"
        "seen += [gc.isenabled(), gc.get_freeze_count() == frozen]\n"
        "print(json.dumps(seen))\n"
    )
    assert run_python(code, tmp_path) == [False, True, True, False, True]


def test_serve_answers_with_the_collector_running_again(current_db: str, tmp_path: Path) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "test", "version": "0"},
        },
    }
    code = (
        "import gc, json, sys\n"
        "from toolfoundry.cli import main\n"
        f"main(['serve', '--db', {current_db!r}], standalone_mode=False)\n"
        "print(json.dumps([gc.isenabled(), gc.get_freeze_count() > 50000]))\n"
    )
    assert run_python(code, tmp_path, json.dumps(initialize) + "\n") == [True, True]
