"""One CallLimits: a draft is tested under exactly the limits its calls will have."""

from __future__ import annotations

import json

from click.testing import CliRunner

from toolfoundry import Foundry
from toolfoundry.config import parse_config
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


def test_output_bytes_applies_to_the_test_runs(db_url):
    with Foundry.open(db_url, config=SMALL) as fd:
        result = fd.create_tool(WORDY)
        assert result.status == "rejected"
        assert result.step.blockers == ("tests_failed",)
        [case] = result.test_results
        assert case["error"]["kind"] == "output_too_large"
        assert "200" in case["error"]["message"]
        assert fd.tools() == []


def test_the_same_limit_refuses_the_call(db_url):
    with Foundry.open(db_url) as fd:  # default limits: 500 bytes of output fit
        assert fd.create_tool(WORDY).status == "active"
    with Foundry.open(db_url, config=SMALL) as fd:
        out = fd.call("wordy", {"n": 100})
        assert out.error.kind.value == "output_too_large"
        assert fd.call("wordy", {"n": 2}).value == "word word "


def test_the_cli_reads_output_bytes_for_create(db_url, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "toolfoundry.toml").write_text("[limits]\noutput_bytes = 200\n")
    (tmp_path / "wordy.json").write_text(json.dumps(WORDY))
    from toolfoundry.cli import main

    result = CliRunner().invoke(main, ["create", "wordy.json", "--json", "--db", db_url])
    body = json.loads(result.stdout)
    assert body["status"] == "rejected"
    assert body["test_results"][0]["error"]["kind"] == "output_too_large"


def test_run_js_takes_the_configured_limits(db_url):
    with Foundry.open(db_url, config=SMALL) as fd:
        run_js = {t.spec.name: t for t in builtin_tools(fd)}["run_js"]
        out = run_js.call({"code": "export default 'x'.repeat(500);"})
        assert out.ok, out.to_dict()
        assert out.value["error"]["kind"] == "output_too_large"


def test_the_defaults_are_written_once():
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
