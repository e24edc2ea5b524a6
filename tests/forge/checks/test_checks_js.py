"""Static check of JavaScript: every forbidden construct, obfuscated forms, and clean code."""

from __future__ import annotations

import pytest

from toolfoundry.forge import Severity, bundled_libraries, check_javascript
from toolfoundry.spec import Capabilities, StorageScope


def errors(code: str, **kwargs: object) -> list[str]:
    return [f.rule for f in check_javascript(code, **kwargs) if f.severity is Severity.ERROR]  # type: ignore[arg-type]


def warnings(code: str, **kwargs: object) -> list[str]:
    return [f.rule for f in check_javascript(code, **kwargs) if f.severity is Severity.WARNING]  # type: ignore[arg-type]


def tool(body: str) -> str:
    return f"export async function handler(args) {{\n  {body}\n}}\n"


GOOD_TOOLS = [
    "export function handler({ text }) { return text.toLowerCase().replace(/[^a-z0-9]+/g, '-') }",
    "export const handler = async ({ n }) => {\n let s = 0; for (let i = 0; i < n; i++) s += i;\n"
    " return s }",
    "import Decimal from 'decimal.js';\n"
    "export function handler({ a, b }) { return new Decimal(a).plus(b).toString() }",
    "import yaml from \"js-yaml\";\nimport { load } from 'js-yaml';\n"
    "export default yaml.dump(load('a: 1'))",
    "function h(args) { return args }\nexport { h as handler }",
    "export async function handler() { const m = await import('dayjs'); return typeof m }",
    "class Stack { constructor() { this.items = [] }\n"
    " push(x) { this.items.push(x); return this } }\n"
    "export function handler({ xs }) { const s = new Stack(); xs.forEach(x => s.push(x)); "
    "return { size: s.items.length, kind: s.constructor.name } }",
    "export function handler({ o }) { return Object.keys(o).map(k => `${k}=${o[k]}`).join('&') }",
    "export function handler() { while (true) { if (Date.now() > 0) break } return 1 }",
    "export function handler() { const o = { __proto__: null, a: 1 }; return o.a }",
    "export function handler({ x }) {\n"
    "  if (x.constructor === Object && typeof x.constructor === 'function') return 'object';\n"
    "  return [x.constructor.name, x instanceof Array]\n}",
    "class P { clone() { return new this.constructor() } }\nexport default new P().clone()",
]


@pytest.mark.parametrize("code", GOOD_TOOLS)
def test_good_code_has_no_errors(code: str) -> None:
    assert errors(code) == []


FORBIDDEN = [
    # eval, in every spelling
    (tool("return eval('1+1')"), "no_eval"),
    (tool("return (0, eval)('1')"), "no_eval"),
    (tool("const e = eval; return e('1')"), "no_eval"),
    (tool("return globalThis.eval('1')"), "no_eval"),
    (tool("return window['eval']('1')"), "no_eval"),
    (tool("return self[`eval`]('1')"), "no_eval"),
    (tool("return globalThis['\\x65val']('1')"), "no_eval"),
    (tool("return globalThis['\\u{65}val']('1')"), "no_eval"),
    (tool("return globalThis?.eval('1')"), "no_eval"),
    # escapes in identifiers name the same binding (found by tests/fuzz)
    (tool("return \\u0065val('1')"), "no_eval"),
    (tool("return e\\u{76}al('1')"), "no_eval"),
    (tool("return \\u0046unction('return 1')()"), "no_function_constructor"),
    (tool("return globalThis.\\u0065val('1')"), "no_eval"),
    (tool("const { eval: e } = globalThis; return e('1')"), "no_eval"),
    (tool("return { eval }"), "no_eval"),
    (tool("setTimeout('doEvil()', 1)"), "no_eval"),
    # computed access to the global object reaches anything
    (tool("return globalThis['ev' + 'al']('1')"), "computed_global_access"),
    (tool("const k = args.k; return window[k]"), "computed_global_access"),
    (tool("return this[args.name]"), "computed_global_access"),
    (tool("return Object.getOwnPropertyNames(globalThis)"), "global_reflection"),
    (tool("return Reflect.get(self, args.k)"), "global_reflection"),
    # the Function constructor and its aliases
    (tool("return Function('return 1')()"), "no_function_constructor"),
    (tool("return new Function('a', 'return a')(1)"), "no_function_constructor"),
    (tool("return globalThis.Function('return 1')()"), "no_function_constructor"),
    (tool("return handler.constructor.constructor('return 1')()"), "no_function_constructor"),
    (tool("return ''['constructor']['constructor']('return 1')()"), "no_function_constructor"),
    (tool("return (async function(){}).constructor('return 1')"), "no_function_constructor"),
    (tool("return (function*(){}).constructor('yield 1')"), "no_function_constructor"),
    (tool("return (async function*(){}).constructor('yield 1')"), "no_function_constructor"),
    (tool("return (() => 1).constructor('return 2')"), "no_function_constructor"),
    (
        tool("const G = Object.getPrototypeOf(async () => {}).constructor; return G"),
        "no_function_constructor",
    ),
    (tool("const f = () => 1; return new f.constructor('return 1')"), "no_function_constructor"),
    (tool("const f = () => 1; return f.constructor('return 1')"), "no_function_constructor"),
    (tool("const f = async () => 1; const C = f.constructor; return C"), "no_function_constructor"),
    (tool("const f = async () => 1; return [f.constructor][0]('x')"), "no_function_constructor"),
    (tool("const f = async () => 1; return (f.constructor)('x')"), "no_function_constructor"),
    (tool("const f = () => 1; return new (f.constructor)('x')"), "no_function_constructor"),
    (tool("return Reflect.get(args.f, 'constructor')"), "no_function_constructor"),
    # imports
    ("import fs from 'fs';\nexport function handler() { return 1 }", "forbidden_import"),
    (
        "import { exec } from 'node:child_process';\nexport const handler = () => 1",
        "forbidden_import",
    ),
    ("import x from './local.js';\nexport const handler = () => x", "forbidden_import"),
    (
        "import x from 'https://evil.example/x.js';\nexport const handler = () => x",
        "forbidden_import",
    ),
    ("import leftPad from 'left-pad';\nexport const handler = () => 1", "forbidden_import"),
    ("import * as std from 'qjs:std';\nexport const handler = () => 1", "forbidden_import"),
    ("export * from 'fs';\nexport default 1", "forbidden_import"),
    ("export { readFile } from 'fs';\nexport default 1", "forbidden_import"),
    (tool("return import('fs')"), "forbidden_import"),
    (tool("return import(args.module)"), "dynamic_import"),
    (tool("return import('js-' + 'yaml')"), "dynamic_import"),
    (tool("return require('fs')"), "no_require"),
    (tool("const r = globalThis.require; return r"), "no_require"),
    # capabilities not requested
    (tool("return (await fetch('https://api.example.com')).json()"), "network_without_capability"),
    (tool("return globalThis.fetch('https://x.example')"), "network_without_capability"),
    (tool("return new Request('https://x.example')"), "network_without_capability"),
    (tool("const x = new XMLHttpRequest(); return x"), "network_without_capability"),
    (tool("return localStorage.getItem('k')"), "storage_without_capability"),
    (tool("return window.localStorage.length"), "storage_without_capability"),
    # host hooks and prototype chains
    (tool("return __host_call('fetch', '{}')"), "host_hook"),
    (tool("return globalThis.__host_fetch"), "host_hook"),
    (tool("return globalThis['__hostStorage']"), "host_hook"),
    (tool("return ({}).__proto__"), "prototype_reach"),
    (tool("return args['__proto__']"), "prototype_reach"),
    # statements
    (tool("with (args) { return text }"), "with_statement"),
    ("export function main() { return 1 }", "no_handler"),
    ("function handler() { return 1 }", "no_handler"),
    (tool("return <div/>"), "syntax_error"),
    (tool("const { constructor: C } = async () => 1; return C"), "no_function_constructor"),
    (tool("const { ['eval']: e } = globalThis; return e"), "no_eval"),
]


@pytest.mark.parametrize(("code", "rule"), FORBIDDEN)
def test_forbidden_construct_is_an_error(code: str, rule: str) -> None:
    found = check_javascript(code)
    rules = [f.rule for f in found if f.blocking]
    assert rule in rules, [f.to_dict() for f in found]
    finding = next(f for f in found if f.rule == rule)
    assert finding.line is not None
    assert finding.column is not None
    assert len(finding.message) > 20  # a sentence a model can act on


def test_network_and_storage_allowed_with_capabilities() -> None:
    code = tool(
        "localStorage.setItem('k', '1'); return (await fetch('https://api.example.com')).json()"
    )
    caps = Capabilities(network=("api.example.com",), storage=StorageScope.TOOL)
    assert errors(code, capabilities=caps) == []


def test_unused_capabilities_are_warned() -> None:
    caps = Capabilities(network=("api.example.com",), storage=StorageScope.TOOL)
    assert warnings("export const handler = () => 1", capabilities=caps) == [
        "unused_capability",
        "unused_capability",
    ]


def test_syntax_errors_have_line_and_column() -> None:
    code = "export function handler({ a }) {\n  return a +;\n}\nconst x = (1;\n"
    found = [f for f in check_javascript(code) if f.rule == "syntax_error"]
    assert [(f.line, f.column) for f in found][:1] == [(2, 13)] or found[0].line == 2
    assert {f.line for f in found} >= {2, 4}
    assert all(f.message.startswith("syntax error") for f in found)


def test_missing_brace_is_reported() -> None:
    found = check_javascript("export function handler() {\n  return 1\n")
    assert any(f.rule == "syntax_error" and "missing" in f.message for f in found)


def test_columns_count_characters_not_bytes() -> None:
    code = "export function handler() { const s = 'ééé'; return eval(s) }"
    finding = next(f for f in check_javascript(code) if f.rule == "no_eval")
    assert finding.column == code.index("eval") + 1


def test_warnings_inform_without_blocking() -> None:
    code = "export function handler({ a, unusedParam }) { while (true) { } }"
    params = {"type": "object", "properties": {"a": {}, "b": {}}}
    found = check_javascript(code, parameters=params)
    assert not any(f.blocking for f in found)
    assert {f.rule for f in found} == {"infinite_loop", "unused_parameter"}
    assert "`b`" in next(f.message for f in found if f.rule == "unused_parameter")


def test_nondeterminism_warned_only_with_tests() -> None:
    code = "export function handler() { return Math.random() + crypto.randomUUID().length }"
    assert warnings(code) == ["nondeterministic", "nondeterministic"]
    assert warnings(code, has_tests=False) == []


def test_long_literal_warned() -> None:
    code = "export function handler() { return '" + "x" * 20_000 + "' }"
    assert warnings(code) == ["long_literal"]


def test_library_list_comes_from_manifest_or_fallback() -> None:
    libs = bundled_libraries()
    assert {"decimal.js", "js-yaml", "dayjs", "papaparse", "marked", "fast-xml-parser"} <= libs
    assert errors("import x from 'dayjs';\nexport default 1", libraries=["diff"]) == [
        "forbidden_import"
    ]


def test_findings_are_sorted_and_serialisable() -> None:
    code = "import fs from 'fs';\nexport function handler() { return eval('1') }"
    found = check_javascript(code)
    assert [f.line for f in found] == sorted(f.line or 0 for f in found)
    assert found[0].to_dict()["rule"] == "forbidden_import"
    assert set(found[0].to_dict()) == {"rule", "severity", "message", "line", "column"}
