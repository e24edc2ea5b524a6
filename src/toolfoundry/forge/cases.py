"""Test cases of a draft: parsed, validated, immutable (their fixtures: forge/fixtures.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from toolfoundry.forge.draft_fields import (
    DraftError,
    canonical_json,
    key_path,
    validate_instance,
)
from toolfoundry.forge.draft_json import TEST_FIELDS, CaseJson
from toolfoundry.forge.fixtures import Fixture, parse_fixtures
from toolfoundry.forge.tool_fixtures import ToolFixture, parse_tool_fixtures
from toolfoundry.spec import ErrorKind, Problem
from toolfoundry.spec.tool import JsonSchema


@dataclass(frozen=True)
class TestCase:
    """One example case: an input and either the expected JSON value or an error substring.

    Attributes:
        name: the case's name (``#<index>`` when the draft gave none).
        input_json: the input arguments as canonical JSON (see :attr:`input`).
        expected_json: the expected value as JSON, or None for an error case.
        error: a substring the error message must contain, for an error case.
        error_kind: the error kind the call must fail with, when the case names one.
        fixtures: fetch fixtures for this case only (they win over the draft's).
        tool_fixtures: what this case's inner tool calls answer (forge/tool_fixtures.py).
    """

    __test__: ClassVar[bool] = False  # not a pytest class, despite the name

    name: str
    input_json: str
    expected_json: str | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    fixtures: tuple[Fixture, ...] = ()
    tool_fixtures: tuple[ToolFixture, ...] = ()

    @classmethod
    def of(
        cls,
        input: Mapping[str, Any],
        *,
        expected: Any = None,
        error: str | None = None,
        name: str = "#0",
        error_kind: ErrorKind | str | None = None,
        fixtures: tuple[Fixture, ...] = (),
    ) -> TestCase:
        """Build a case from Python values (``expected`` is ignored when ``error`` is given)."""
        return cls(
            name=name,
            input_json=canonical_json(dict(input)),
            expected_json=None if error is not None else canonical_json(expected),
            error=error,
            error_kind=ErrorKind(error_kind) if error_kind else None,
            fixtures=fixtures,
        )

    @property
    def input(self) -> dict[str, Any]:
        """The input arguments (a fresh copy)."""
        value: dict[str, Any] = json.loads(self.input_json)
        return value

    @property
    def expects_error(self) -> bool:
        """True when the case expects the call to fail."""
        return self.error is not None

    @property
    def expected(self) -> Any:
        """The expected value (a fresh copy); None for an error case."""
        return None if self.expected_json is None else json.loads(self.expected_json)

    def to_dict(self) -> CaseJson:
        """The draft form of this case."""
        out: CaseJson = {"name": self.name, "input": self.input}
        if self.error is not None:
            out["error"] = self.error
            if self.error_kind is not None:
                out["error_kind"] = self.error_kind
        else:
            out["expected"] = self.expected
        if self.fixtures or self.tool_fixtures:
            out["fixtures"] = [
                *(f.to_dict() for f in self.fixtures),
                *(f.to_dict() for f in self.tool_fixtures),
            ]
        return out


def parse_test_cases(data: object, path: str = "$.tests") -> tuple[TestCase, ...]:
    """Parse a list of test cases on their own (e.g. a stored version's tests).

    Raises:
        DraftError: with every problem found.
    """
    problems: list[Problem] = []
    tests = parse_cases(data, None, None, 10**6, problems, path=path)
    if problems:
        raise DraftError(problems)
    return tests


def parse_cases(
    value: object,
    parameters: JsonSchema | None,
    returns: JsonSchema | None,
    max_tests: int,
    problems: list[Problem],
    path: str = "$.tests",
) -> tuple[TestCase, ...]:
    if value is None or (isinstance(value, list) and not value):
        problems.append(
            Problem(path, 'at least one test is required: [{"input": {...}, "expected": ...}]')
        )
        return ()
    if not isinstance(value, list):
        problems.append(Problem(path, "must be a list of test cases"))
        return ()
    if len(value) > max_tests:
        problems.append(Problem(path, f"{len(value)} tests; the cap is {max_tests}"))
        return ()
    out: list[TestCase] = []
    seen: set[str] = set()
    for i, raw in enumerate(value):
        case = _test(raw, i, f"{path}[{i}]", parameters, returns, problems)
        if case is None:
            continue
        if case.name in seen:
            problems.append(Problem(f"{path}[{i}].name", f"duplicate test name {case.name!r}"))
        seen.add(case.name)
        out.append(case)
    return tuple(out)


def _test(
    raw: object,
    index: int,
    path: str,
    parameters: JsonSchema | None,
    returns: JsonSchema | None,
    problems: list[Problem],
) -> TestCase | None:
    if not isinstance(raw, Mapping):
        problems.append(Problem(path, "a test case must be an object with 'input' and 'expected'"))
        return None
    before = len(problems)
    for key in raw:
        if key not in TEST_FIELDS:
            problems.append(
                Problem(
                    key_path(path, str(key)), f"unknown field; a test has: {', '.join(TEST_FIELDS)}"
                )
            )
    name = raw.get("name", f"#{index}")
    if not isinstance(name, str) or not name.strip():
        problems.append(Problem(f"{path}.name", "must be a non-empty string"))
    args = raw.get("input")
    if not isinstance(args, Mapping):
        problems.append(Problem(f"{path}.input", "must be an object of arguments"))
    elif parameters is not None:
        validate_instance(args, parameters, f"{path}.input", problems)
    has_expected, error = "expected" in raw, raw.get("error")
    if has_expected == (error is not None):
        problems.append(Problem(path, "give exactly one of 'expected' (a JSON value) or 'error'"))
    if error is not None and (not isinstance(error, str) or not error):
        problems.append(
            Problem(f"{path}.error", "must be a non-empty substring of the error message")
        )
    kind = raw.get("error_kind")
    if kind is not None and (not isinstance(kind, str) or kind not in {k.value for k in ErrorKind}):
        problems.append(
            Problem(
                f"{path}.error_kind",
                f"unknown kind; known: {', '.join(k.value for k in ErrorKind)}",
            )
        )
    if has_expected and returns is not None:
        validate_instance(raw["expected"], returns, f"{path}.expected", problems)
    fixtures = parse_fixtures(raw.get("fixtures"), f"{path}.fixtures", problems, tools=True)
    tool_fixtures = parse_tool_fixtures(raw.get("fixtures"), f"{path}.fixtures", problems)
    if len(problems) > before:
        return None
    try:
        return TestCase(
            name=str(name),
            input_json=canonical_json(dict(args)),  # type: ignore[arg-type]
            expected_json=canonical_json(raw["expected"]) if has_expected else None,
            error=error,
            error_kind=ErrorKind(kind) if kind is not None else None,
            fixtures=fixtures,
            tool_fixtures=tool_fixtures,
        )
    except (TypeError, ValueError) as exc:
        problems.append(Problem(path, f"input and expected must be plain JSON values: {exc}"))
        return None
