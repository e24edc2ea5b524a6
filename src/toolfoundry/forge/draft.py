"""Drafts: the tool an agent proposes, parsed and checked before any of its code runs.

``parse_draft`` never stops at the first problem: a model fixes a draft faster when it sees
every problem at once, each located by a JSON path into the draft.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

from toolfoundry.forge.draft_fields import (
    JsonObject,
    check_capabilities,
    check_fixtures,
    check_schema,
    key_path,
    validate_instance,
)
from toolfoundry.forge.hosts import url_allowed
from toolfoundry.spec import Capabilities, ErrorKind, InvalidName, Problem, ToolSpec, validate_name

# The foundry's own meta-tools: a draft must never shadow them in a catalog.
RESERVED_NAMES = frozenset(
    {"create_tool", "search_tools", "tool_history", "rollback_tool", "run_js"}
)
# Prefixes kept for the foundry's future built-ins (compared case-insensitively).
RESERVED_PREFIXES = ("tf_", "toolfoundry")

DRAFT_FIELDS = (
    "name",
    "description",
    "parameters",
    "code",
    "language",
    "tests",
    "capabilities",
    "fixtures",
    "returns",
    "changes_tests",
    "author",
)
TEST_FIELDS = ("name", "input", "expected", "error", "error_kind", "fixtures")
EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


class Language(StrEnum):
    """The tier a tool runs in: QuickJS in Wasm, or Python under OS isolation."""

    JAVASCRIPT = "javascript"
    PYTHON = "python"


@dataclass(frozen=True)
class DraftLimits:
    """Size caps applied while parsing a draft (configurable, e.g. from toolfoundry.toml)."""

    max_code_bytes: int = 256 * 1024
    max_draft_bytes: int = 8 * 1024 * 1024
    max_tests: int = 200
    max_description_chars: int = 4096


class DraftError(ValueError):
    """A draft the forge refuses, carrying every problem found (never just the first)."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]) -> None:
        self.problems = tuple(problems)
        lines = "; ".join(f"{p.path}: {p.message}" for p in self.problems)
        super().__init__(f"invalid draft ({len(self.problems)} problem(s)): {lines}")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"problems": [{"path", "message"}, ...]}``."""
        return {"problems": [p.to_dict() for p in self.problems]}


@dataclass(frozen=True)
class Fixture:
    """A canned HTTP answer the host's fetch gives during tests instead of the network."""

    url: str
    method: str = "GET"
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """What a fixture answers: (method, url)."""
        return (self.method, self.url)

    def to_dict(self) -> dict[str, Any]:
        """The fixture dict form ``{"url", "method", "status", "headers", "body"}``."""
        return {
            "url": self.url,
            "method": self.method,
            "status": self.status,
            "headers": dict(self.headers),
            "body": self.body,
        }


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
    """

    __test__: ClassVar[bool] = False  # not a pytest class, despite the name

    name: str
    input_json: str
    expected_json: str | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    fixtures: tuple[Fixture, ...] = ()

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
            input_json=_dumps(dict(input)),
            expected_json=None if error is not None else _dumps(expected),
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

    def to_dict(self) -> dict[str, Any]:
        """The draft form of this case."""
        out: dict[str, Any] = {"name": self.name, "input": self.input}
        if self.error is not None:
            out["error"] = self.error
            if self.error_kind is not None:
                out["error_kind"] = self.error_kind.value
        else:
            out["expected"] = self.expected
        if self.fixtures:
            out["fixtures"] = [f.to_dict() for f in self.fixtures]
        return out


@dataclass(frozen=True)
class Draft:
    """A parsed, validated draft. Immutable: JSON parts are kept as canonical text.

    Build one with :func:`parse_draft`; ``to_dict()`` gives a form ``parse_draft`` accepts.
    """

    name: str
    description: str
    parameters_json: str
    code: str
    language: Language = Language.JAVASCRIPT
    tests: tuple[TestCase, ...] = ()
    capabilities: Capabilities = field(default_factory=Capabilities)
    fixtures: tuple[Fixture, ...] = ()
    returns_json: str | None = None
    changes_tests: tuple[str | int, ...] = ()
    author: str | None = None

    @property
    def parameters(self) -> dict[str, Any]:
        """The parameters JSON Schema (a fresh copy)."""
        value: dict[str, Any] = json.loads(self.parameters_json)
        return value

    @property
    def returns(self) -> dict[str, Any] | None:
        """The return-value JSON Schema, when the draft gives one."""
        return None if self.returns_json is None else json.loads(self.returns_json)

    def spec(self, version: int | None = None) -> ToolSpec:
        """The ToolSpec a version made from this draft has."""
        return ToolSpec(
            self.name,
            self.description,
            self.parameters,
            capabilities=self.capabilities,
            version=version,
            returns=self.returns,
        )

    def to_dict(self) -> dict[str, Any]:
        """The draft JSON form (round-trips through :func:`parse_draft`)."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "code": self.code,
            "language": self.language.value,
            "tests": [t.to_dict() for t in self.tests],
            "capabilities": self.capabilities.to_dict(),
            "fixtures": [f.to_dict() for f in self.fixtures],
        }
        if self.returns_json is not None:
            out["returns"] = self.returns
        if self.changes_tests:
            out["changes_tests"] = list(self.changes_tests)
        if self.author is not None:
            out["author"] = self.author
        return out


def parse_draft(
    data: Mapping[str, Any] | str | bytes, *, limits: DraftLimits = DraftLimits()
) -> Draft:
    """Parse and validate a draft from a mapping or JSON text.

    Args:
        data: the draft as a mapping, JSON text, or UTF-8 JSON bytes.
        limits: size caps.

    Returns:
        The immutable :class:`Draft`.

    Raises:
        DraftError: carrying every problem found, each as ``Problem(path, message)``.
    """
    try:
        return _parse(data, limits)
    except RecursionError:
        # Deeply nested JSON exhausts the parser's stack; refuse it like any other bad input.
        raise DraftError([Problem("$", "the draft nests too deeply")]) from None


def _parse(data: Mapping[str, Any] | str | bytes, limits: DraftLimits) -> Draft:
    problems: list[Problem] = []
    obj = _load(data, limits, problems)
    if obj is None:
        raise DraftError(problems)
    for key in obj:
        if key not in DRAFT_FIELDS:
            problems.append(
                Problem(
                    key_path("$", str(key)),
                    f"unknown field; a draft has: {', '.join(DRAFT_FIELDS)}",
                )
            )
    name = _name(obj.get("name"), problems)
    description = _description(obj.get("description"), limits, problems)
    parameters = check_schema(
        obj.get("parameters", EMPTY_PARAMETERS), "$.parameters", problems, True
    )
    returns = None
    if obj.get("returns") is not None:
        returns = check_schema(obj["returns"], "$.returns", problems, False)
    code = _code(obj.get("code"), limits, problems)
    language = _language(obj.get("language", "javascript"), problems)
    capabilities = check_capabilities(obj.get("capabilities"), problems)
    fixtures = tuple(
        Fixture(**f) for f in check_fixtures(obj.get("fixtures"), "$.fixtures", problems)
    )
    tests = _tests(obj.get("tests"), parameters, returns, limits, problems)
    changes = _changes(obj.get("changes_tests"), problems)
    author = obj.get("author")
    if author is not None and not isinstance(author, str):
        problems.append(Problem("$.author", "must be a string"))
    if capabilities is not None:
        _check_fixture_hosts(fixtures, tests, capabilities, problems)
    if problems:
        raise DraftError(problems)
    if not (name and description and code and language and capabilities):
        raise DraftError([Problem("$", "draft could not be parsed")])  # unreachable: guards mypy
    assert parameters is not None
    return Draft(
        name=name,
        description=description,
        parameters_json=_dumps(parameters),
        code=code,
        language=language,
        tests=tests,
        capabilities=capabilities,
        fixtures=fixtures,
        returns_json=None if returns is None else _dumps(returns),
        changes_tests=changes,
        author=author,
    )


def parse_test_cases(data: object, path: str = "$.tests") -> tuple[TestCase, ...]:
    """Parse a list of test cases on their own (e.g. a stored version's tests).

    Raises:
        DraftError: with every problem found.
    """
    problems: list[Problem] = []
    tests = _tests(data, None, None, DraftLimits(max_tests=10**6), problems, path=path)
    if problems:
        raise DraftError(problems)
    return tests


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _load(
    data: Mapping[str, Any] | str | bytes, limits: DraftLimits, problems: list[Problem]
) -> Mapping[str, Any] | None:
    if isinstance(data, bytes | bytearray):
        if len(data) > limits.max_draft_bytes:
            problems.append(
                Problem("$", f"draft is {len(data)} bytes; the cap is {limits.max_draft_bytes}")
            )
            return None
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(
                Problem("$", f"draft is not valid UTF-8 (byte {exc.start}): {exc.reason}")
            )
            return None
    if isinstance(data, str):
        if len(data.encode("utf-8", "surrogatepass")) > limits.max_draft_bytes:
            problems.append(
                Problem("$", f"draft is larger than the cap of {limits.max_draft_bytes} bytes")
            )
            return None
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            problems.append(
                Problem(
                    "$",
                    f"draft is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                )
            )
            return None
    if not isinstance(data, Mapping):
        problems.append(Problem("$", f"a draft must be a JSON object, not {type(data).__name__}"))
        return None
    return data


def _name(value: object, problems: list[Problem]) -> str | None:
    if value is None:
        problems.append(Problem("$.name", "missing: give the tool a name such as 'slugify'"))
        return None
    try:
        name = validate_name(value)
    except InvalidName as exc:
        problems.append(Problem("$.name", str(exc)))
        return None
    lowered = name.lower()
    if lowered in RESERVED_NAMES:
        problems.append(Problem("$.name", f"{name!r} is a foundry meta-tool; choose another name"))
    elif lowered.startswith(RESERVED_PREFIXES):
        problems.append(
            Problem("$.name", f"names starting with {' or '.join(RESERVED_PREFIXES)} are reserved")
        )
    return name


def _description(value: object, limits: DraftLimits, problems: list[Problem]) -> str | None:
    if not isinstance(value, str) or not value.strip():
        what = "missing" if value is None else "must be a non-empty string"
        problems.append(
            Problem("$.description", f"{what}: say what the tool does and when to use it")
        )
        return None
    if len(value) > limits.max_description_chars:
        problems.append(
            Problem(
                "$.description",
                f"{len(value)} characters; keep it under {limits.max_description_chars}",
            )
        )
    return value.strip()


def _code(value: object, limits: DraftLimits, problems: list[Problem]) -> str | None:
    if not isinstance(value, str) or not value.strip():
        what = "missing" if value is None else "must be a non-empty string"
        problems.append(Problem("$.code", f"{what}: an ES module exporting handler(args)"))
        return None
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > limits.max_code_bytes:
        problems.append(
            Problem("$.code", f"code is {size} bytes; the cap is {limits.max_code_bytes} bytes")
        )
    return value


def _language(value: object, problems: list[Problem]) -> Language | None:
    if isinstance(value, str) and value in {x.value for x in Language}:
        return Language(value)
    known = ", ".join(repr(x.value) for x in Language)
    problems.append(Problem("$.language", f"unknown language {value!r}; known: {known}"))
    return None


def _tests(
    value: object,
    parameters: JsonObject | None,
    returns: JsonObject | None,
    limits: DraftLimits,
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
    if len(value) > limits.max_tests:
        problems.append(Problem(path, f"{len(value)} tests; the cap is {limits.max_tests}"))
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
    parameters: JsonObject | None,
    returns: JsonObject | None,
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
    if kind is not None and kind not in {k.value for k in ErrorKind}:
        problems.append(
            Problem(
                f"{path}.error_kind",
                f"unknown kind; known: {', '.join(k.value for k in ErrorKind)}",
            )
        )
    if has_expected and returns is not None:
        validate_instance(raw["expected"], returns, f"{path}.expected", problems)
    fixtures = check_fixtures(raw.get("fixtures"), f"{path}.fixtures", problems)
    if len(problems) > before:
        return None
    try:
        return TestCase(
            name=str(name),
            input_json=_dumps(dict(args)),  # type: ignore[arg-type]
            expected_json=_dumps(raw["expected"]) if has_expected else None,
            error=error,
            error_kind=ErrorKind(kind) if kind is not None else None,
            fixtures=tuple(Fixture(**f) for f in fixtures),
        )
    except (TypeError, ValueError) as exc:
        problems.append(Problem(path, f"input and expected must be plain JSON values: {exc}"))
        return None


def _changes(value: object, problems: list[Problem]) -> tuple[str | int, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(Problem("$.changes_tests", "must be a list of test names or indexes"))
        return ()
    out: list[str | int] = []
    for i, item in enumerate(value):
        ok_int = isinstance(item, int) and not isinstance(item, bool) and item >= 0
        if not ok_int and not (isinstance(item, str) and item):
            problems.append(
                Problem(f"$.changes_tests[{i}]", "must be a test name or a 0-based test index")
            )
        else:
            out.append(item)
    return tuple(out)


def _check_fixture_hosts(
    fixtures: tuple[Fixture, ...],
    tests: tuple[TestCase, ...],
    capabilities: Capabilities,
    problems: list[Problem],
) -> None:
    located = [(f"$.fixtures[{i}].url", f) for i, f in enumerate(fixtures)]
    for t, case in enumerate(tests):
        located += [(f"$.tests[{t}].fixtures[{i}].url", f) for i, f in enumerate(case.fixtures)]
    for path, fixture in located:
        if not url_allowed(fixture.url, capabilities.network):
            problems.append(
                Problem(
                    path,
                    "this URL's host is not in capabilities.network, so the tool could never "
                    "fetch it outside tests; add the host there or drop the fixture",
                )
            )
