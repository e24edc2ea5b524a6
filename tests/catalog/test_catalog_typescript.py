"""The ``typescript`` format, checked by the real TypeScript compiler (``tsc --strict``).

A snippet that uses the declarations as a model would must compile, and the same snippet with a
wrong argument type, a misspelt tool or a missing argument must not: each refusal is asserted
with the compiler's own diagnostic, so none of these tests can pass with a compiler that
accepts everything.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.catalog.tsc import Checked, typecheck

from toolfoundry.catalog import render
from toolfoundry.catalog.typescript import declaration, namespace_name, typescript_declarations
from toolfoundry.catalog.typescript_types import MAX_DEPTH, doc_comment, ts_string
from toolfoundry.foundry.meta_tools import builtin_specs
from toolfoundry.spec import ErrorKind, ToolSpec

GOOD = """\
export async function handler(args: { text: string }): Promise<number> {
  const slug: string = await tools.slugify({ text: args.text, max_length: null });
  const again = await tools.call("slugify", { text: slug }, { version: 3 });
  const tree: number = await tools.tree_sum({ root: { value: 1, children: [{ value: 2 }] } });
  const weather = await tools.fetch_weather({ city: "Lisbon", units: "metric" });
  const period = await tools.publish_report({ period: ["2024-01-01", "2024-01-31"] });
  await tools.wrap_text({ text: again, width: 80, mode: "char", indent: "  " });
  await tools.create_record({ name: "n", address: { street: "s" }, metadata: { a: "b" } });
  await tools.lookup_user({ email: "a@b.c" });
  await tools.list_boards({});
  await tools.list_boards();
  try {
    await tools.classify_item({ type: "book", title: "t" });
  } catch (e) {
    if (e instanceof ToolError && e.kind === "not_active") return e.tool?.length ?? 0;
  }
  void period;
  return tree + weather.temperature;
}
"""


def check(tmp_path: Path, specs: list[ToolSpec], snippet: str) -> Checked:
    return typecheck(tmp_path, {"tools.d.ts": render("typescript", specs), "snippet.ts": snippet})


def refused(checked: Checked, line_text: str, snippet: str, code: str) -> None:
    """tsc refused the snippet, at the line holding ``line_text``, with ``code``."""
    line = next(i for i, text in enumerate(snippet.splitlines(), 1) if line_text in text)
    found = [(d.file, d.line, d.code) for d in checked.diagnostics]
    assert ("snippet.ts", line, code) in found, checked.output


def test_a_snippet_using_the_tools_compiles(tmp_path: Path, specimens: list[ToolSpec]) -> None:
    checked = check(tmp_path, specimens, GOOD)
    assert checked.ok, checked.output


@pytest.mark.parametrize(
    ("wrong", "right", "code"),
    [
        # a wrong argument type
        ("slugify({ text: 5,", "slugify({ text: args.text,", "TS2322"),
        # a misspelt tool
        ("await tools.slugfy(", "await tools.slugify(", "TS2551"),
        # a misspelt name given to tools.call
        ('tools.call("slugfy", { text: slug }', 'tools.call("slugify", { text: slug }', "TS2345"),
        # a wrong argument type through tools.call
        ('tools.call("slugify", { text: 1 }', 'tools.call("slugify", { text: slug }', "TS2322"),
        # a required argument left out
        (
            "{ root: { children: [] } }",
            "{ root: { value: 1, children: [{ value: 2 }] } }",
            "TS2741",
        ),
        # a value outside an enum
        ('width: 81, mode: "char"', 'width: 80, mode: "char"', "TS2322"),
        # a closed nested object refuses an undeclared key
        ('address: { street: "s", city: "c" }', 'address: { street: "s" }', "TS2353"),
        # the result type is the declared one
        ("const slug: number =", "const slug: string =", "TS2322"),
        # a tuple of two dates takes no third
        ('["2024-01-01", "2024-01-31", "x"]', '["2024-01-01", "2024-01-31"]', "TS2322"),
        # ToolError's kind is a string, not a number
        ("e.kind === 3", 'e.kind === "not_active"', "TS2367"),
        # ToolError's tool may be null
        ("return e.tool.length", "return e.tool?.length ?? 0", "TS18047"),
        # arguments are left out only when none is required
        (
            "await tools.classify_item()",
            'await tools.classify_item({ type: "book", title: "t" })',
            "TS2554",
        ),
    ],
)
def test_a_wrong_snippet_is_refused(
    tmp_path: Path, specimens: list[ToolSpec], wrong: str, right: str, code: str
) -> None:
    snippet = GOOD.replace(right, wrong, 1)
    assert snippet != GOOD
    checked = check(tmp_path, specimens, snippet)
    assert not checked.ok
    refused(checked, wrong, snippet, code)


def test_names_that_are_not_identifiers_and_runtime_members(tmp_path: Path) -> None:
    dashed = ToolSpec(
        "word-count",
        "Count words.",
        {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        returns={"type": "integer"},
    )
    call = ToolSpec("call", "A tool named like tools.call.", {"type": "object"})
    odd = [
        ToolSpec(name, f"A tool named {name}.", {"type": "object"}, returns={"type": "string"})
        for name in ("then", "__proto__", "constructor", "toString", "hasOwnProperty")
    ]
    reserved = ToolSpec(
        "delete",
        "A tool named like a reserved word, with a recursive type.",
        {
            "type": "object",
            "properties": {"node": {"$ref": "#/$defs/class"}},
            "$defs": {"class": {"type": "array", "items": {"$ref": "#/$defs/class"}}},
        },
    )
    text = render("typescript", [dashed, call, reserved, *odd])
    assert '"word-count"(args: {' in text
    assert "declare namespace ToolTypes.$delete {" in text
    assert namespace_name("word-count") == "word$count"
    good = """\
export async function f(): Promise<number> {
  const n: number = await tools["word-count"]({ text: "a b" });
  const m: number = await tools.call("word-count", { text: "a" });
  await tools.call("call", {});
  await tools.delete({ node: [[], [[]]] });
  const t: string = await tools.call("then", {});
  const s: string = (await tools.__proto__()) + (await tools.constructor({}));
  await tools.toString();
  await tools.hasOwnProperty({});
  void t, s;
  return n + m;
}
"""
    assert typecheck(tmp_path / "good", {"tools.d.ts": text, "s.ts": good}).ok
    bad = good.replace('tools["word-count"]', "tools.word_count")
    checked = typecheck(tmp_path / "bad", {"tools.d.ts": text, "s.ts": bad})
    assert {d.code for d in checked.diagnostics} == {"TS2551"}, checked.output
    # a tool named "call" is not a method: tools.call stays the runtime's
    bad = good.replace('tools.call("call", {})', "tools.call({})")
    checked = typecheck(tmp_path / "call", {"tools.d.ts": text, "s.ts": bad})
    assert not checked.ok
    # nor is one named "then" (the runtime keeps it, so that `await tools` is the object)
    bad = good.replace('tools.call("then", {})', "tools.then({})")
    checked = typecheck(tmp_path / "then", {"tools.d.ts": text, "s.ts": bad})
    assert {d.code for d in checked.diagnostics} == {"TS2339"}, checked.output


HOSTILE = (
    "Ends the comment */ declare const pwned: number; /* then "
    "@deprecated \x1b[2K\u202e\u2066 \u2028 \x00 \ud800 done"
)


def hostile_spec() -> ToolSpec:
    name = f"key */ {HOSTILE}"
    return ToolSpec(
        "shout",
        HOSTILE,
        {
            "type": "object",
            "properties": {
                name: {"type": "string", "description": HOSTILE, "pattern": "^a*/b$"},
                "choice": {"enum": [HOSTILE, "*/", "\ud800", "`${x}`", 1.5, -2, None, True]},
                "obj": {"const": {name: [HOSTILE]}},
            },
            "required": [name],
            "$defs": {HOSTILE: {"type": "string"}},
        },
        returns={"$ref": "#/$defs/R", "$defs": {"R": {"description": HOSTILE}}},
    )


def test_hostile_text_is_escaped_and_typed(tmp_path: Path) -> None:
    spec = hostile_spec()
    text = render("typescript", [spec])
    text.encode("utf-8")  # no lone surrogate is written raw
    for raw in ("\x1b", "\x00", "\u202e", "\u2066", "\u2028"):
        assert raw not in text
    assert "declare const pwned" in text  # only inside a comment, defused:
    assert "*\\/ declare const pwned" in text
    lines = text.splitlines()
    comments = "\n".join(line for line in lines if line.lstrip().startswith(("/*", "*")))
    assert "\\@deprecated" in comments
    assert re.search(r"(?<!\\)@deprecated", comments) is None
    key = ts_string(f"key */ {HOSTILE}")
    snippet = f"""\
export async function f(): Promise<void> {{
  await tools.shout({{ {key}: "a", choice: "\\ud800", obj: {{ {key}: [{ts_string(HOSTILE)}] }} }});
  await tools.shout({{ {key}: "a", choice: null }});
  // @ts-expect-error: the comment did not end, so nothing declared pwned
  pwned;
  // @ts-expect-error: the required property is missing
  await tools.shout({{ choice: 1.5 }});
  // @ts-expect-error: not one of the enum's values
  await tools.shout({{ {key}: "a", choice: "other" }});
}}
"""
    checked = typecheck(tmp_path, {"tools.d.ts": text, "s.ts": snippet})
    assert checked.ok, checked.output


def test_escaped_doc_comments_cannot_end_early() -> None:
    for text in ("*/", "**/", "*/*/", "a*/", "/*/"):
        lines = doc_comment([text])
        body = "\n".join(lines)
        assert body.count("*/") == 1
        assert body.endswith("*/")


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"a": schema}, "required": ["a"]}
    return schema


def test_a_deep_schema_is_cut_to_unknown_with_a_note(tmp_path: Path) -> None:
    spec = ToolSpec("deep", "Deep.", nested(300))
    text = render("typescript", [spec])
    assert f"nested deeper than {MAX_DEPTH} levels" in text
    value = json.dumps(nested_value(300, "x"))
    snippet = f"export const p = tools.deep({value});\n"
    checked = typecheck(tmp_path / "ok", {"tools.d.ts": text, "s.ts": snippet})
    assert checked.ok, checked.output
    bad = f"export const p = tools.deep({json.dumps(nested_value(3, 1))});\n"
    checked = typecheck(tmp_path / "bad", {"tools.d.ts": text, "s.ts": bad})
    assert [d.code for d in checked.diagnostics] == ["TS2322"], checked.output


def nested_value(depth: int, leaf: object) -> object:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def test_untranslatable_parts_are_unknown_with_a_note(tmp_path: Path) -> None:
    spec = ToolSpec(
        "odd",
        "Odd schemas.",
        {
            "type": "object",
            "properties": {
                "dangling": {"$ref": "#/$defs/Missing"},
                "remote": {"$ref": "https://example.com/schema.json"},
                "bad_type": {"type": "date"},
                "negated": {"not": {"type": "string"}},
                "old_tuple": {"type": "array", "items": [{"type": "string"}]},
                "nothing": False,
            },
        },
    )
    decl = declaration(spec)
    for expected in (
        "dangling?: unknown;",
        "remote?: unknown;",
        "bad_type?: unknown;",
        "negated?: unknown;",
        "old_tuple?: unknown[];",
        "nothing?: never;",
        '$ref "#/$defs/Missing" cannot be resolved',
        'type "date": not a JSON type',
        'not: {"type": "string"}',
    ):
        assert expected in decl.method, decl.method
    assert typecheck(tmp_path, {"tools.d.ts": render("typescript", [spec])}).ok


def test_returns_and_unions(tmp_path: Path) -> None:
    spec = ToolSpec(
        "pick",
        "Pick.",
        {
            "type": "object",
            "properties": {
                "by": {
                    "oneOf": [
                        {
                            "type": "object",
                            "properties": {"id": {"type": "integer"}},
                            "required": ["id"],
                            "additionalProperties": False,
                        },
                        {
                            "type": "object",
                            "properties": {"email": {"type": "string"}},
                            "required": ["email"],
                            "additionalProperties": False,
                        },
                    ]
                },
                "tags": {
                    "type": "object",
                    "patternProperties": {"^x-": {"type": "string"}},
                    "additionalProperties": False,
                },
                "pair": {
                    "type": "array",
                    "prefixItems": [{"type": "string"}, {"type": "number"}],
                    "minItems": 1,
                },
                "maybe": {"type": "string", "nullable": True},
                "all": {
                    "allOf": [
                        {"type": "object", "properties": {"a": {"type": "string"}}},
                        {"required": ["a"]},
                    ]
                },
            },
            "required": ["by"],
        },
        returns={"type": "array", "items": {"type": ["string", "null"]}},
    )
    text = render("typescript", [spec])
    assert "Promise<(string | null)[]>" in text
    good = """\
export async function f(): Promise<(string | null)[]> {
  await tools.pick({ by: { id: 1 }, tags: { "x-a": "1" }, pair: ["a"], maybe: null });
  await tools.pick({ by: { id: 1 }, all: { a: "x" } });
  await tools.pick({ by: { email: "e" }, pair: ["a", 2, true] });
  // @ts-expect-error: neither branch of oneOf
  await tools.pick({ by: { name: "n" } });
  // @ts-expect-error: the tuple's first position is a string
  await tools.pick({ by: { id: 1 }, pair: [1] });
  // @ts-expect-error: allOf requires a
  await tools.pick({ by: { id: 1 }, all: {} });
  return tools.pick({ by: { id: 2 } });
}
"""
    checked = typecheck(tmp_path, {"tools.d.ts": text, "s.ts": good})
    assert checked.ok, checked.output


def test_a_signature_stands_alone(tmp_path: Path, specimens: list[ToolSpec]) -> None:
    """What a search hit carries compiles inside an interface, with its named types."""
    files = {}
    for spec in specimens:
        decl = declaration(spec)
        method, _, aliases = decl.signature.partition("\ndeclare namespace")
        body = method + ("\n}\ndeclare namespace" + aliases if aliases else "\n}")
        files[f"{spec.name}.d.ts"] = f"interface Sig_{spec.name} {{\n{body}\n"
        assert spec.description not in decl.signature
    tree = declaration(next(s for s in specimens if s.name == "tree_sum")).signature
    assert "tree_sum(args: {" in tree
    assert "type Node = {" in tree
    checked = typecheck(tmp_path, files)
    assert checked.ok, checked.output


def test_the_meta_tools_are_never_declared(tmp_path: Path, specimens: list[ToolSpec]) -> None:
    """``tools`` reaches the registry's tools, never the built-in meta-tools: with them among
    the specs (as ``describe`` and a project's catalogue have them), only the others are
    declared, and a snippet calling one through ``tools`` does not compile."""
    meta = builtin_specs()
    text = render("typescript", [*meta, *specimens])
    assert text == render("typescript", specimens)
    assert f"// {len(specimens)} tools." in text
    snippet = 'export const n = await tools.search_tools({ query: "words" });\n'
    checked = typecheck(tmp_path, {"tools.d.ts": text, "snippet.ts": snippet})
    refused(checked, "tools.search_tools", snippet, "TS2339")  # no such property
    alone = render("typescript", meta)
    assert "// 0 tools." in alone
    assert not any(f" {s.name}(" in alone for s in meta)


def test_the_error_kinds_are_the_call_error_kinds() -> None:
    text = typescript_declarations([])
    for kind in ErrorKind:
        assert f"| {json.dumps(kind.value)}" in text
    assert "// 0 tools." in text


def test_namespaced_names_nest_under_tools(tmp_path: Path) -> None:
    """Upstream servers' names (``github.create_issue``): the nesting is ready, reached by
    ``namespace_path``; a ToolSpec name cannot hold a dot yet, so the declaration is built
    here by replacing a plain tool's name."""
    from toolfoundry.catalog import typescript as ts

    spec = ToolSpec(
        "create_issue",
        "Create an issue.",
        {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]},
    )
    decl = declaration(spec)
    member = decl.method.replace("create_issue(", '"github.create_issue"(', 1)
    lines = ["interface ToolsByName {", member, "  plain(args: {}): Promise<number>;", "}"]
    prelude = ts.PRELUDE.format(kinds='  | "x"')
    text = "\n".join([prelude, *lines, *ts._tools_global(["github.create_issue", "plain"])])
    assert "github: {" in text
    assert 'create_issue: ToolsByName["github.create_issue"];' in text
    snippet = """\
export async function f(): Promise<number> {
  await tools.github.create_issue({ title: "t" });
  await tools.call("github.create_issue", { title: "t" });
  // @ts-expect-error: the namespaced name is not a member of tools itself
  await tools["github.create_issue"]({ title: "t" });
  // @ts-expect-error: a wrong argument type
  await tools.github.create_issue({ title: 1 });
  return tools.plain({});
}
"""
    checked = typecheck(tmp_path, {"tools.d.ts": text, "s.ts": snippet})
    assert checked.ok, checked.output
    assert namespace_name("github.create_issue") == "github.create_issue"


def test_properties_named_like_object_members(tmp_path: Path) -> None:
    """TypeScript sees `constructor`, `toString`... on every object: an optional property of
    that name still lets an object leave it out (found by the property test)."""
    names = ["constructor", "toString", "valueOf", "hasOwnProperty", "__proto__"]
    props = {name: {"type": "array", "items": {"type": "number"}} for name in names}
    closed = {"type": "object", "properties": props, "additionalProperties": False}
    spec = ToolSpec("members", "Members.", {"type": "object", "properties": {"o": closed}})
    snippet = """\
export async function f(): Promise<void> {
  await tools.members({ o: {} });
  await tools.members({ o: { constructor: [1], toString: [2], valueOf: [], hasOwnProperty: [] } });
  // @ts-expect-error: not an array of numbers
  await tools.members({ o: { constructor: ["x"] } });
}
"""
    checked = typecheck(tmp_path, {"tools.d.ts": render("typescript", [spec]), "s.ts": snippet})
    assert checked.ok, checked.output


def test_min_items_past_a_tuple_s_prefix(tmp_path: Path) -> None:
    """minItems beyond prefixItems: the rest positions it requires are written out, and a
    closed tuple that cannot reach it is never (found by the property test)."""
    longer = {
        "type": "array",
        "prefixItems": [{"type": "string"}],
        "items": {"type": "number"},
        "minItems": 3,
    }
    closed = {"type": "array", "prefixItems": [{"type": "string"}], "items": False, "minItems": 2}
    spec = ToolSpec(
        "tuples",
        "Tuples.",
        {"type": "object", "properties": {"longer": longer, "closed": closed}},
    )
    method = declaration(spec).method
    assert "longer?: [string, number, number, ...number[]];" in method
    assert "closed?: never;" in method
    snippet = """\
export async function f(): Promise<void> {
  await tools.tuples({ longer: ["a", 1, 2, 3] });
  // @ts-expect-error: two items, three required
  await tools.tuples({ longer: ["a", 1] });
  // @ts-expect-error: no array is valid
  await tools.tuples({ closed: ["a"] });
}
"""
    checked = typecheck(tmp_path, {"tools.d.ts": render("typescript", [spec]), "s.ts": snippet})
    assert checked.ok, checked.output
