"""Which tools a draft's code calls, read statically (forge/checks/js_tools.py, forge/uses.py):
each form a name can be read from, the computed ones that need ``uses``, a shadowed ``tools``,
and a draft's tests refusing a call of a tool it does not declare."""

from __future__ import annotations

from typing import Any

import pytest

from toolfoundry.forge import forge_draft, parse_draft
from toolfoundry.forge.checks.js_tools import tool_calls
from toolfoundry.forge.sandbox_runner import SandboxRunner
from toolfoundry.forge.uses import draft_uses

CALLS = """
export async function handler({ text, which }) {
  const a = await tools.word_count({ text });
  const b = await tools["slug-ify"]({ text });
  const c = await tools.call("upper", { text }, { version: 2 });
  const d = await tools.github.create_issue({ title: text });
  const e = await tools.github["close_issue"]({ n: 1 });
  const { lower, shout: loud } = tools;
  const f = await tools?.maybe?.({});
  if (typeof tools === "undefined") return null;
  return [a, b, c, d, e, f, await lower({ text }), await loud({ text })];
}
"""


def draft(code: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": "caller",
        "description": "Calls tools.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        "code": code,
        "tests": [{"input": {"text": "a"}, "expected": 1}],
        **fields,
    }


def test_every_static_form_names_its_tool_in_order() -> None:
    calls = tool_calls(CALLS)
    assert calls.names == (
        "word_count",
        "slug-ify",
        "upper",
        "github.create_issue",
        "github.close_issue",
        "lower",
        "shout",
        "maybe",
    )
    assert calls.computed == ()
    assert calls.shadowed == ()
    site = calls.first_site("upper")
    assert site is not None
    assert (site.line, site.column) == (5, 19)
    assert site.form.startswith('tools.call("upper"')


@pytest.mark.parametrize(
    "expression",
    [
        "tools[which]({})",
        "tools.call(which, {})",
        "tools[`x${which}`]({})",
        "tools.github[which]({})",
        "(() => tools)()",
        "Object.keys(tools)",
        "globalThis.tools.x({})",
        "({ tools }).tools.x({})",
        "(0, tools.call)('x', {})",
    ],
)
def test_a_name_computed_as_the_code_runs_is_a_computed_site(expression: str) -> None:
    calls = tool_calls(f"export default async ({{ which }}) => {expression};")
    assert calls.computed, expression
    assert calls.computed[0].line == 1


@pytest.mark.parametrize(
    "declaration",
    [
        "const tools = [];",
        "function f(tools) { return tools; }",
        "const g = (tools) => tools;",
        "const h = tools => 1;",
        "let { tools } = {};",
        "const { a: tools } = {};",
        "try {} catch (tools) {}",
        "for (const tools of []) {}",
        "class tools {}",
        "function q(x = 1, ...tools) {}",
    ],
)
def test_a_binding_named_tools_shadows_the_global(declaration: str) -> None:
    code = f"{declaration}\nexport default () => 1;"
    assert tool_calls(code).shadowed, declaration
    report = forge_draft(draft(code))
    assert report.status == "rejected"
    assert [f.rule for f in report.findings if f.blocking] == ["tools_shadowed"]


def test_a_computed_call_without_uses_is_a_located_error() -> None:
    code = (
        "export default async ({ text }) => {\n"
        "  const n = 'word_' + 'count';\n"
        "  return tools[n]({ text });\n"
        "};"
    )
    report = forge_draft(draft(code))
    assert report.status == "rejected"
    [finding] = [f for f in report.findings if f.blocking]
    assert (finding.rule, finding.line, finding.column) == ("computed_tool_call", 3, 10)
    assert "uses" in finding.message
    assert "`tools[n]`" in finding.message


def test_uses_lists_the_computed_callees_after_the_named_ones() -> None:
    code = "export default async ({ n }) => [await tools.a({}), await tools[n]({})];"
    parsed = parse_draft(draft(code, uses=["b", "a", "gh.issue"]))
    assert [(u.name, u.found, u.path) for u in draft_uses(parsed)] == [
        ("a", "code", "$.code"),
        ("b", "uses", "$.uses[0]"),
        ("gh.issue", "uses", "$.uses[2]"),
    ]
    assert parsed.to_dict()["uses"] == ["b", "a", "gh.issue"]


@pytest.mark.parametrize(
    ("uses", "path", "message"),
    [
        ("word_count", "$.uses", "must be a list"),
        (["ok", "no spaces"], "$.uses[1]", "invalid tool name"),
        (["a", "a"], "$.uses[1]", "a second time"),
        (["a.b.c"], "$.uses[0]", "invalid tool name"),
        ([f"x{i}" for i in range(101)], "$.uses", "at most 100"),
    ],
)
def test_a_bad_uses_is_refused_with_its_path(uses: Any, path: str, message: str) -> None:
    report = forge_draft(draft("export default () => 1;", uses=uses))
    assert report.status == "rejected"
    assert any(p.path == path and message in p.message for p in report.problems), report.problems


def test_a_python_draft_has_no_uses() -> None:
    python = draft("def handler(args):\n    return 1\n", language="python", uses=["a"])
    report = forge_draft(python)
    assert [p.path for p in report.problems] == ["$.uses"]


def test_the_tests_refuse_a_call_of_a_tool_the_draft_does_not_declare() -> None:
    code = "export default async ({ n }) => tools[n]({});"
    fixtures = [
        {"tool": "a", "args": {}, "value": 1},
        {"tool": "b", "args": {}, "value": 2},
    ]
    tests = [
        {"name": "declared", "input": {"n": "a"}, "expected": 1, "fixtures": fixtures},
        {"name": "not declared", "input": {"n": "b"}, "expected": 2, "fixtures": fixtures},
    ]
    parameters = {"type": "object", "properties": {"n": {"type": "string"}}}
    parsed = parse_draft(draft(code, uses=["a"], tests=tests, parameters=parameters))
    runner = SandboxRunner(uses=frozenset(u.name for u in draft_uses(parsed)))
    report = forge_draft(parsed, runner=runner)
    assert report.status == "rejected"
    declared, undeclared = report.test_results
    assert declared.passed
    assert not undeclared.passed
    assert undeclared.error is not None
    assert undeclared.error.kind == "capability_denied"
    assert "'b', a tool it does not declare" in undeclared.error.message
    assert '"uses": ["b"]' in undeclared.error.message
