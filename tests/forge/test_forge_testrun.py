"""The sandboxed test runner with the real run_js: JSON comparison, errors, fixtures, limits."""

from __future__ import annotations

from typing import Any

import pytest

from toolfoundry.forge import (
    Fixture,
    TestCase,
    json_diff,
    json_equal,
    parse_draft,
    run_cases,
)
from toolfoundry.forge.sandbox_runner import SandboxRunner
from toolfoundry.spec import CallLimits, Capabilities, StorageScope

from .conftest import Canary

RUNNER = SandboxRunner()
LIMITS = CallLimits(timeout_s=2.0, memory_mib=64)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (True, 1, False),
        (False, 0, False),
        (None, None, True),
        (None, 0, False),
        ("1", 1, False),
        ({"a": [1, {"b": 2}]}, {"a": [1, {"b": 2.0}]}, True),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ([1, 2], [2, 1], False),
        ([], {}, False),
        ({"x": [True]}, {"x": [1]}, False),
    ],
)
def test_json_equality(a: Any, b: Any, equal: bool) -> None:
    assert json_equal(a, b) is equal
    assert json_equal(b, a) is equal


def test_json_diff_is_unified_and_sorted() -> None:
    diff = json_diff({"b": 1, "a": [1, 2]}, {"a": [1, 3], "b": 1})
    assert diff.startswith("--- expected\n+++ actual\n")
    assert "-    2\n+    3" in diff
    assert len(json_diff("x" * 10_000, "y" * 10_000)) < 4100


def cases(raw: list[dict[str, Any]], **extra: Any) -> tuple[TestCase, ...]:
    draft = parse_draft(
        {
            "name": "t",
            "description": "test tool",
            "code": "export const handler = () => 1",
            "tests": raw,
            **extra,
        }
    )
    return draft.tests


def run(code: str, raw: list[dict[str, Any]], **kwargs: Any) -> list[Any]:
    extra: dict[str, Any] = {k: kwargs.pop(k) for k in ("capabilities", "fixtures") if k in kwargs}
    tests = cases(raw, **extra)
    fixtures = parse_draft(
        {
            "name": "t",
            "description": "d",
            "code": "x",
            "tests": [{"input": {}, "expected": 1}],
            **extra,
        }
    ).fixtures
    caps = Capabilities.from_dict(extra.get("capabilities"))
    return list(
        run_cases(
            RUNNER, code, tests, limits=LIMITS, fixtures=fixtures, capabilities=caps, tool="t"
        )
    )


def test_expected_values_compared_as_json() -> None:
    code = "export function handler({ n }) { return { n, sq: n * n, list: [n, true, null] } }"
    results = run(
        code,
        [
            {
                "name": "ok",
                "input": {"n": 3},
                "expected": {"sq": 9.0, "n": 3, "list": [3, True, None]},
            },
            {
                "name": "wrong",
                "input": {"n": 2},
                "expected": {"n": 2, "sq": 5, "list": [2, True, None]},
            },
        ],
    )
    assert [r.passed for r in results] == [True, False]
    wrong = results[1]
    assert wrong.actual == {"n": 2, "sq": 4, "list": [2, True, None]}
    assert wrong.diff is not None
    assert '-  "sq": 5' in wrong.diff
    assert '+  "sq": 4' in wrong.diff
    assert wrong.reason == "the returned value differs from expected"
    assert wrong.duration_ms > 0


def test_error_cases_match_a_substring_and_kind() -> None:
    code = (
        "export function handler({ n }) {\n"
        "  if (n < 0) throw new RangeError('n must be >= 0');\n"
        "  return n\n"
        "}"
    )
    results = run(
        code,
        [
            {"name": "sub", "input": {"n": -1}, "error": "must be >= 0"},
            {"name": "case", "input": {"n": -1}, "error": "N MUST"},
            {"name": "kind", "input": {"n": -1}, "error": "must", "error_kind": "runtime_error"},
            {"name": "wrongkind", "input": {"n": -1}, "error": "must", "error_kind": "timeout"},
            {"name": "wrongtext", "input": {"n": -1}, "error": "negative"},
            {"name": "noerror", "input": {"n": 1}, "error": "must"},
        ],
    )
    assert [r.passed for r in results] == [True, True, True, False, False, False]
    assert "expected error kind timeout" in results[3].reason
    assert "expected an error containing 'negative'" in results[4].reason
    assert "returned a value" in results[5].reason
    assert results[0].error is not None
    assert results[0].error.kind == "runtime_error"


def test_a_failing_call_fails_an_expected_case_with_the_error() -> None:
    results = run("export function handler() { return null.x }", [{"input": {}, "expected": 1}])
    assert not results[0].passed
    assert results[0].reason.startswith("the call failed: runtime_error")


def test_each_case_runs_with_the_limits() -> None:
    tests = cases([{"name": "loop", "input": {}, "expected": 1}])
    code = "export function handler() { for (;;) {} }"
    result = run_cases(RUNNER, code, tests, limits=CallLimits(timeout_s=0.3))[0]
    assert not result.passed
    assert result.error is not None
    assert result.error.kind == "timeout"
    assert result.duration_ms < 2000


def test_each_case_gets_a_pristine_sandbox() -> None:
    code = (
        "globalThis.count = (globalThis.count || 0) + 1;\n"
        "export function handler() {\n"
        "  localStorage.setItem('n', String(Number(localStorage.getItem('n') || 0) + 1));"
        " return [globalThis.count, localStorage.getItem('n')] }"
    )
    results = run(
        code,
        [
            {"name": "a", "input": {}, "expected": [1, "1"]},
            {"name": "b", "input": {}, "expected": [1, "1"]},
        ],
        capabilities={"storage": True},
    )
    assert [r.passed for r in results] == [True, True], [r.to_dict() for r in results]


def test_console_logs_are_kept() -> None:
    results = run(
        "export function handler() { console.log('hello from the tool'); return 1 }",
        [{"input": {}, "expected": 1}],
    )
    assert any("hello from the tool" in line for line in results[0].logs)


NETWORK_CODE = """
export async function handler({ city }) {
  const r = await fetch(`https://api.example.com/weather?city=${encodeURIComponent(city)}`);
  if (!r.ok) throw new Error(`upstream said ${r.status}`);
  const data = await r.json();
  return { city, temp: data.temp };
}
"""


def test_network_tool_is_tested_with_fixtures() -> None:
    results = run(
        NETWORK_CODE,
        [
            {
                "name": "paris",
                "input": {"city": "Paris"},
                "expected": {"city": "Paris", "temp": 21},
            },
            {
                "name": "own fixture wins",
                "input": {"city": "Paris"},
                "expected": {"city": "Paris", "temp": -5},
                "fixtures": [
                    {"url": "https://api.example.com/weather?city=Paris", "body": {"temp": -5}}
                ],
            },
            {"name": "upstream error", "input": {"city": "Nowhere"}, "error": "upstream said 404"},
        ],
        capabilities={"network": ["api.example.com"]},
        fixtures=[
            {"url": "https://api.example.com/weather?city=Paris", "body": {"temp": 21}},
            {
                "url": "https://api.example.com/weather?city=Nowhere",
                "status": 404,
                "body": "no such city",
            },
        ],
    )
    assert [r.passed for r in results] == [True, True, True], [r.to_dict() for r in results]


def test_network_is_cut_when_a_fixture_is_missing() -> None:
    results = run(
        NETWORK_CODE,
        [{"name": "oslo", "input": {"city": "Oslo"}, "expected": {"city": "Oslo", "temp": 3}}],
        capabilities={"network": ["api.example.com"]},
        fixtures=[{"url": "https://api.example.com/weather?city=Paris", "body": {"temp": 21}}],
    )
    assert not results[0].passed
    assert results[0].error is not None
    assert results[0].error.kind == "capability_denied"
    assert (
        "no fixture for GET https://api.example.com/weather?city=Oslo" in results[0].error.message
    )


def test_network_is_cut_even_for_a_real_local_server(canary: Canary) -> None:
    code = f"export async function handler() {{ return (await fetch('{canary.url}/x')).status }}"
    host = canary.url.removeprefix("http://")
    results = run(code, [{"input": {}, "expected": 200}], capabilities={"network": [host]})
    assert not results[0].passed
    assert results[0].error is not None
    assert results[0].error.kind == "capability_denied"
    assert canary.hits == []


def test_duplicate_fixtures_after_canonicalisation_keep_the_first() -> None:
    from toolfoundry.forge.sandbox_runner import canonical_fixtures

    kept = canonical_fixtures(
        (
            Fixture("https://API.example.com./x", body="first"),
            Fixture("https://api.example.com/x", body="second"),
        )
    )
    assert [f["body"] for f in kept] == ["first"]
    caps = Capabilities(network=("api.example.com",), storage=StorageScope.NONE)
    assert caps.network == ("api.example.com",)
