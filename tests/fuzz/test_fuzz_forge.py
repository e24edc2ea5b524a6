"""Fuzz the forge's entry: structured-random drafts into ``parse_draft`` and ``forge_draft``.

The static check is a second fence; the property that matters is the sandbox's. So every
hostile module is also run with ``run_js``: the host carries on, the error kind is a known one,
nothing outside the sandbox is reached (the program's own markers and a loopback canary that
fetch is pointed at both say so), and a draft the forge made active is one whose code the
sandbox was just seen to contain.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from toolfoundry.forge import DraftError, forge_draft, parse_draft
from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.fetch import FetchPolicy
from toolfoundry.sandbox.js.modules import default_catalog
from toolfoundry.spec import ErrorKind, Problem

from .hostile_json import DEEP, HOSTILE_LITERALS, HUGE_NUMBERS, LONE_SURROGATES, hostile_text
from .js_grammar import escapes_in, fuzz_settings, hostile_module, quoted, soup

BUNDLED = set(default_catalog().names())
KINDS = {kind.value for kind in ErrorKind}

LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | hostile_text()
    | st.sampled_from(["", "\x00", "\ud800", "a" * 5000, "$ref", "#/definitions/x", "string"])
    | HUGE_NUMBERS
    | DEEP
)
JSON = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text(6), inner, max_size=4),
    max_leaves=16,
)
SCHEMA_TYPES = st.sampled_from(
    ["object", "string", "integer", "number", "array", "boolean", "null", "any", "", 7]
)


@st.composite
def schemas(draw: st.DrawFn, depth: int = 2) -> Any:
    """Schema-shaped JSON: mostly plausible, with wrong types and odd keywords mixed in."""
    if depth == 0 or draw(st.integers(0, 5)) == 0:
        return draw(st.one_of(JSON, st.fixed_dictionaries({"type": SCHEMA_TYPES})))
    props = draw(st.dictionaries(hostile_text(8), schemas(depth - 1), max_size=3))
    out: dict[str, Any] = {"type": draw(SCHEMA_TYPES), "properties": props}
    extras = {
        "required": st.lists(hostile_text(8), max_size=3) | JSON,
        "description": hostile_text(),
        "additionalProperties": st.booleans() | JSON,
        "$ref": st.sampled_from(["#", "#/properties/x", "http://127.0.0.1/s.json", "#/$defs/a"]),
        "pattern": st.sampled_from(["(a+)+$", "[", "^x$", "\\p{L}"]),
        "enum": st.lists(JSON, max_size=3),
        "items": schemas(depth - 1),
    }
    for key, strategy in extras.items():
        if draw(st.integers(0, 3)) == 0:
            out[key] = draw(strategy)
    return out


def code_strategy() -> st.SearchStrategy[str]:
    return st.one_of(
        hostile_module(),
        soup(),
        st.just("export function handler(args) { return args; }"),
        st.text(max_size=60),
        LONE_SURROGATES.map(lambda s: f"export default 1 // {s}"),
    )


@st.composite
def drafts(draw: st.DrawFn) -> dict[str, Any]:
    """Valid-ish drafts: each field is usually of the right shape, sometimes not."""
    draft: dict[str, Any] = {
        "name": draw(
            st.sampled_from(["fuzzed", "Fuzz-Tool", "run_js", "tf_x", "a" * 80, "", "é", "x y"])
            | hostile_text(10)
        ),
        "description": draw(st.sampled_from(["Fuzzed tool.", "", " "]) | hostile_text(20)),
        "parameters": draw(schemas()),
        "code": draw(code_strategy()),
        "tests": draw(
            st.lists(
                st.fixed_dictionaries(
                    {"input": st.just({"canary": "http://127.0.0.1:9"}) | JSON},
                    optional={
                        "expected": JSON,
                        "error": hostile_text(8),
                        "name": JSON | hostile_text(),
                    },
                ),
                max_size=2,
            )
            | JSON
        ),
        "capabilities": draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "network": st.lists(
                        st.sampled_from(["api.example.com", "127.0.0.1", "*", "", "*.x.org"]),
                        max_size=2,
                    )
                    | JSON,
                    "storage": st.booleans() | JSON,
                },
            )
            | JSON
        ),
    }
    for key in ("language", "fixtures", "returns", "changes_tests", "author", "junk"):
        if draw(st.integers(0, 4)) == 0:
            draft[key] = draw(JSON | hostile_text() | st.sampled_from(["javascript", "python"]))
    for key in list(draft):
        if draw(st.integers(0, 9)) == 0:
            del draft[key]
    return draft


@fuzz_settings(200)
@given(draft=drafts(), as_text=st.booleans(), literal=st.none() | st.sampled_from(HOSTILE_LITERALS))
def test_parse_draft_raises_only_located_draft_errors(
    draft: dict[str, Any], as_text: bool, literal: str | None
) -> None:
    data: Any = draft
    if as_text:
        data = json.dumps(draft, allow_nan=True)
        if literal is not None and data.endswith("}"):  # what only JSON text can carry
            data = data[:-1] + (", " if len(data) > 2 else "") + f'"description": {literal}}}'

    problems: tuple[Problem, ...] = ()
    try:
        parsed = parse_draft(data)
    except DraftError as exc:
        problems = exc.problems
    if problems:
        for problem in problems:
            assert problem.path.startswith("$"), problem
            assert problem.message
        return
    assert parsed.to_dict()["name"] == parsed.name
    assert parse_draft(parsed.to_dict()) == parsed  # a parsed draft round-trips


@fuzz_settings(120)
@given(draft=drafts())
def test_forge_draft_never_raises_and_locates_every_finding(draft: dict[str, Any]) -> None:
    report = forge_draft(draft)
    assert report.status.value in ("active", "pending_approval", "rejected")
    for finding in report.findings:
        assert finding.rule
        assert finding.message
        assert finding.path is not None or finding.line is not None, finding
        if finding.path is not None:
            assert finding.path.startswith("$"), finding
    json.dumps(report.to_dict())


@fuzz_settings(300)
@given(code=hostile_module())
def test_the_sandbox_contains_what_the_static_check_may_miss(code: str, canary: Any) -> None:
    args = {"canary": canary.url}
    # The allowlist names the canary's host and port, with plain http: only the address check
    # (loopback is refused unless allow_private says otherwise) stands between it and the script.
    hosts = (f"127.0.0.1:{canary.port}", f"localhost:{canary.port}")
    policy = SandboxPolicy(timeout_s=2.0, fetch=FetchPolicy(allow=hosts, allow_http=hosts))
    hits_before = len(canary.hits)
    ran = run_js(code, args, policy)
    assert ran.ok or (ran.error is not None and ran.error.kind.value in KINDS), ran
    reached = escapes_in(ran.value, BUNDLED)
    assert reached == [], f"escaped the sandbox: {reached}\n{code}"
    assert canary.hits[hits_before:] == []

    draft = {
        "name": "fuzzed",
        "description": "A fuzzed tool.",
        "parameters": {"type": "object", "properties": {"canary": {"type": "string"}}},
        "code": code,
        "tests": [{"input": args, "expected": {"reached": []}}],
    }
    report = forge_draft(draft)
    event(f"forge: {report.status.value} {','.join(report.blockers)}")
    if report.status.value == "active":
        # Active means its test passed in the forge's sandbox: the code reached nothing there.
        assert ran.ok, (ran.error, code)
    assert canary.hits[hits_before:] == []
    host_survives()


def test_the_oracle_sees_an_escape_when_loopback_is_granted(canary: Any) -> None:
    """The control: with loopback allowed, the same fetch snippet reaches the canary and the
    oracle reports it, so the fuzz target above can fail."""
    code = (
        "const reached = [];\nconst reach = (what) => reached.push(what);\n"
        "export async function handler(args) {\n"
        "  try { const r = await fetch(args.canary + '/x'); reach('fetch:' + r.status); } "
        "catch (e) {}\n  return { reached };\n}\n"
    )
    granted = FetchPolicy(
        allow=(f"127.0.0.1:{canary.port}",), allow_http=("127.0.0.1",), allow_private=("127.0.0.1",)
    )
    before = len(canary.hits)
    ran = run_js(code, {"canary": canary.url}, SandboxPolicy(fetch=granted))
    assert escapes_in(ran.value, BUNDLED) == ["fetch:200"]
    assert canary.hits[before:] == ["GET /x"]


def host_survives() -> None:
    probe = run_js(f"export function handler(a) {{ return a.x + {quoted('!')}; }}", {"x": "ok"})
    assert probe.ok, probe
    assert probe.value == "ok!"
