"""The registry CLI end to end: create, call, tools, approvals (click's CliRunner, real DB)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner, Result

from toolfoundry import Foundry
from toolfoundry.cli import main

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit


Cli = Callable[..., Result]


@pytest.fixture
def cli(db_url: str) -> Cli:
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Result:
        return runner.invoke(main, [*args, "--db", db_url], input=input)

    return run


def _json(result: Result) -> Any:
    assert result.output, result.stderr
    return json.loads(result.stdout)


def test_create_and_call(cli: Cli, kit: type[Kit], tmp_path: Path) -> None:
    created = cli("create", str(kit.slugify_path), "--json")
    assert created.exit_code == 0, created.output
    body = _json(created)
    assert {"status", "name", "version", "findings", "test_results"} <= set(body)
    assert (body["status"], body["name"], body["version"]) == ("active", "slugify", 1)
    called = cli("call", "slugify", "--args", '{"text": "Hi There"}', "--json")
    assert called.exit_code == 0
    assert _json(called) == {
        "ok": True,
        "value": "hi-there",
        "error": None,
        "logs": [],
        "duration_ms": _json(called)["duration_ms"],
    }
    human = cli("call", "slugify", "--args", '{"text": "Hi There"}')
    assert human.stdout.strip() == "hi-there"


def test_call_failures_and_usage_errors(cli: Cli, kit: type[Kit]) -> None:
    cli("create", str(kit.slugify_path))
    bad = cli("call", "slugify", "--args", '{"text": 3}', "--json")
    assert bad.exit_code == 1
    assert _json(bad)["error"]["problems"] == [
        {"path": "$.text", "message": "3 is not of type 'string'"}
    ]
    missing = cli("call", "ghost", "--args", "{}")
    assert missing.exit_code == 1
    assert "not_found" in missing.stderr
    assert cli("call", "slugify", "--args", "{oops").exit_code == 2


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"\xff\xfe\x00", b'{"name": "x", "code": 1}', b'{"name": "create_tool"}'],
)
def test_create_refuses_malformed_drafts_and_changes_nothing(
    cli: Cli, db_url: str, kit: type[Kit], tmp_path: Path, content: bytes
) -> None:
    path = tmp_path / "draft.json"
    path.write_bytes(content)
    fd = Foundry.open(db_url)
    before = kit.snapshot(fd)
    result = cli("create", str(path), "--json")
    assert result.exit_code == 1
    body = _json(result)
    assert body["status"] == "rejected"
    assert body["findings"]
    assert all(f["severity"] and f["message"] for f in body["findings"])
    assert kit.snapshot(fd) == before
    fd.close()


def test_create_missing_file_is_a_usage_error(cli: Cli, tmp_path: Path) -> None:
    result = cli("create", str(tmp_path / "nope.json"))
    assert result.exit_code == 2


def test_tools_commands(cli: Cli, kit: type[Kit], tmp_path: Path) -> None:
    cli("create", str(kit.slugify_path))
    better = tmp_path / "v2.json"
    better.write_text(json.dumps(kit.slugify(code=kit.better)))
    assert cli("create", str(better)).exit_code == 0

    listing = _json(cli("tools", "list", "--json"))
    assert [(t["name"], t["version"], t["status"]) for t in listing] == [("slugify", 2, "active")]
    assert "slugify" in cli("tools", "list").stdout
    shown = _json(cli("tools", "show", "slugify", "--json"))
    assert shown["code"] == kit.better
    assert shown["usage"]["calls"] == 0
    history = _json(cli("tools", "history", "slugify", "--json"))
    assert [h["version"] for h in history] == [1, 2]
    diff = cli("tools", "diff", "slugify", "1", "2")
    assert diff.exit_code == 0
    assert "+++ slugify@2/code.js" in diff.stdout

    rolled = _json(cli("tools", "rollback", "slugify", "1", "--json"))
    assert (rolled["version"], rolled["current"]) == (1, True)
    assert _json(cli("tools", "disable", "slugify", "--json"))["status"] == "disabled"
    assert cli("call", "slugify", "--args", '{"text": "a"}').exit_code == 1
    assert _json(cli("tools", "enable", "slugify", "--json"))["status"] == "active"
    assert cli("tools", "rollback", "slugify", "9").exit_code == 1
    assert cli("tools", "show", "ghost").exit_code == 1

    hits = _json(cli("tools", "search", "slug", "--json"))
    assert [h["name"] for h in hits] == ["slugify"]
    events = [e["event"] for e in _json(cli("tools", "audit", "slugify", "--json"))]
    assert events[-4:] == ["rolled_back", "disabled", "called", "enabled"]
    assert _json(cli("tools", "usage", "slugify", "--json"))["failures"] == {"not_active": 1}


def test_approvals_commands(
    cli: Cli, kit: type[Kit], tmp_path: Path, weather_server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the loopback server's http fixture needs [fetch] allow_http
    (tmp_path / "toolfoundry.toml").write_text(kit.loopback_config(weather_server))
    draft = tmp_path / "weather.json"
    draft.write_text(json.dumps(kit.weather(weather_server)))
    created = cli("create", str(draft), "--json")
    assert created.exit_code == 0
    assert _json(created)["status"] == "pending_approval"
    pending = _json(cli("approvals", "list", "--json"))
    assert [(p["name"], p["version"]) for p in pending] == [("weather", 1)]
    assert pending[0]["reasons"]
    assert pending[0]["capability_details"][0]["capability"] == "network"
    assert "fetch(" in pending[0]["code"]
    assert "weather" in cli("approvals", "list").stdout
    shown = cli("approvals", "show", "weather")
    assert shown.exit_code == 0
    assert "network" in shown.stdout
    assert "fetch(" in shown.stdout
    assert _json(cli("approvals", "show", "weather@1", "--json"))["version"] == 1
    assert cli("approvals", "show", "ghost").exit_code == 1

    second = tmp_path / "weather2.json"
    second.write_text(json.dumps({**kit.weather(weather_server), "description": "Temperature"}))
    cli("create", str(second))
    assert cli("approvals", "reject", "weather@2").exit_code == 2  # --reason is required
    rejected = cli("approvals", "reject", "weather@2", "--reason", "no", "--by", "bob", "--json")
    assert _json(rejected)["status"] == "rejected"
    approved = cli("approvals", "approve", "weather@1", "--by", "alice", "--json")
    assert approved.exit_code == 0
    assert _json(approved)["status"] == "active"
    assert cli("approvals", "approve", "weather@1").exit_code == 1  # no longer pending
    assert _json(cli("approvals", "list", "--json")) == []


def test_create_from_stdin_and_call_a_pinned_version(cli: Cli, kit: type[Kit]) -> None:
    assert cli("create", "-", input=kit.slugify_path.read_text()).exit_code == 0
    better = json.dumps(kit.slugify(code=kit.better))
    assert cli("create", "-", "--json", input=better).exit_code == 0
    pinned = cli("call", "slugify", "--args", '{"text": "-a-"}', "--version", "1", "--json")
    assert _json(pinned)["value"] == "-a-"
    current = cli("call", "slugify", "--args", '{"text": "-a-"}', "--json")
    assert _json(current)["value"] == "a"
