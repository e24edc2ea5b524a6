"""forge_draft end to end with the real sandbox: report shapes, regression gate, duplicates."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolfoundry.forge import (
    ApprovalBinding,
    CapabilityPolicy,
    ExistingTool,
    VersionStatus,
    behavioural_duplicates,
    code_sha256,
    forge_draft,
    parse_draft,
)
from toolfoundry.forge.sandbox_runner import SandboxRunner
from toolfoundry.spec import StepStatus

SLUG_V1 = """
export function handler({ text }) {
  if (!text) throw new Error("text is empty");
  return text.toLowerCase().trim().replace(/[^a-z0-9]+/g, "-");
}
"""


def slug_draft(**changes: Any) -> dict[str, Any]:
    draft: dict[str, Any] = {
        "name": "slugify",
        "description": "Turn a title into a URL slug.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string", "description": "the title"}},
            "required": ["text"],
        },
        "code": SLUG_V1,
        "tests": [
            {"name": "basic", "input": {"text": "Hello World"}, "expected": "hello-world"},
            {"name": "punct", "input": {"text": "Hi, there!"}, "expected": "hi-there-"},
            {"name": "empty", "input": {"text": ""}, "error": "empty"},
        ],
    }
    draft.update(changes)
    return draft


REPORT_KEYS = {
    "name",
    "status",
    "step",
    "findings",
    "test_results",
    "regression",
    "policy",
    "code_sha256",
    "capabilities_hash",
    "spec",
    "problems",
    "duration_ms",
}


def test_pure_tool_becomes_active() -> None:
    report = forge_draft(slug_draft())
    assert report.status is VersionStatus.ACTIVE
    assert report.step.status is StepStatus.COMPLETED
    assert [t.passed for t in report.test_results] == [True, True, True]
    assert report.code_sha256 == code_sha256(SLUG_V1)
    assert report.spec is not None
    assert report.spec.version == 1
    data = report.to_dict()
    assert set(data) == REPORT_KEYS
    assert data["status"] == "active"
    assert data["step"] == {
        "status": "completed",
        "message": "all 3 test(s) passed; the tool is active",
    }
    assert json.loads(json.dumps(data)) == data


def test_network_tool_waits_for_approval() -> None:
    code = (
        "export async function handler({ city }) {\n"
        "  const r = await fetch('https://api.example.com/w?city=' + city);\n"
        "  return (await r.json()).temp;\n}"
    )
    report = forge_draft(
        {
            "name": "weather",
            "description": "Current temperature of a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
            "code": code,
            "capabilities": {"network": ["api.example.com"]},
            "fixtures": [{"url": "https://api.example.com/w?city=Paris", "body": {"temp": 21}}],
            "tests": [{"input": {"city": "Paris"}, "expected": 21}],
        }
    )
    assert report.status is VersionStatus.PENDING_APPROVAL
    assert report.blockers == ("awaiting_approval",)
    assert report.decision is not None
    assert report.decision.reasons == ("network: the tool may send requests to api.example.com",)
    assert report.draft is not None
    binding = ApprovalBinding.of(report.draft.code, report.draft.capabilities)
    assert binding.code_sha256 == report.code_sha256
    assert binding.capabilities_hash == report.capabilities_hash
    assert report.test_results[0].to_dict()["passed"] is True


def test_policy_can_auto_approve_a_host() -> None:
    draft = slug_draft(
        code=SLUG_V1.replace("export function", "export async function").replace(
            'throw new Error("text is empty");',
            'throw new Error("text is empty"); if (text === "ping") return (await fetch("https://a.example")).status;',
        ),
        capabilities={"network": ["a.example"]},
    )
    assert forge_draft(draft).status is VersionStatus.PENDING_APPROVAL
    loose = CapabilityPolicy(auto_approve_network=("a.example",))
    assert forge_draft(draft, policy=loose).status is VersionStatus.ACTIVE
    strict = CapabilityPolicy(approve="all")
    assert forge_draft(slug_draft(), policy=strict).status is VersionStatus.PENDING_APPROVAL


def test_failing_tests_reject_with_diff() -> None:
    tests = [{"name": "underscore", "input": {"text": "A B"}, "expected": "a_b"}]
    report = forge_draft(slug_draft(tests=tests))
    assert report.status is VersionStatus.REJECTED
    assert report.blockers == ("tests_failed",)
    assert "underscore" in report.step.message
    failed = report.test_results[0]
    assert failed.actual == "a-b"
    assert failed.diff is not None
    assert '-"a_b"' in failed.diff


def test_static_errors_reject_before_any_code_runs(canary: Any) -> None:
    code = f"export async function handler() {{ await fetch('{canary.url}/'); return eval('1') }}"
    report = forge_draft(slug_draft(code=code, tests=[{"input": {"text": "x"}, "expected": 1}]))
    assert report.status is VersionStatus.REJECTED
    assert report.blockers == ("static_check_failed",)
    assert {f.rule for f in report.findings} >= {"no_eval", "network_without_capability"}
    assert report.test_results == ()
    assert canary.hits == []


def test_syntax_error_is_located() -> None:
    report = forge_draft(
        slug_draft(code="export function handler({ text }) {\n  return text +;\n}")
    )
    assert report.blockers == ("static_check_failed",)
    finding = report.findings[0]
    assert (finding.rule, finding.line) == ("syntax_error", 2)


@pytest.mark.parametrize(
    "data",
    [
        b"\xff\xfe",
        "{not json",
        "[]",
        None,
        42,
        {"name": "run_js"},
        {**slug_draft(), "tests": []},
        {**slug_draft(), "capabilities": {"network": ["api.example.com"], "gpu": True}},
        {**slug_draft(), "parameters": {"type": "string"}},
        {**slug_draft(), "code": "x" * (300 * 1024)},
    ],
)
def test_malformed_drafts_are_rejected_never_raised(data: Any) -> None:
    report = forge_draft(data)
    assert report.status is VersionStatus.REJECTED
    assert report.blockers == ("invalid_draft",)
    assert report.problems
    assert report.problems[0].path in report.step.message
    assert all(f.rule == "invalid_draft" and f.path for f in report.findings)
    assert report.to_dict()["spec"] is None


def test_python_tier_is_unavailable_for_now() -> None:
    report = forge_draft(
        slug_draft(language="python", code="def handler(text):\n    return text\n")
    )
    assert report.status is VersionStatus.REJECTED
    assert report.blockers == ("python_tier_unavailable",)
    assert report.findings[0].path == "$.language"


def previous_v1() -> ExistingTool:
    return ExistingTool.from_draft(parse_draft(slug_draft()), version=1)


def test_update_passing_old_and_new_tests_is_accepted() -> None:
    better = SLUG_V1.replace(
        '.replace(/[^a-z0-9]+/g, "-")', '.replace(/[^a-z0-9]+/g, "-").replace(/-+$/, "")'
    )
    tests = [{"name": "no trailing", "input": {"text": "Hi!"}, "expected": "hi"}]
    report = forge_draft(
        slug_draft(code=better, tests=tests, changes_tests=["punct"]), previous=previous_v1()
    )
    assert report.status is VersionStatus.ACTIVE, report.to_dict()
    assert report.spec is not None
    assert report.spec.version == 2
    assert report.regression is not None
    assert report.regression.changed == ("punct",)
    assert [r.name for r in report.regression.results] == ["v1:basic", "v1:empty"]


def test_regression_is_refused_naming_the_broken_tests() -> None:
    better = SLUG_V1.replace(
        '.replace(/[^a-z0-9]+/g, "-")', '.replace(/[^a-z0-9]+/g, "-").replace(/-+$/, "")'
    )
    tests = [{"name": "no trailing", "input": {"text": "Hi!"}, "expected": "hi"}]
    report = forge_draft(slug_draft(code=better, tests=tests), previous=previous_v1())
    assert report.status is VersionStatus.REJECTED
    assert report.blockers == ("regression",)
    assert report.regression is not None
    assert report.regression.failed == ("v1:punct",)
    assert "v1:punct" in report.step.message
    assert "changes_tests" in report.step.message
    shown = report.to_dict()["regression"]
    assert shown is not None
    assert shown["failed"] == ["v1:punct"]


def test_changes_tests_accepts_indexes_and_warns_on_unknown() -> None:
    better = SLUG_V1.replace(
        '.replace(/[^a-z0-9]+/g, "-")', '.replace(/[^a-z0-9]+/g, "-").replace(/-+$/, "")'
    )
    draft = slug_draft(
        code=better, tests=[{"input": {"text": "Hi!"}, "expected": "hi"}], changes_tests=[1, "nope"]
    )
    report = forge_draft(draft, previous=previous_v1())
    assert report.status is VersionStatus.ACTIVE
    assert any(f.rule == "unknown_changed_test" and "nope" in f.message for f in report.findings)


def test_own_tests_and_regression_both_reported() -> None:
    broken = "export function handler({ text }) { return text }"
    report = forge_draft(slug_draft(code=broken), previous=previous_v1())
    assert report.blockers == ("tests_failed", "regression")


def test_schema_change_breaking_old_inputs_is_a_regression() -> None:
    params = {
        "type": "object",
        "properties": {"title": {"type": "string"}},
        "required": ["title"],
        "additionalProperties": False,
    }
    code = SLUG_V1.replace("{ text }", "{ title: text }")
    tests = [{"input": {"title": "A b"}, "expected": "a-b"}]
    report = forge_draft(
        slug_draft(parameters=params, code=code, tests=tests), previous=previous_v1()
    )
    assert report.blockers == ("regression",)
    assert report.regression is not None
    assert "no longer satisfies the new parameters schema" in report.regression.results[0].reason


def test_the_next_version_of_an_existing_tool_is_numbered_after_it() -> None:
    tool = ExistingTool.from_draft(parse_draft(slug_draft()), version=4)
    assert tool.version == 4
    assert [t.name for t in tool.tests] == ["basic", "punct", "empty"]
    assert forge_draft(slug_draft(), previous=tool).spec.version == 5  # type: ignore[union-attr]


def test_behavioural_duplicates() -> None:
    draft = parse_draft(slug_draft(name="make_slug"))
    same = ExistingTool.from_draft(
        parse_draft(
            slug_draft(
                name="slugger",
                code=SLUG_V1.replace(
                    "text.toLowerCase().trim()", "String(text).trim().toLowerCase()"
                ),
            )
        ),
        version=3,
    )
    different = ExistingTool.from_draft(
        parse_draft(
            slug_draft(name="upper", code="export const handler = ({ text }) => text.toUpperCase()")
        ),
        version=1,
    )
    itself = ExistingTool.from_draft(draft, version=1)
    found = behavioural_duplicates(draft, [same, different, itself], runner=SandboxRunner())
    assert found == ("slugger",)
