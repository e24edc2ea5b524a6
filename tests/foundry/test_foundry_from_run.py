"""A working snippet becomes a tool: create_tool with from_run (the run's module as the code,
the run as the first test, its inner answers and fetches as that test's fixtures), and a
draft's tests reaching the registry's pure tools for real."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.shared_drafts import network_draft, word_count_draft

from toolfoundry import Foundry
from toolfoundry.foundry.meta_tools import builtin_tools

TOTAL = """export async function handler({ texts }) {
  let total = 0;
  for (const text of texts) total += await tools.word_count({ text });
  return total;
}"""
PARAMETERS = {
    "type": "object",
    "properties": {"texts": {"type": "array", "items": {"type": "string"}}},
    "required": ["texts"],
}


@pytest.fixture
def fd(fd: Foundry) -> Foundry:
    """The area's foundry (tests/foundry/conftest.py) with the active tool ``word_count``."""
    assert fd.create_tool(word_count_draft()).status == "active"
    return fd


def from_run(run_id: str, **draft: Any) -> dict[str, Any]:
    return {
        "name": "total_words",
        "description": "Count the words of several texts.",
        "parameters": PARAMETERS,
        "from_run": run_id,
        **draft,
    }


def test_a_successful_run_becomes_an_active_tool_whose_first_test_is_the_run(fd: Foundry) -> None:
    run = fd.run_js(TOTAL, {"texts": ["a b", "c d e"]})
    assert run.ok, run.error
    created = fd.create_tool(from_run(run.details["run_id"]))
    assert created.status == "active", created.to_dict()
    version = fd.show("total_words")
    assert version.code == TOTAL
    [test] = version.tests
    assert test == {
        "name": f"run {run.details['run_id']}",
        "input": {"texts": ["a b", "c d e"]},
        "expected": 5,
        "fixtures": [
            {"tool": "word_count", "args": {"text": "a b"}, "value": 2},
            {"tool": "word_count", "args": {"text": "c d e"}, "value": 3},
        ],
    }
    # the new tool calls its callee for real, recorded as total_words@1's
    assert fd.call("total_words", {"texts": ["x y z", "w"]}).value == 4
    assert fd.usage("word_count").callers == {"run_js": 2, "total_words": 2}
    # the test replays the run from its fixtures, whatever the callee does now; verify still
    # fails the tool, as every real call of it would fail (its callee is disabled)
    fd.disable("word_count", by="alice")
    [verified] = fd.verify(["total_words"]).tools
    assert verified.failed == ()
    assert verified.outcome == "failed"
    assert "'word_count', which is disabled" in verified.callees[0].message


def test_the_drafts_own_tests_follow_the_run(fd: Foundry) -> None:
    run_id = fd.run_js(TOTAL, {"texts": ["a"]}).details["run_id"]
    created = fd.create_tool(
        from_run(run_id, tests=[{"name": "empty", "input": {"texts": []}, "expected": 0}])
    )
    assert created.status == "active", created.to_dict()
    assert [t["name"] for t in fd.show("total_words").tests] == [f"run {run_id}", "empty"]


@pytest.mark.parametrize(
    ("run_id", "message"),
    [("nope", "no run 'nope' is kept"), ("", "from_run must be the run_id")],
)
def test_an_unknown_run_is_a_located_refusal(fd: Foundry, run_id: str, message: str) -> None:
    created = fd.create_tool(from_run(run_id))
    assert created.status == "rejected"
    [finding] = [f for f in created.findings if f.path == "$.from_run"]
    assert message in finding.message


def test_a_failed_run_cannot_become_a_tool(fd: Foundry) -> None:
    run = fd.run_js("export default await tools.word_count({ text: 1 });")
    assert run.error is not None
    created = fd.create_tool(from_run(run.details["run_id"]))
    assert created.status == "rejected"
    assert "failed (invalid_arguments)" in created.findings[0].message


def test_code_and_from_run_together_are_refused(fd: Foundry) -> None:
    run_id = fd.run_js(TOTAL, {"texts": []}).details["run_id"]
    created = fd.create_tool(from_run(run_id, code="export default 1;"))
    assert created.status == "rejected"
    assert created.findings[0].message == "give code or from_run, not both"


def test_a_run_too_large_to_record_cannot_become_a_tool(fd: Foundry) -> None:
    from toolfoundry.sandbox import SandboxPolicy
    from toolfoundry.spec.limits import MIB

    big = fd.run_js(
        "export default (a) => a.s.length;",
        {"s": "x" * (2 * MIB)},
        policy=SandboxPolicy(timeout_s=10),
    )
    assert big.ok, big.error
    created = fd.create_tool(from_run(big.details["run_id"], parameters={"type": "object"}))
    assert created.status == "rejected"
    assert "too large to record" in created.findings[0].message


def test_a_json_draft_with_from_run_as_the_cli_gives_it(fd: Foundry) -> None:
    run_id = fd.run_js(TOTAL, {"texts": ["a b"]}).details["run_id"]
    created = fd.create_tool(json.dumps(from_run(run_id)))
    assert created.status == "active", created.to_dict()


def test_from_run_through_the_create_tool_meta_tool(fd: Foundry) -> None:
    tools = {t.spec.name: t for t in builtin_tools(fd)}
    ran = tools["run_js"].call({"code": TOTAL, "args": {"texts": ["one two"]}}).unwrap()
    assert ran["value"] == 2
    made = tools["create_tool"].call(from_run(ran["run_id"])).unwrap()
    assert made["status"] == "active", made
    assert "from_run" in tools["create_tool"].spec.parameters["properties"]


def test_a_run_with_a_network_tool_replays_from_fixtures(
    db_url: str, weather_server: str, kit: Any
) -> None:
    with Foundry.open(db_url, config=kit.loopback(weather_server)) as fd:
        assert fd.create_tool(kit.weather(weather_server)).status == "pending_approval"
        fd.approve("weather", by="alice")
        run = fd.run_js("export default await tools.weather({ city: 'Lima' });")
        assert run.ok, run.error
        made = fd.create_tool(
            {
                "name": "lima",
                "description": "Lima's temperature.",
                "from_run": run.details["run_id"],
            }
        )
        # no capability of its own (its callee keeps its approval): active at once
        assert made.status == "active", made.to_dict()
        [test] = fd.show("lima").tests
        assert test["fixtures"] == [{"tool": "weather", "args": {"city": "Lima"}, "value": 4}]


def test_a_drafts_tests_reach_pure_tools_for_real_and_never_the_network(
    db_url: str, kit: Any
) -> None:
    with Foundry.open(db_url) as fd:
        assert fd.create_tool(word_count_draft()).status == "active"
        assert fd.create_tool(network_draft("weather", "api.example.com")).status == (
            "pending_approval"
        )
        fd.approve("weather", by="alice")
        code = "export default async ({ text }) => 2 * await tools.word_count({ text });"
        twice = {
            "name": "twice",
            "description": "Twice the words.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
            "code": code,
            "tests": [{"input": {"text": "a b"}, "expected": 4}],
        }
        assert fd.create_tool(twice).status == "active"
        assert fd.usage("word_count").calls == 0  # a test's calls are not usage
        # re-running the suite later reaches the same callee the same way
        assert fd.verify(["twice"]).tools[0].outcome == "passed"
        reach = {
            **twice,
            "name": "reach",
            "code": "export default async () => tools.weather({ city: 'Oslo' });",
            "tests": [{"input": {}, "error": "a tool fixture answers for it"}],
        }
        refused = fd.create_tool(reach)
        assert refused.status == "active", refused.to_dict()  # the error it expected
        assert fd.usage("weather").calls == 0
