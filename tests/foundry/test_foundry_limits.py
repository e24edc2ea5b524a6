"""One CallLimits: a draft is tested under exactly the limits its calls will have."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.factories import error_of

from toolfoundry import Foundry
from toolfoundry.config import (
    LIMIT_BOUNDS,
    LIMIT_KEYS,
    Config,
    ConfigError,
    load_config,
    parse_config,
)
from toolfoundry.foundry.meta_tools import builtin_tools
from toolfoundry.sandbox import SandboxPolicy
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.spec import CallLimits

SMALL = parse_config({"limits": {"output_bytes": 200}})

WORDY = {
    "name": "wordy",
    "description": "Repeat a word many times.",
    "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
    "code": "export function handler({ n }) { return 'word '.repeat(n); }",
    "tests": [{"input": {"n": 100}, "expected": "word " * 100}],
}


def test_output_bytes_applies_to_the_test_runs(db_url: str) -> None:
    with Foundry.open(db_url, config=SMALL) as fd:
        result = fd.create_tool(WORDY)
        assert result.status == "rejected"
        assert result.step.blockers == ("tests_failed",)
        [case] = result.test_results
        assert error_of(case).kind == "output_too_large"
        assert "200" in error_of(case).message
        assert fd.tools() == []


def test_the_same_limit_refuses_the_call(db_url: str) -> None:
    with Foundry.open(db_url) as fd:  # default limits: 500 bytes of output fit
        assert fd.create_tool(WORDY).status == "active"
    with Foundry.open(db_url, config=SMALL) as fd:
        out = fd.call("wordy", {"n": 100})
        assert error_of(out).kind.value == "output_too_large"
        assert fd.call("wordy", {"n": 2}).value == "word word "


def test_the_cli_reads_output_bytes_for_create(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolfoundry.toml").write_text("[limits]\noutput_bytes = 200\n")
    (tmp_path / "wordy.json").write_text(json.dumps(WORDY))
    from toolfoundry.cli import main

    result = CliRunner().invoke(main, ["create", "wordy.json", "--json", "--db", db_url])
    body = json.loads(result.stdout)
    assert body["status"] == "rejected"
    assert body["test_results"][0]["error"]["kind"] == "output_too_large"


def test_run_js_takes_the_configured_limits(db_url: str) -> None:
    with Foundry.open(db_url, config=SMALL) as fd:
        run_js = {t.spec.name: t for t in builtin_tools(fd)}["run_js"]
        out = run_js.call({"code": "export default 'x'.repeat(500);"})
        # a failed run is a failed call of run_js itself (isError over MCP), with its kind
        assert out.error is not None, out.to_dict()
        assert error_of(out).kind.value == "output_too_large"


def test_the_defaults_are_written_once() -> None:
    limits = CallLimits()
    assert parse_config({}).limits == limits
    policy = SandboxPolicy()
    assert (policy.timeout_s, policy.memory_bytes, policy.output_bytes) == (
        limits.timeout_s,
        limits.memory_bytes,
        limits.output_bytes,
    )
    assert SandboxPolicy.under(limits) == policy
    assert ProcessLimits().output_bytes == limits.output_bytes
    bounded = ProcessLimits().bounded_by(CallLimits(timeout_s=0.5, output_bytes=300))
    assert (bounded.timeout_s, bounded.output_bytes) == (0.5, 300)


# 0: no duplicate check, no wait in line, no calls through `tools` (or no nesting of them)
ZERO_ACCEPTED = (
    "duplicate_candidates",
    "dependent_tests",
    "python_queue_s",
    "inner_call_depth",
    "inner_calls",
)
HOSTILE_NUMBERS = ["inf", "-inf", "nan", "-1", "0", "1e300", "9" * 5000, "true", '"2"']


@pytest.mark.parametrize("key", [*LIMIT_KEYS, "max_requests"])
@pytest.mark.parametrize("number", HOSTILE_NUMBERS)
def test_config_refuses_a_non_finite_or_out_of_range_limit(
    tmp_path: Path, key: str, number: str
) -> None:
    if key in ZERO_ACCEPTED and number == "0":
        return  # 0 turns a check off, refuses at once what cannot wait, or forbids inner calls
    section = "fetch" if key == "max_requests" else "limits"
    path = tmp_path / "toolfoundry.toml"
    path.write_text(f"[{section}]\n{key} = {number}\n")
    with pytest.raises(ConfigError) as err:  # never a ValueError or OverflowError
        load_config(path)
    message = str(err.value)
    assert len(message) < 400  # a 5000-digit number is not echoed back
    if len(number) > 4300:  # tomllib itself refuses it, without saying where
        assert message.startswith(f"{path}: not valid TOML: "), message
    else:
        assert message.startswith(f"{path}: {section}.{key} must be "), message  # file, key


def test_every_limit_key_has_one_range() -> None:
    assert set(LIMIT_BOUNDS) == set(LIMIT_KEYS)
    assert load_config_text("[limits]\ntimeout_s = 3600\nmemory_mib = 8\n").limits == CallLimits(
        timeout_s=3600.0, memory_mib=8
    )


def load_config_text(text: str) -> Config:
    return parse_config(tomllib.loads(text))


@pytest.mark.parametrize("bad", [math.inf, math.nan, -1.0, 0, 1e300, 10**400, True])
def test_the_python_api_refuses_the_same_numbers(bad: Any) -> None:
    for build in (
        lambda: CallLimits(timeout_s=bad),
        lambda: SandboxPolicy(timeout_s=bad),
        lambda: ProcessLimits(timeout_s=bad),
        lambda: CallLimits(memory_mib=bad),
        lambda: SandboxPolicy(memory_bytes=bad),
        lambda: ProcessLimits(memory_bytes=bad),
    ):
        with pytest.raises(ValueError, match="must be"):
            build()


@pytest.mark.parametrize(
    "args",
    [
        ["js", "run", "t.js", "--timeout", "inf"],
        ["js", "run", "t.js", "--memory", "9" * 5000],
        ["js", "run", "t.js", "--memory", "1"],
        ["executor", "run", "t.py", "--timeout", "nan"],
        ["executor", "run", "t.py", "--memory", "-512"],
        ["agent", "task", "--model", "scripted:correct", "--max-seconds", "nan"],
        ["agent", "task", "--model", "scripted:correct", "--max-seconds", "inf"],
        ["executor", "serve", "--http", "127.0.0.1:0", "--token", "t", "--total-mib", "inf"],
        ["executor", "serve", "--http", "127.0.0.1:0", "--token", "t", "--queue-s", "nan"],
    ],
)
def test_cli_flags_reach_the_same_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.js").write_text("export default 1")
    (tmp_path / "t.py").write_text("def handler(a):\n    return 1\n")
    from toolfoundry.cli import main

    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, (result.output, result.exception)  # a usage error
    assert "Invalid value for '--" in result.stderr, result.stderr
    assert "Traceback" not in result.output
    assert len(result.stderr) < 600


def test_a_config_limit_out_of_range_is_a_usage_error_of_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolfoundry.toml").write_text("[limits]\ntimeout_s = inf\n")
    from toolfoundry.cli import main

    result = CliRunner().invoke(main, ["call", "anything", "--db", "sqlite:///r.db"])
    assert result.exit_code == 2, (result.output, result.exception)
    assert "limits.timeout_s must be a number in (0, 3600], got inf" in result.stderr
