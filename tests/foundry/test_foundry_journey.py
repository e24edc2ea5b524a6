"""The whole user journey, through the Python API and the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from click.testing import CliRunner, Result
from tests.factories import error_of

from toolfoundry import Foundry
from toolfoundry.cli import main

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit

CLI = "import sys; from toolfoundry.cli import main; sys.exit(main())"


def test_journey_python_api(
    db_url: str, kit: type[Kit], weather_server: str, tmp_path: Path
) -> None:
    config = tmp_path / "toolfoundry.toml"
    config.write_text(kit.loopback_config(weather_server))
    fd = Foundry.open(db_url, config=config)

    # a pure tool: created, active, callable
    assert fd.create_tool(kit.slugify()).status == "active"
    assert fd.call("slugify", {"text": "Hello World"}).value == "hello-world"

    # a network tool waits for a human, then reaches the loopback server
    created = fd.create_tool(kit.weather(weather_server))
    assert created.status == "pending_approval"
    assert error_of(fd.call("weather", {"city": "Oslo"})).kind.value == "not_active"
    assert fd.approve("weather", by="alice", reason="public data").status == "active"
    assert fd.call("weather", {"city": "Paris"}).value == 5

    # a regression is refused, a better version accepted
    worse = fd.create_tool(kit.slugify(code=kit.regression))
    assert "regression" in worse.step.blockers
    assert fd.show("slugify").version == 1
    better = fd.create_tool(kit.slugify(code=kit.better))
    assert (better.status, better.version) == ("active", 2)
    assert fd.call("slugify", {"text": "-x-"}).value == "x"

    # roll back
    fd.rollback("slugify", 1)
    assert fd.call("slugify", {"text": "-x-"}).value == "-x-"
    fd.close()

    # restart and find everything: a new process reads the same store
    listed = subprocess.run(
        [sys.executable, "-c", CLI, "tools", "list", "--json", "--db", db_url],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    rows = {t["name"]: (t["version"], t["status"]) for t in json.loads(listed.stdout)}
    assert rows == {"slugify": (1, "active"), "weather": (1, "active")}
    again = Foundry.open(db_url, config=config)
    assert [v.version for v in again.history("slugify")] == [1, 2]
    assert again.usage("slugify").calls == 3
    assert again.call("weather", {"city": "Rome"}).value == 4

    # search
    assert again.search("temperature city", k=1)[0].name == "weather"
    assert again.search("url slug", k=1)[0].name == "slugify"
    again.close()


def test_journey_cli(db_url: str, kit: type[Kit], weather_server: str, tmp_path: Path) -> None:
    config = tmp_path / "toolfoundry.toml"
    config.write_text(kit.loopback_config(weather_server))
    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(main, [*args, "--db", db_url, "--config", str(config)])

    def as_json(*args: str) -> tuple[int, Any]:
        result = run(*args, "--json")
        return result.exit_code, json.loads(result.stdout)

    def write(name: str, draft: dict[str, Any]) -> str:
        path = tmp_path / name
        path.write_text(json.dumps(draft))
        return str(path)

    assert as_json("create", str(kit.slugify_path))[1]["status"] == "active"
    assert as_json("call", "slugify", "--args", '{"text": "A B"}')[1]["value"] == "a-b"

    code, pending = as_json("create", write("weather.json", kit.weather(weather_server)))
    assert (code, pending["status"]) == (0, "pending_approval")
    assert [p["name"] for p in as_json("approvals", "list")[1]] == ["weather"]
    assert run("approvals", "approve", "weather@1", "--by", "alice").exit_code == 0
    assert as_json("call", "weather", "--args", '{"city": "Lima"}')[1]["value"] == 4

    code, refused = as_json("create", write("worse.json", kit.slugify(code=kit.regression)))
    assert (code, refused["status"]) == (1, "rejected")
    code, accepted = as_json("create", write("better.json", kit.slugify(code=kit.better)))
    assert (code, accepted["version"]) == (0, 2)

    assert run("tools", "rollback", "slugify", "1").exit_code == 0
    assert as_json("tools", "show", "slugify")[1]["version"] == 1
    assert "slugify@2/code.js" in run("tools", "diff", "slugify", "1", "2").stdout
    assert as_json("tools", "search", "temperature")[1][0]["name"] == "weather"
