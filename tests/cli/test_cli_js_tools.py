"""``toolfoundry js run FILE --db URL``: the module's `tools` reaches that registry's tools, the
run is kept and named; without --db nothing is opened and `tools` refuses every call."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from tests.shared_drafts import word_count_draft

from toolfoundry import Foundry
from toolfoundry.cli import main

SNIPPET = (
    "export default [await tools.word_count({ text: 'a b c' }),"
    " await tools.nothing({}).catch((e) => e.kind)];"
)


def registry(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    with Foundry.open(db) as fd:
        assert fd.create_tool(word_count_draft()).status == "active"
    return db


def test_js_run_with_db_reaches_the_registrys_tools(tmp_path: Path) -> None:
    db = registry(tmp_path)
    file = tmp_path / "snippet.js"
    file.write_text(SNIPPET)
    result = CliRunner().invoke(main, ["js", "run", str(file), "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["value"] == [3, "not_found"]
    with Foundry.open(db) as fd:
        run = fd.registry.code_run(out["run_id"])
        assert run is not None
        assert run.code == SNIPPET
        [row] = [a for a in fd.audit("word_count") if a.event.value == "called"]
        assert row.caller == f"run:{out['run_id']}"


def test_js_run_without_db_opens_nothing(tmp_path: Path) -> None:
    file = tmp_path / "snippet.js"
    file.write_text(SNIPPET)
    proc = subprocess.run(
        [sys.executable, "-m", "toolfoundry", "js", "run", str(file)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "capability_denied" in proc.stderr
    assert not (tmp_path / ".toolfoundry").exists()  # no default registry made on the way
