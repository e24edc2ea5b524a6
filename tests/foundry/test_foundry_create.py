"""create_tool: activation, pending approval, updates with the regression gate, refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from toolfoundry import Foundry
from toolfoundry.spec import StepStatus

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit

DRAFTS = Path(__file__).parent / "drafts"
BASE = json.loads((DRAFTS / "slugify.json").read_text())


def slugify_draft(**changes: Any) -> dict[str, Any]:
    return {**json.loads(json.dumps(BASE)), **changes}


def test_pure_tool_activates_and_is_callable(fd: Foundry) -> None:
    result = fd.create_tool(slugify_draft())
    assert result.status == "active"
    assert result.version == 1
    assert result.step.status is StepStatus.COMPLETED
    assert [t.passed for t in result.test_results] == [True, True]
    out = fd.call("slugify", {"text": "Big News"})
    assert out.ok
    assert out.value == "big-news"
    assert out.details["step"] == {"status": "completed"}
    stored = fd.show("slugify")
    assert stored.tests[0]["name"] == "basic"
    assert stored.spec.parameters["required"] == ["text"]


def test_draft_as_json_text_and_bytes(fd: Foundry) -> None:
    assert fd.create_tool(json.dumps(slugify_draft())).status == "active"
    assert (
        fd.create_tool(
            json.dumps(slugify_draft(code=(DRAFTS / "slugify_better.js").read_text())).encode()
        ).version
        == 2
    )


def test_update_that_breaks_previous_tests_is_refused_and_changes_nothing(
    kit: type[Kit], fd: Foundry
) -> None:
    fd.create_tool(slugify_draft())
    before = kit.snapshot(fd)
    tests = [{"name": "upper", "input": {"text": "Hi there"}, "expected": "HI-THERE"}]
    result = fd.create_tool(
        slugify_draft(code=(DRAFTS / "slugify_regression.js").read_text(), tests=tests)
    )
    assert result.status == "rejected"
    assert result.step.blockers == ("regression",)
    assert any(t.regression and not t.passed for t in result.test_results)
    assert kit.snapshot(fd) == before
    assert fd.show("slugify").version == 1


def test_deliberate_change_passes_the_gate_when_named(fd: Foundry) -> None:
    fd.create_tool(slugify_draft())
    tests = [
        {"name": "upper", "input": {"text": "Hi there"}, "expected": "HI-THERE"},
        {"name": "punct2", "input": {"text": "a, b"}, "expected": "A-B"},
    ]
    result = fd.create_tool(
        slugify_draft(
            code=(DRAFTS / "slugify_regression.js").read_text(),
            tests=tests,
            changes_tests=["basic", "punct"],
        )
    )
    assert result.status == "active", result.to_dict()
    assert fd.show("slugify").version == 2


def test_better_version_is_accepted_with_parent_and_diff(fd: Foundry) -> None:
    fd.create_tool(slugify_draft())
    tests = [*slugify_draft()["tests"], {"input": {"text": " Trim me "}, "expected": "trim-me"}]
    result = fd.create_tool(
        slugify_draft(code=(DRAFTS / "slugify_better.js").read_text(), tests=tests)
    )
    assert result.status == "active"
    assert result.version == 2
    current = fd.show("slugify")
    assert current.version == 2
    assert current.parent_version == 1
    diff = fd.diff("slugify", 1, 2)
    assert "--- slugify@1/code.js" in diff
    assert "+  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(" in diff
    assert fd.call("slugify", {"text": " Trim me "}).value == "trim-me"


def test_failing_tests_are_reported_and_change_nothing(kit: type[Kit], fd: Foundry) -> None:
    before = kit.snapshot(fd)
    draft = slugify_draft(tests=[{"name": "wrong", "input": {"text": "A"}, "expected": "b"}])
    result = fd.create_tool(draft)
    assert result.status == "rejected"
    assert result.step.blockers == ("tests_failed",)
    assert result.test_results[0].passed is False
    assert result.version is None
    assert kit.snapshot(fd) == before


def test_duplicate_code_is_refused_naming_the_tool(fd: Foundry, kit: type[Kit]) -> None:
    fd.create_tool(slugify_draft())
    before = kit.snapshot(fd)
    result = fd.create_tool(slugify_draft(name="make_slug"))
    assert result.status == "rejected"
    assert result.step.blockers == ("duplicate",)
    assert result.duplicate_of == "slugify"
    (finding,) = [f for f in result.findings if f.rule == "duplicate"]
    assert finding.severity.value == "error"
    assert "call_tool with name 'slugify'" in finding.message
    assert kit.snapshot(fd) == before


MALFORMED: dict[str, Any] = {
    "bad_json": b'{"name": "x", ',
    "not_an_object": b"[1, 2, 3]",
    "non_utf8": b'{"name": "\xff\xfe"}',
    "wrong_types": {**slugify_draft(), "name": 42, "tests": "many"},
    "schema_not_object": slugify_draft(parameters={"type": "string"}),
    "schema_invalid": slugify_draft(parameters={"type": "object", "properties": 5}),
    "huge_code": slugify_draft(code="export function handler() { return 1; }\n" + "//" * 400_000),
    "missing_tests": slugify_draft(tests=[]),
    "missing_description": {k: v for k, v in slugify_draft().items() if k != "description"},
    "syntax_error": slugify_draft(code="export function handler( { return 1; }"),
    "eval": slugify_draft(code="export function handler({ text }) { return eval(text); }"),
    "function_constructor": slugify_draft(
        code="export function handler() { return new Function('return 1')(); }"
    ),
    "unknown_import": slugify_draft(
        code="import fs from 'fs';\nexport function handler() { return 1; }"
    ),
    "fetch_without_network": slugify_draft(
        code="export async function handler() { return (await fetch('https://x.org')).status; }"
    ),
    "unknown_capability": slugify_draft(capabilities={"filesystem": True}),
    "reserved_name": slugify_draft(name="create_tool"),
    "bad_name": slugify_draft(name="has space"),
    "unknown_language": slugify_draft(language="cobol"),
    "failing_test": slugify_draft(tests=[{"input": {"text": "A"}, "expected": 1}]),
    "test_input_breaks_schema": slugify_draft(tests=[{"input": {"text": 5}, "expected": "5"}]),
}


@pytest.mark.parametrize("kind", sorted(MALFORMED))
def test_malformed_drafts_get_structured_errors_and_change_nothing(
    kit: type[Kit], fd: Foundry, kind: str
) -> None:
    fd.create_tool(slugify_draft(name="existing"))
    before = kit.snapshot(fd)
    result = fd.create_tool(MALFORMED[kind])
    assert result.status == "rejected"
    assert result.version is None
    assert result.step.status in (StepStatus.BLOCKED, StepStatus.UNAVAILABLE)
    assert result.findings or result.test_results
    for finding in result.to_dict()["findings"]:
        assert {"rule", "severity", "message"} <= set(finding)
    json.dumps(result.to_dict())  # always JSON-ready
    assert kit.snapshot(fd) == before


def test_behavioural_duplicate_is_named(fd: Foundry, kit: type[Kit]) -> None:
    fd.create_tool(slugify_draft())
    tests = [{"input": {"text": "Hello World"}, "expected": "hello-world"}]
    result = fd.create_tool(
        slugify_draft(
            name="url_slug",
            description="Make a URL slug from a title",
            code=(DRAFTS / "slugify_better.js").read_text(),
            tests=tests,
        )
    )
    assert result.status == "rejected"
    assert result.duplicate_of == "slugify"
    assert [f.rule for f in result.findings] == ["behavioural_duplicate"]
    said = fd.create_tool(
        slugify_draft(
            name="url_slug",
            description="Make a URL slug from a title",
            code=(DRAFTS / "slugify_better.js").read_text(),
            tests=tests,
            distinct_from={"name": "slugify", "why": "keeps accented letters"},
        )
    )
    assert said.status == "active"
    assert said.duplicate_of == "slugify"
    assert [(f.rule, f.severity.value) for f in said.findings] == [
        ("behavioural_duplicate", "warning")
    ]
    distinct = fd.show("url_slug").gate.distinct_from
    assert distinct is not None
    assert distinct.why == "keeps accented letters"
    different = fd.create_tool(
        slugify_draft(
            name="url_slug",
            code=(DRAFTS / "slugify_better.js").read_text(),
            tests=[{"input": {"text": "-Hello-"}, "expected": "hello"}],
            changes_tests=["#0"],
        )
    )
    assert different.duplicate_of is None


def test_approval_refuses_a_version_whose_stored_code_was_altered(
    fd: Foundry, kit: type[Kit], weather_server: str
) -> None:
    from sqlalchemy import text

    fd = Foundry(fd.registry, kit.loopback(weather_server))
    fd.create_tool(kit.weather(weather_server))
    with fd.registry.engine.begin() as conn:
        conn.execute(text("UPDATE tf_versions SET code = code || '\n// sneaky'"))
    decision = fd.approve("weather", by="alice", reason="looks fine")
    assert decision.step.blockers == ("binding_mismatch",)
    assert "code changed" in decision.step.message
    assert fd.show("weather").status.value == "pending_approval"
    assert fd.registry.approvals("weather") == []
