"""A draft's ``returns`` holds for what its tests' calls return, the earlier versions' included."""

from __future__ import annotations

from typing import Any

from toolfoundry.forge import ExistingTool, forge_draft, parse_draft

SHOUT = "export function handler({ text }) {\n  return text.toUpperCase();\n}\n"


def shout(**changes: Any) -> dict[str, Any]:
    draft: dict[str, Any] = {
        "name": "shout",
        "description": "Upper-case a text.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        "returns": {"type": "string"},
        "code": SHOUT,
        "tests": [{"name": "hi", "input": {"text": "hi"}, "expected": "HI"}],
    }
    draft.update(changes)
    return draft


def test_values_that_match_returns_pass() -> None:
    report = forge_draft(shout())
    assert report.status.value == "active", report.to_dict()


def test_a_returned_value_that_breaks_returns_fails_its_test_located() -> None:
    """The expected value fits ``returns``, the code returns another one that does not: the
    case fails, and its reason says where the value breaks the schema."""
    code = "export function handler({ text }) {\n  return { text };\n}\n"
    report = forge_draft(shout(code=code))
    assert report.blockers == ("tests_failed",)
    [result] = report.test_results
    assert not result.passed
    assert "the returned value differs from expected" in result.reason
    assert "the returned value does not match returns: $: " in result.reason


def test_an_earlier_tests_value_must_fit_a_new_returns() -> None:
    """v2 narrows ``returns`` to at most 3 characters; v1's test still returns "HELLO", so the
    regression gate fails it, naming why."""
    v1 = shout(tests=[{"name": "hello", "input": {"text": "hello"}, "expected": "HELLO"}])
    previous = ExistingTool.from_draft(parse_draft(v1), version=1)
    v2 = shout(returns={"type": "string", "maxLength": 3})
    report = forge_draft(v2, previous=previous)
    assert report.blockers == ("regression",)
    assert report.regression is not None
    [earlier] = report.regression.results
    assert (earlier.name, earlier.passed) == ("v1:hello", False)
    assert earlier.reason.startswith("the returned value does not match returns: $: ")
    assert [r.passed for r in report.test_results] == [True]  # its own test fits
