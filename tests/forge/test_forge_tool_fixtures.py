"""Tool fixtures: a test case's answers to the code's `tools` calls, parsed and located, and
what the runner's `tools` does with them (real sandbox runs)."""

from __future__ import annotations

from typing import Any

import pytest

from toolfoundry.forge import DraftError, parse_draft
from toolfoundry.forge.sandbox_runner import SandboxRunner
from toolfoundry.forge.testrun import run_case
from toolfoundry.forge.tool_fixtures import TestTools
from toolfoundry.sandbox.host.protocols import ToolRequest
from toolfoundry.spec import CallLimits, CallResult, ErrorKind

CODE = """export async function handler({ city }) {
  const { temp } = await tools.weather({ city });
  const again = await tools.call("weather", { city }, { version: 2 }).catch((e) => e.kind);
  return { temp, again };
}"""


def draft(fixtures: list[Any], **case: Any) -> dict[str, Any]:
    test = {"input": {"city": "Oslo"}, "expected": {"temp": 4, "again": "not_active"}, **case}
    test["fixtures"] = fixtures
    # its own network host only so that the mixed list's fetch fixture is one it could make
    capabilities = {"network": ["api.example.com"]}
    return {
        "name": "card",
        "description": "A card.",
        "code": CODE,
        "tests": [test],
        "capabilities": capabilities,
    }


FIXTURES = [
    {"url": "https://api.example.com/x", "body": "unused"},
    {"tool": "weather", "args": {"city": "Oslo"}, "value": {"temp": 4}},
    {
        "tool": "weather",
        "args": {"city": "Oslo"},
        "version": 2,
        "error": {"kind": "not_active", "message": "v2 waits for approval"},
    },
]


def test_a_case_keeps_its_tool_fixtures_next_to_its_fetch_fixtures() -> None:
    parsed = parse_draft(draft(FIXTURES))
    [case] = parsed.tests
    assert [f.url for f in case.fixtures] == ["https://api.example.com/x"]
    assert [(f.tool, f.version) for f in case.tool_fixtures] == [("weather", None), ("weather", 2)]
    # the draft form round-trips: the fetch fixtures, then the tool fixtures
    assert case.to_dict()["fixtures"][1:] == [
        {"tool": "weather", "args": {"city": "Oslo"}, "value": {"temp": 4}},
        {
            "tool": "weather",
            "args": {"city": "Oslo"},
            "version": 2,
            "error": {"kind": "not_active", "message": "v2 waits for approval"},
        },
    ]
    assert parse_draft(parsed.to_dict()).tests == parsed.tests


@pytest.mark.parametrize(
    ("fixture", "path", "message"),
    [
        ({"tool": "w", "args": {}}, "$.tests[0].fixtures[0]", "exactly one of 'value' or 'error'"),
        ({"tool": "w", "value": 1, "error": {}}, "$.tests[0].fixtures[0]", "exactly one"),
        ({"tool": "", "value": 1}, "$.tests[0].fixtures[0].tool", "tool's name"),
        ({"tool": "w", "args": [1], "value": 1}, "$.tests[0].fixtures[0].args", "arguments"),
        ({"tool": "w", "version": 0, "value": 1}, "$.tests[0].fixtures[0].version", "positive"),
        (
            {"tool": "w", "error": {"kind": "nope", "message": ""}},
            "$.tests[0].fixtures[0].error",
            "kind",
        ),
        ({"tool": "w", "value": 1, "extra": 1}, "$.tests[0].fixtures[0].extra", "unknown field"),
    ],
)
def test_a_malformed_tool_fixture_is_located(
    fixture: dict[str, Any], path: str, message: str
) -> None:
    with pytest.raises(DraftError) as err:
        parse_draft(draft([fixture]))
    found = {p.path: p.message for p in err.value.problems}
    assert path in found, found
    assert message in found[path]


def test_a_repeated_call_and_a_draft_level_tool_fixture_are_refused() -> None:
    twice = [{"tool": "w", "value": 1}, {"tool": "w", "args": {}, "value": 2}]
    with pytest.raises(DraftError) as err:
        parse_draft(draft(twice))
    assert "$.tests[0].fixtures[1]" in {p.path for p in err.value.problems}
    top = {**draft([]), "fixtures": [{"tool": "w", "value": 1}]}
    with pytest.raises(DraftError) as err:
        parse_draft(top)
    assert {p.path for p in err.value.problems} == {"$.fixtures[0]"}


def test_the_fixtures_answer_the_calls_in_a_real_sandbox() -> None:
    parsed = parse_draft(draft(FIXTURES))
    result = run_case(SandboxRunner(), parsed.code, parsed.tests[0], limits=CallLimits())
    assert result.passed, result


def test_a_call_no_fixture_answers_is_refused_with_the_fixture_to_add() -> None:
    parsed = parse_draft(draft(FIXTURES[:2]))  # no answer for version 2
    result = run_case(SandboxRunner(), parsed.code, parsed.tests[0], limits=CallLimits())
    assert not result.passed
    assert result.actual == {"temp": 4, "again": "capability_denied"}


class Callees:
    """Real callees stand-in: answers any call the fixtures leave, and counts them."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def handler(self, *, deadline: float, caller: str | None) -> Callees:
        return self

    def call(self, request: ToolRequest) -> CallResult:
        self.seen.append(request.name)
        return CallResult.failure(ErrorKind.NOT_ACTIVE, "from the registry")

    def close(self) -> None:
        pass


def test_calls_no_fixture_answers_go_to_the_runners_callees() -> None:
    callees = Callees()
    parsed = parse_draft(draft(FIXTURES[:2]))
    result = run_case(SandboxRunner(callees), parsed.code, parsed.tests[0], limits=CallLimits())
    assert result.passed, result
    assert callees.seen == ["weather"]  # only the version-2 call; the first had its fixture


def test_matching_is_on_canonical_arguments() -> None:
    [fixture] = parse_draft(draft([FIXTURES[1]])).tests[0].tool_fixtures
    session = TestTools([fixture]).handler(deadline=0, caller=None)
    answer = session.call(ToolRequest("weather", {"city": "Oslo"}))
    assert answer.value == {"temp": 4}
    other = session.call(ToolRequest("weather", {"city": "Rome"}))
    assert other.error is not None
    assert other.error.kind is ErrorKind.CAPABILITY_DENIED
    assert '"tool": "weather"' in other.error.message
