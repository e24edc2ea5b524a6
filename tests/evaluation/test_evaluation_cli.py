"""``toolfoundry eval degradation`` through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from toolfoundry.agent.evaluation import scenario_files
from toolfoundry.cli import main


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["eval", "degradation", *args])
    return result.exit_code, result.output


def test_correct_model_json() -> None:
    code, out = invoke("--model", "scripted:correct", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["model"] == "scripted:correct"
    assert data["overall"] == {"correct": 16, "total": 16, "share": 1.0}
    assert set(data["by_status"]) == {"blocked", "skipped", "unavailable", "empty"}
    assert all(v["share"] == 1.0 for v in data["by_status"].values())
    assert all(s["outcome"] == "correct" for s in data["scenarios"])


def test_naive_model_json_and_threshold() -> None:
    code, out = invoke("--model", "scripted:naive", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["by_status"]["skipped"]["share"] == 0.0
    assert data["by_status"]["blocked"]["share"] == 0.0
    assert data["overall"]["share"] < 0.5
    skipped = [s for s in data["scenarios"] if s["status"] == "skipped"]
    assert {s["action"] for s in skipped} == {"retry_step"}
    code, _ = invoke("--model", "scripted:naive", "--min-share", "0.9")
    assert code == 1
    code, _ = invoke("--model", "scripted:correct", "--min-share", "1")
    assert code == 0


def test_table_output() -> None:
    code, out = invoke("--model", "scripted:naive")
    assert code == 0
    assert "Degradation paths: scripted:naive" in out
    lines = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 4}
    assert "0%" in lines["skipped"]
    assert "100%" in lines["empty"]
    assert "25%" in lines["overall"]
    assert "Wrong paths" in out
    code, out = invoke("--model", "scripted:correct", "--status", "skipped")
    assert code == 0
    assert "Wrong paths" not in out
    assert "blocked" not in out


def test_status_and_scenario_selection(tmp_path: Path) -> None:
    source = next(p for p in scenario_files() if p.name == "review_papers.json")
    (tmp_path / "mine.json").write_text(source.read_text(encoding="utf-8"), encoding="utf-8")
    code, out = invoke(
        "--model", "scripted:correct", "--scenarios", str(tmp_path), "--status", "blocked", "--json"
    )
    assert code == 0
    data = json.loads(out)
    assert [s["id"] for s in data["scenarios"]] == ["review-blocked-full-texts"]


def test_clear_errors(tmp_path: Path) -> None:
    code, out = invoke("--model", "scripted:clever")
    assert code == 2
    assert "unknown scripted model 'scripted:clever'" in out
    code, out = invoke("--model", "nocolon")
    assert code == 2
    assert "provider:model" in out
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"domain": "x", "catalog": [], "scenarios": []}), encoding="utf-8")
    code, out = invoke("--model", "scripted:correct", "--scenarios", str(bad))
    assert code == 1
    assert "bad.json" in out
    code, out = invoke("--model", "scripted:correct")
    assert code == 0


def test_as_a_subprocess() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolfoundry", "eval", "degradation", "--model", "scripted:correct"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "overall" in done.stdout
    assert "100%" in done.stdout


def test_repeat_counts_every_attempt() -> None:
    code, out = invoke("--model", "scripted:naive", "--status", "empty", "--repeat", "3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["repeat"] == 3
    assert data["overall"] == {"correct": 12, "total": 12, "share": 1.0}
    assert sorted({s["attempt"] for s in data["scenarios"]}) == [1, 2, 3]
    code, out = invoke("--model", "scripted:naive", "--repeat", "0")
    assert code == 2


def test_scenarios_listing_and_prompt() -> None:
    runner = CliRunner()
    listed = runner.invoke(main, ["eval", "scenarios", "--json"])
    assert listed.exit_code == 0
    rows = json.loads(listed.output)
    assert len(rows) == 16
    assert {r["status"] for r in rows} == {"blocked", "skipped", "unavailable", "empty"}
    assert all(r["accept"] and r["why"] for r in rows)
    table = runner.invoke(main, ["eval", "scenarios", "--status", "blocked"])
    assert "4 degradation scenarios" in table.output
    prompt = runner.invoke(main, ["eval", "scenarios", "--prompt", "recon-unavailable-bank-api"])
    assert prompt.exit_code == 0
    assert "BankApiDown: bank API answered 502" in prompt.output
    assert "[tools offered]" in prompt.output
    assert "- route_around(step, via):" in prompt.output
    as_json = runner.invoke(
        main, ["eval", "scenarios", "--prompt", "recon-unavailable-bank-api", "--json"]
    )
    data = json.loads(as_json.output)
    assert [m["role"] for m in data["messages"]] == ["system", "user"]
    assert len(data["tools"]) == 7
    missing = runner.invoke(main, ["eval", "scenarios", "--prompt", "nope"])
    assert missing.exit_code == 2
    assert "no scenario 'nope'" in missing.output
