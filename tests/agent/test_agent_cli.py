"""``toolfoundry agent`` through click's runner, against the loopback vendor server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from toolfoundry.cli import main
from toolfoundry.foundry import Foundry

from .conftest import DOUBLE_DRAFT, answer, calls

if TYPE_CHECKING:
    from tests.agent.conftest import VendorServer


def test_agent_command_runs_a_compat_model_and_prints_json(
    vendor: VendorServer, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    vendor.play(
        calls("compat", ("create_tool", DOUBLE_DRAFT)),
        calls("compat", ("double", {"x": 4})),
        answer("compat", "8"),
    )
    result = CliRunner().invoke(
        main,
        [
            "agent",
            "double 4",
            "--model",
            "compat:llama3.1",
            "--base-url",
            vendor.base_url("compat"),
            "--db",
            db,
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)
    assert run["stop_reason"] == "completed"
    assert run["final_text"] == "8"
    assert run["model"] == "compat:llama3.1"
    assert run["created"] == ["double v1"]
    assert vendor.bodies()[0]["model"] == "llama3.1"
    with Foundry.open(db) as fd:
        assert fd.usage("double").calls == 1


def test_agent_command_prints_each_turn_and_exits_1_at_a_limit(
    vendor: VendorServer, tmp_path: Path
) -> None:
    vendor.play(*[calls("compat", ("run_js", {"code": "export default 1"})) for _ in range(3)])
    result = CliRunner().invoke(
        main,
        [
            "agent",
            "spin",
            "--model",
            "compat:m",
            "--base-url",
            vendor.base_url("compat"),
            "--db",
            f"sqlite:///{tmp_path / 'r.db'}",
            "--max-turns",
            "2",
        ],
    )
    assert result.exit_code == 1
    assert "turn 1" in result.output
    assert "turn 2" in result.output
    assert "→ run_js" in result.output
    assert "max_turns" in result.output


def test_bad_model_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        main, ["agent", "x", "--model", "nope:thing", "--db", f"sqlite:///{tmp_path / 'r.db'}"]
    )
    assert result.exit_code == 2
    assert "unknown provider 'nope'" in result.output


def test_a_replay_is_labelled_and_stops_cleanly_when_the_library_differs(tmp_path: Path) -> None:
    # the demo's "reuse" session expects slugify in the library; this store has none
    result = CliRunner().invoke(
        main,
        [
            "agent",
            "Make a slug for 'Found Again After a Restart'.",
            "--model",
            "replay:demo",
            "--db",
            f"sqlite:///{tmp_path / 'r.db'}",
        ],
    )
    assert result.exit_code == 1
    assert "REPLAY" in result.output
    assert "provider_error" in result.output
    assert "diverged, slugify not offered" in result.output


def test_ask_prompts_at_the_terminal_and_records_the_answer(
    vendor: VendorServer, tmp_path: Path
) -> None:
    from .test_agent_loop import NETWORK_DRAFT

    # one store per answer: the same draft sent again to the same store is an unchanged
    # resubmission, which asks nobody
    for reply, status in (("y\n", "active"), ("n\n", "rejected")):
        db = f"sqlite:///{tmp_path / (status + '.db')}"
        vendor.play(calls("compat", ("create_tool", NETWORK_DRAFT)), answer("compat", "done"))
        args = ["agent", "rates", "--model", "compat:m", "--base-url", vendor.base_url("compat")]
        result = CliRunner().invoke(main, [*args, "--db", db, "--ask"], input=reply)
        assert result.exit_code == 0, result.output
        assert "approval needed: fx_rate" in result.output
        assert "rates.example" in result.output  # the reviewer sees the capabilities
        with Foundry.open(db) as fd:
            assert fd.history("fx_rate")[-1].status.value == status


def test_model_and_base_url_come_from_toolfoundry_toml(
    vendor: VendorServer, tmp_path: Path
) -> None:
    config = tmp_path / "toolfoundry.toml"
    config.write_text(
        f'[provider]\nmodel = "compat:from-config"\nbase_url = "{vendor.base_url("compat")}"\n'
    )
    vendor.play(answer("compat", "configured"))
    result = CliRunner().invoke(
        main,
        ["agent", "hi", "--config", str(config), "--db", f"sqlite:///{tmp_path / 'r.db'}"],
    )
    assert result.exit_code == 0, result.output
    assert "configured" in result.output
    assert vendor.bodies()[0]["model"] == "from-config"


def test_no_model_anywhere_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["agent", "hi", "--db", f"sqlite:///{tmp_path / 'r.db'}"])
    assert result.exit_code == 2
    assert "--model" in result.output


def test_a_recorded_live_session_replays_offline_through_the_real_parts(
    vendor: VendorServer, tmp_path: Path
) -> None:
    record = tmp_path / "session.json"
    vendor.play(
        calls("openai", ("create_tool", DOUBLE_DRAFT), text="writing double"),
        calls("openai", ("double", {"x": 5})),
        answer("openai", "10"),
    )
    live = [
        "agent",
        "double 5",
        "--model",
        "openai:gpt-test",
        "--base-url",
        vendor.base_url("openai"),
        "--db",
        f"sqlite:///{tmp_path / 'live.db'}",
        "--record",
        str(record),
    ]
    result = CliRunner(env={"OPENAI_API_KEY": "test-key"}).invoke(main, live)
    assert result.exit_code == 0, result.output
    [session] = json.loads(record.read_text())["sessions"].values()
    assert session["model"] == "openai:gpt-test"
    assert [t.get("expect", {}).get("offered") for t in session["turns"]] == [
        ["create_tool"],
        ["double"],
        None,
    ]

    requests_before = len(vendor.requests)
    replay_db = f"sqlite:///{tmp_path / 'replay.db'}"
    result = CliRunner().invoke(
        main, ["agent", "double 5", "--model", f"replay:{record}", "--db", replay_db, "--json"]
    )
    assert result.exit_code == 0, result.output
    replayed = json.loads(result.stdout)
    assert replayed["final_text"] == "10"
    assert replayed["created"] == ["double v1"]  # the real forge made it again
    assert replayed["turns"][1]["tool_calls"][0]["result"]["value"] == 10
    assert len(vendor.requests) == requests_before  # no model was asked
    with Foundry.open(replay_db) as fd:
        assert fd.usage("double").calls == 1


def test_record_refuses_a_file_that_is_not_a_recording(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something-else"}')
    result = CliRunner().invoke(
        main,
        [
            "agent",
            "x",
            "--model",
            "replay:demo",
            "--record",
            str(bad),
            "--db",
            f"sqlite:///{tmp_path / 'r.db'}",
        ],
    )
    assert result.exit_code == 2
    assert "not a toolfoundry-replay/1 recording" in result.output
