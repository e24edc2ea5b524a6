"""``toolfoundry tools verify``: every active tool's accumulated suite, re-run in the sandbox as
it is now, through the CLI on a real registry (and ``Foundry.verify``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.registry import NewVersion, VersionStatus

# passes under the default limits; its output (5 000+ bytes of JSON) breaks output_bytes = 1000
WIDE = {"name": "wide", "input": {"text": "x", "width": 5000}, "expected": "x" + "-" * 4999}
SHORT = {"name": "short", "input": {"text": "ab", "width": 4}, "expected": "ab--"}
EXACT = {"name": "exact", "input": {"text": "abc", "width": 3}, "expected": "abc"}


def pad(tests: list[dict[str, Any]], description: str = "Pad text with dashes") -> dict[str, Any]:
    return {
        "name": "pad",
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "width": {"type": "integer"}},
            "required": ["text", "width"],
        },
        "code": "export function handler({ text, width }) { return text.padEnd(width, '-'); }",
        "tests": tests,
    }


def verify(db: str, *args: str, config: Path | None = None) -> Result:
    extra = ["--config", str(config)] if config else []
    return CliRunner().invoke(main, ["tools", "verify", "--db", db, *extra, *args])


def as_json(result: Result) -> dict[str, Any]:
    body = json.loads(result.stdout)  # strict: a control character raw in a string fails
    assert isinstance(body, dict)
    return body


@pytest.fixture
def low_output(tmp_path: Path) -> Path:
    path = tmp_path / "toolfoundry.toml"
    path.write_text("[limits]\noutput_bytes = 1000\n")
    return path


def test_a_suite_that_breaks_under_a_tighter_limit_fails_naming_the_earlier_test(
    fd: Foundry, db_url: str, low_output: Path
) -> None:
    assert fd.create_tool(pad([WIDE])).status == "active"
    v2 = fd.create_tool(pad([SHORT, EXACT], description="Pad text with dashes, v2"))
    assert (v2.status, v2.version) == ("active", 2), v2.to_dict()
    fine = verify(db_url, "--json")
    assert fine.exit_code == 0, fine.output
    body = as_json(fine)
    assert body["ok"] is True
    assert body["counts"] == {
        "passed": 1,
        "failed": 0,
        "unavailable": 0,
        "skipped": 0,
        "unfinished": 0,
    }
    [tool] = body["tools"]
    assert (tool["name"], tool["version"], tool["outcome"]) == ("pad", 2, "passed")
    # the accumulated suite: v1's test (labelled as the gate labels it), then v2's own
    assert [r["name"] for r in tool["results"]] == ["v1:wide", "short", "exact"]

    broken = verify(db_url, "--json", config=low_output)
    assert broken.exit_code == 1, broken.output
    body = as_json(broken)
    assert body["ok"] is False
    assert body["step"]["status"] == "blocked"
    assert body["step"]["blockers"] == ["tests_failed"]
    assert body["step"]["details"] == {"failed_tools": ["pad"]}
    [tool] = body["tools"]
    assert tool["outcome"] == "failed"
    assert tool["failed"] == ["v1:wide"]
    [wide] = [r for r in tool["results"] if not r["passed"]]
    assert wide["error"]["kind"] == "output_too_large"

    text = verify(db_url, config=low_output)
    assert text.exit_code == 1
    assert "FAILED      pad v2  1 of 3 test(s) failed: v1:wide" in text.output
    assert "v1:wide: the call failed: output_too_large" in text.output
    assert "1 tool(s) verified: 1 failed (pad)" in text.output


def test_a_changed_result_shows_the_diff_and_only_named_tools_run(fd: Foundry, db_url: str) -> None:
    """A version stored before suites were (no extra.suite, as an older release wrote it) whose
    stored test expects what an older engine returned: the current one differs, and the
    failure carries the diff; v1's tests come back through the history, as the gate rebuilds
    them."""
    code = "export function handler() { return [1, 2, 3].map(String); }"
    for number, expected in ((1, ["1", "2", "3"]), (2, ["1", "2", "3", "4"])):
        fd.registry.add_version(
            NewVersion(
                name="digits",
                code=code,
                description=f"Digits as strings, v{number}",
                parameters={"type": "object", "properties": {}},
                status=VersionStatus.ACTIVE,
                tests=[{"name": f"t{number}", "input": {}, "expected": expected}],
                parent_version=number - 1 or None,
            )
        )
    assert fd.create_tool(pad([SHORT])).status == "active"
    result = verify(db_url, "digits")
    assert result.exit_code == 1
    assert "FAILED      digits v2  1 of 2 test(s) failed: t2" in result.output
    assert "t2: the returned value differs from expected" in result.output
    assert '-  "4"' in result.output
    assert "pad" not in result.output  # only the named tool ran
    body = as_json(verify(db_url, "digits", "--json"))
    [tool] = body["tools"]
    assert [(r["name"], r["passed"]) for r in tool["results"]] == [("v1:t1", True), ("t2", False)]
    assert '-  "4"' in tool["results"][1]["diff"]


def test_earlier_tests_run_with_the_fixtures_of_the_version_they_gated(
    fd: Foundry, db_url: str, kit: Any, weather_server: str
) -> None:
    """v2 dropped v1's draft-level fixture; the gate ran v1:oslo with v1's fixtures layered
    over v2's, so verify does too (without them the test could not fetch and would fail)."""
    fd = Foundry(fd.registry, kit.loopback(weather_server))
    v1 = kit.weather(weather_server)
    v1["tests"][0]["name"] = "oslo"
    fd.create_tool(v1)
    fd.approve("weather", by="alice", reason="fine")
    v2 = kit.weather(weather_server)
    url = f"http://{weather_server}/w?city=Bergen"
    v2.update(
        description="Current temperature for a city (v2)",
        fixtures=[],
        tests=[
            {
                "name": "bergen",
                "input": {"city": "Bergen"},
                "expected": 5,
                "fixtures": [{"url": url, "body": '{"temp": 5}'}],
            }
        ],
    )
    assert fd.create_tool(v2).status == "pending_approval"
    fd.approve("weather", by="alice", reason="fine")
    report = fd.verify()
    [tool] = report.tools
    assert (tool.version, tool.outcome) == (2, "passed"), tool.to_dict()
    assert [r.name for r in tool.results] == ["v1:oslo", "bergen"]
    assert report.step.status.value == "completed"


def test_pending_and_disabled_tools_are_skipped_when_named_and_left_out_otherwise(
    fd: Foundry, db_url: str, kit: Any, weather_server: str
) -> None:
    fd = Foundry(fd.registry, kit.loopback(weather_server))
    assert fd.create_tool(kit.weather(weather_server)).status == "pending_approval"
    assert fd.create_tool(pad([SHORT])).status == "active"
    assert fd.create_tool(kit.slugify()).status == "active"
    fd.disable("slugify", by="alice")
    every = as_json(verify(db_url, "--json"))
    assert [t["name"] for t in every["tools"]] == ["pad"]
    named = verify(db_url, "weather", "slugify", "pad", "pad", "--json")
    assert named.exit_code == 0, named.output
    body = as_json(named)
    outcomes = [(t["name"], t["outcome"]) for t in body["tools"]]
    assert outcomes == [("pad", "passed"), ("slugify", "skipped"), ("weather", "skipped")]
    assert body["tools"][2]["message"] == (
        "v1 is pending_approval: only active versions are verified"
    )
    assert body["step"]["message"] == "3 tool(s) verified: 1 passed, 2 skipped"


def test_an_unknown_name_is_a_structured_error_and_runs_nothing(fd: Foundry, db_url: str) -> None:
    assert fd.create_tool(pad([SHORT])).status == "active"
    result = verify(db_url, "pad", "nope\x1b[2J", "--json")
    assert result.exit_code == 1
    body = as_json(result)
    assert body == {"error": {"kind": "not_found", "message": "no tool named 'nope\\x1b[2J'"}}
    assert "\x1b" not in result.stdout
    text = verify(db_url, "nope\x1b[2J")
    assert text.exit_code == 1
    assert "\x1b" not in text.output
    assert "error (not_found)" in text.output
    # a non-UTF-8 byte of argv arrives as a lone surrogate: unknown, not a crash
    odd = verify(db_url, "pad", "\udcff", "--json")
    assert odd.exit_code == 1
    assert as_json(odd)["error"] == {"kind": "not_found", "message": "no tool named '\\udcff'"}


def test_an_empty_registry_verifies_nothing_and_succeeds(db_url: str) -> None:
    result = verify(db_url, "--json")
    assert result.exit_code == 0, result.output
    body = as_json(result)
    assert body["tools"] == []
    assert body["ok"] is True
    assert body["step"] == {"status": "completed", "message": "0 tool(s) verified"}


def test_a_python_tool_without_its_tier_is_unavailable_not_a_failure(
    fd: Foundry, db_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Where bubblewrap is missing (PATH without it, no executor service) no Python-tier tool
    can run: verify says so for each and still exits 0 when nothing failed."""
    fd.registry.add_version(
        NewVersion(
            name="double",
            code="def handler(args):\n    return args['n'] * 2\n",
            description="Double a number",
            parameters={"type": "object", "properties": {"n": {"type": "integer"}}},
            status=VersionStatus.ACTIVE,
            language="python",
            tests=[{"name": "two", "input": {"n": 2}, "expected": 4}],
        )
    )
    assert fd.create_tool(pad([SHORT])).status == "active"
    bare = tmp_path / "bin"
    bare.mkdir()
    assert shutil.which("bwrap", path=str(bare)) is None
    monkeypatch.setenv("PATH", str(bare))
    monkeypatch.delenv("TOOLFOUNDRY_EXECUTOR", raising=False)
    result = verify(db_url, "--json")
    assert result.exit_code == 0, result.output
    body = as_json(result)
    outcomes = {t["name"]: (t["outcome"], t["message"]) for t in body["tools"]}
    assert outcomes["pad"][0] == "passed"
    assert outcomes["double"] == (
        "unavailable",
        "the Python tier is not available here (no executor), so it was not run",
    )
    assert body["step"]["message"] == "2 tool(s) verified: 1 passed, 1 unavailable"


@pytest.mark.slow
def test_a_python_tool_is_verified_in_its_jail(fd: Foundry, db_url: str) -> None:
    if shutil.which("bwrap") is None or fd.python_executor() is None:
        pytest.skip("the Python tier (bubblewrap) is not available here")
    draft = {
        "name": "double",
        "description": "Double a number",
        "language": "python",
        "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "code": "def handler(args):\n    return args['n'] * 2\n",
        "tests": [{"name": "two", "input": {"n": 2}, "expected": 4}],
    }
    assert fd.create_tool(draft).status == "pending_approval"  # the tier always asks a human
    fd.approve("double", by="alice", reason="fine")
    [tool] = fd.verify().tools
    assert (tool.outcome, [r.name for r in tool.results]) == ("passed", ["two"])


def test_fixtures_no_call_could_fetch_under_todays_fetch_config_fail_verification(
    fd: Foundry, db_url: str, kit: Any, weather_server: str, tmp_path: Path
) -> None:
    """The weather tool was made while [fetch] let calls reach the loopback server over plain
    http; with that taken out of toolfoundry.toml its tests still pass on canned answers, but
    every real call would be refused: verify fails the tool, naming the fixture and the key."""
    fd = Foundry(fd.registry, kit.loopback(weather_server))
    fd.create_tool(kit.weather(weather_server))
    fd.approve("weather", by="alice", reason="fine")
    allowed = tmp_path / "allowed.toml"
    allowed.write_text(kit.loopback_config(weather_server))
    fine = verify(db_url, "--json", config=allowed)
    assert fine.exit_code == 0, fine.output
    assert as_json(fine)["tools"][0]["unreachable"] == []
    strict = tmp_path / "strict.toml"
    strict.write_text('[fetch]\nallow_private = ["127.0.0.1"]\n')
    broken = verify(db_url, "--json", config=strict)
    assert broken.exit_code == 1, broken.output
    [tool] = as_json(broken)["tools"]
    assert tool["outcome"] == "failed"
    assert tool["failed"] == []  # every test passed: the canned answers still answer
    assert tool["message"] == (
        "all 1 test(s) passed; 1 fixture URL(s) no call could fetch under the current [fetch]"
    )
    [problem] = tool["unreachable"]
    assert problem["path"] == "$.fixtures[0].url"
    assert "allow_http" in problem["message"]
    text = verify(db_url, config=strict)
    assert "    $.fixtures[0].url: a call could never fetch this URL" in text.output


def test_a_tool_budget_stops_a_suite_between_tests(fd: Foundry) -> None:
    """A background review bounds each tool (``[review] tool_budget_s``): no test starts after
    the budget, and a suite cut short with nothing failed is ``unfinished``, not passed."""
    from toolfoundry.foundry.verify import Verifier

    assert fd.create_tool(pad([SHORT, EXACT, WIDE])).status == "active"
    bounded = Verifier(fd.registry, fd.config, tool_budget_s=0.0)
    [tool] = bounded.verify().tools
    assert tool.outcome == "unfinished"
    assert len(tool.results) < 3
    assert "not run: the tool's budget of 0 s ran out" in tool.message
    [whole] = Verifier(fd.registry, fd.config).verify().tools
    assert (whole.outcome, len(whole.results)) == ("passed", 3)
