"""Drafts: the tool an agent proposes, parsed and checked before any of its code runs.

``parse_draft`` never stops at the first problem: a model fixes a draft faster when it sees
every problem at once, each located by a JSON path into the draft.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from toolfoundry.base.json_gate import (
    InvalidJson,
    JsonLimits,
    JsonProblem,
    check,
    decode,
)
from toolfoundry.forge.cases import TestCase, parse_cases
from toolfoundry.forge.draft_fields import (
    DraftError,
    canonical_json,
    check_capabilities,
    check_schema,
    key_path,
)
from toolfoundry.forge.draft_json import DRAFT_DEFAULTS, DRAFT_FIELDS, DraftJson
from toolfoundry.forge.draft_json import Language as Language  # re-exported: drafts speak it
from toolfoundry.forge.fixtures import (
    Fixture,
    check_fixture_hosts,
    located_fixtures,
    parse_fixtures,
)
from toolfoundry.spec import (
    Capabilities,
    InvalidName,
    Problem,
    ToolSpec,
    validate_name,
)
from toolfoundry.spec.gate import DistinctFrom, Retirement, TestChange
from toolfoundry.spec.limits import DraftLimits as DraftLimits  # re-exported: drafts use it
from toolfoundry.spec.names import META_TOOL_NAMES, looks_like, name_keys, validate_spec_name
from toolfoundry.spec.tool import JsonSchema

# The foundry's own meta-tools: a draft must never shadow them in a catalog.
RESERVED_NAMES = frozenset(META_TOOL_NAMES)
# Prefixes kept for the foundry's future built-ins (compared case-insensitively).
RESERVED_PREFIXES = ("tf_", "toolfoundry")


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
    # what it retires, as the draft named it: a name, an index, or a name with its reason
    changes_tests: tuple[TestChange, ...] = ()
    author: str | None = None
    # the active tool it says it differs from, though that tool passes its tests
    distinct_from: DistinctFrom | None = None
    # the tools its code calls by a computed name (the named ones are read from the code)
    uses: tuple[str, ...] = ()

    @property
    def parameters(self) -> JsonSchema:
        """The parameters JSON Schema (a fresh copy)."""
        value: JsonSchema = json.loads(self.parameters_json)
        return value

    @property
    def returns(self) -> JsonSchema | None:
        """The return-value JSON Schema, when the draft gives one."""
        return None if self.returns_json is None else json.loads(self.returns_json)

    def located_fixtures(self) -> list[tuple[str, Fixture]]:
        """Every fixture with the JSON path of its URL (``$.fixtures[0].url``,
        ``$.tests[2].fixtures[0].url``), the draft's own first."""
        return located_fixtures(self.fixtures, (case.fixtures for case in self.tests))

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

    def to_dict(self) -> DraftJson:
        """The draft JSON form (round-trips through :func:`parse_draft`)."""
        out: DraftJson = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "code": self.code,
            "language": self.language,
            "tests": [t.to_dict() for t in self.tests],
            "capabilities": self.capabilities.to_dict(),
            "fixtures": [f.to_dict() for f in self.fixtures],
        }
        if self.returns_json is not None:
            out["returns"] = self.returns
        if self.changes_tests:
            out["changes_tests"] = [
                {"test": c.test, "reason": c.reason} if isinstance(c, Retirement) else c
                for c in self.changes_tests
            ]
        if self.author is not None:
            out["author"] = self.author
        if self.distinct_from is not None:
            out["distinct_from"] = {
                "name": self.distinct_from.name,
                "why": self.distinct_from.why,
            }
        if self.uses:
            out["uses"] = list(self.uses)
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
    given = {**DRAFT_DEFAULTS, **obj}  # a field left out takes its declared default
    name = _name(given.get("name"), problems)
    description = _description(given.get("description"), limits, problems)
    parameters = check_schema(given["parameters"], "$.parameters", problems, True)
    returns = None
    if given["returns"] is not None:
        returns = check_schema(given["returns"], "$.returns", problems, False)
    code = _code(given.get("code"), limits, problems)
    if given["from_run"] is not None:  # the foundry makes a run into code and a test first
        problems.append(
            Problem("$.from_run", "a run becomes a draft's code in the foundry (create_tool)")
        )
    if given["patch"] is not None or given["base_version"] is not None:  # likewise a patch
        problems.append(
            Problem("$.patch", "a patch becomes a draft's code in the foundry (create_tool)")
        )
    language = _language(given["language"], problems)
    capabilities = check_capabilities(given["capabilities"], problems)
    fixtures = parse_fixtures(given["fixtures"], "$.fixtures", problems)
    tests = parse_cases(given.get("tests"), parameters, returns, limits.max_tests, problems)
    changes = _changes(given["changes_tests"], problems)
    author = given["author"]
    if author is not None and not isinstance(author, str):
        problems.append(Problem("$.author", "must be a string"))
    distinct = _distinct_from(given["distinct_from"], problems)
    uses = _uses(given["uses"], language, problems)
    if capabilities is not None:
        located = located_fixtures(fixtures, (case.fixtures for case in tests))
        check_fixture_hosts(located, capabilities, problems)
    if problems:
        raise DraftError(problems)
    if not (name and description and code and language and capabilities):
        raise DraftError([Problem("$", "draft could not be parsed")])  # unreachable: guards mypy
    assert parameters is not None
    return Draft(
        name=name,
        description=description,
        parameters_json=canonical_json(parameters),
        code=code,
        language=language,
        tests=tests,
        capabilities=capabilities,
        fixtures=fixtures,
        returns_json=None if returns is None else canonical_json(returns),
        changes_tests=changes,
        author=author,
        distinct_from=distinct,
        uses=uses,
    )


# How long a draft's reason for differing from its behavioural twin may be.
DISTINCT_WHY_CHARS = 2000


def _distinct_from(value: Any, problems: list[Problem]) -> DistinctFrom | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or set(value) != {"name", "why"}:
        problems.append(Problem("$.distinct_from", 'must be {"name": "...", "why": "..."}'))
        return None
    name, why = value["name"], value["why"]
    if not isinstance(name, str) or not name:
        problems.append(Problem("$.distinct_from.name", "must be a tool's name"))
    if not isinstance(why, str) or not why.strip() or len(why) > DISTINCT_WHY_CHARS:
        problems.append(
            Problem(
                "$.distinct_from.why",
                f"must say how the tool differs (1 to {DISTINCT_WHY_CHARS} characters)",
            )
        )
    if not (isinstance(name, str) and isinstance(why, str)):
        return None
    return DistinctFrom(name, why.strip())


# How many tools a draft's ``uses`` may name.
MAX_USES = 100


def _uses(value: Any, language: Language | None, problems: list[Problem]) -> tuple[str, ...]:
    """The tools the code calls by computed names: registry names or ``UPSTREAM.TOOL``,
    each once."""
    if value is None:
        return ()
    if not isinstance(value, list) or len(value) > MAX_USES:
        problems.append(Problem("$.uses", f"must be a list of at most {MAX_USES} tool names"))
        return ()
    if value and language is Language.PYTHON:
        problems.append(Problem("$.uses", "a Python tool has no `tools`: it calls no tool"))
        return ()
    out: list[str] = []
    for i, item in enumerate(value):
        try:
            name = validate_spec_name(item)
        except InvalidName as exc:
            problems.append(Problem(f"$.uses[{i}]", str(exc)))
            continue
        if name in out:
            problems.append(Problem(f"$.uses[{i}]", f"names {name!r} a second time"))
            continue
        out.append(name)
    return tuple(out)


def _load(
    data: Mapping[str, Any] | str | bytes, limits: DraftLimits, problems: list[Problem]
) -> Mapping[str, Any] | None:
    """The draft as a mapping, through the JSON gate (text decoded, a mapping checked): depth,
    finite numbers, valid Unicode in every name, description, code, test and schema."""
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
    gate = JsonLimits(max_bytes=limits.max_draft_bytes)
    try:
        if isinstance(data, str):
            if len(data.encode("utf-8", "surrogatepass")) > limits.max_draft_bytes:
                problems.append(
                    Problem("$", f"draft is larger than the cap of {limits.max_draft_bytes} bytes")
                )
                return None
            data = decode(data, gate)
        else:
            check(data, gate)
    except InvalidJson as exc:
        problems.extend(_gate_problem(p) for p in exc.problems)
        return None
    if not isinstance(data, Mapping):
        problems.append(Problem("$", f"a draft must be a JSON object, not {type(data).__name__}"))
        return None
    return data


def _gate_problem(problem: JsonProblem) -> Problem:
    if problem.reason == "too_deep":  # one problem for the draft: its path says little
        return Problem("$", f"the draft nests too deeply ({problem.path} {problem.message})")
    if problem.reason == "syntax":
        message = problem.message.replace("not valid JSON", "draft is not valid JSON")
        return Problem(problem.path, message)
    return problem.problem()


def _name(value: object, problems: list[Problem]) -> str | None:
    if value is None:
        problems.append(Problem("$.name", "missing: give the tool a name such as 'slugify'"))
        return None
    try:
        name = validate_name(value)
    except InvalidName as exc:
        problems.append(Problem("$.name", str(exc)))
        return None
    # on the normalised form: Create-Tool or create_tooI would pass for the meta-tool
    meta = looks_like(name, META_TOOL_NAMES) if name not in RESERVED_NAMES else name
    if meta is not None:
        what = "is" if meta == name else f"looks like the meta-tool {meta!r}, so it counts as"
        problems.append(
            Problem("$.name", f"{name!r} {what} a foundry meta-tool; choose another name")
        )
    elif any(key.startswith(RESERVED_PREFIXES) for key in name_keys(name)):
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
        problems.append(
            Problem(
                "$.code",
                f"{what}: an ES module exporting handler(args) (or from_run: a run_js "
                "run_id; or base_version and patch: a unified diff of that version's code)",
            )
        )
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


def _changes(value: object, problems: list[Problem]) -> tuple[TestChange, ...]:
    """The tests a draft retires, and why: a name (``"T1"``: that name in every earlier
    version; ``"v3:T1"``: version 3's), a 0-based index into the current version's own tests,
    or ``{"test": name, "reason": "..."}`` (the reason is required in that form)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(Problem("$.changes_tests", "must be a list of test names or indexes"))
        return ()
    out: list[TestChange] = []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            test, reason = item.get("test"), item.get("reason")
            unknown = sorted(set(item) - {"test", "reason"})
            if unknown:
                problems.append(
                    Problem(f"$.changes_tests[{i}]", f"unknown key(s) {', '.join(unknown)}")
                )
            elif not (isinstance(test, str) and test):
                problems.append(Problem(f"$.changes_tests[{i}].test", "must be a test name"))
            elif not (isinstance(reason, str) and reason.strip()):
                problems.append(
                    Problem(
                        f"$.changes_tests[{i}].reason",
                        "say why the test is retired (a non-empty string)",
                    )
                )
            else:
                out.append(Retirement(test, reason.strip()))
            continue
        ok_int = isinstance(item, int) and not isinstance(item, bool) and item >= 0
        if not ok_int and not (isinstance(item, str) and item):
            problems.append(
                Problem(f"$.changes_tests[{i}]", "must be a test name or a 0-based test index")
            )
        else:
            out.append(item)
    return tuple(out)
