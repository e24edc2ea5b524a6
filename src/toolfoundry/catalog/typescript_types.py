"""JSON Schema -> TypeScript type text, for the ``typescript`` catalogue format.

The rule every translation keeps: **the TypeScript type accepts every value the schema
accepts**. It may accept more (a bound, a pattern or a format cannot be a TypeScript type), and
what it cannot say is written as a note in the JSDoc next to it; a schema it cannot translate
becomes ``unknown`` with a note. So a type checker never refuses a call the tool would take, and
a declared result type never promises what the tool does not.

- ``enum``/``const`` become literal types (then the other keywords only narrow them: notes);
- ``type`` lists become unions (``integer`` is ``number``, noted); ``nullable: true`` adds ``null``;
- an object lists its ``properties`` (``?`` unless ``required``) and, unless it is closed by
  ``additionalProperties: false``, an index signature for the other keys (JSON Schema objects
  are open); ``patternProperties`` and an ``additionalProperties`` schema widen that index;
- arrays are ``T[]``, ``prefixItems`` tuples with the positions past ``minItems`` optional;
- ``anyOf``/``oneOf`` are unions and ``allOf`` an intersection, each branch read with its
  parent's ``type``; ``$ref`` into ``$defs``/``definitions`` (or ``#``) is a named type alias,
  so recursion is a recursive alias.

Names and text from the schema are never pasted raw: property names that are not identifiers
are string literals, strings are escaped (:func:`ts_string`), and comments go through
:func:`doc_comment` (no ``*/``, no control or bidi characters, no lone surrogates).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolfoundry.base.display import UNSAFE_CHARACTERS, visible
from toolfoundry.catalog.schema_transform import (
    SchemaTransformError,
    compact,
    definitions,
    keyword_note,
    resolve_ref,
)

# Nested type levels written out; a deeper schema part is `unknown` (noted), which keeps the
# text, the compiler and this module's recursion bounded whatever a schema holds.
MAX_DEPTH = 24
# An enum with more values than this is typed by its values' JSON types (noted).
MAX_LITERALS = 500
# Tuple positions past prefixItems that minItems requires, written out up to this many.
MAX_REQUIRED_REST = 8
# A keyword's value written into a note is cut after this many characters.
MAX_NOTE = 160
INDENT = "  "

IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
# Words that cannot name a type alias or a namespace (reserved words, strict-mode words and
# the predefined type names), plus contextual words kept out to be safe.
_RESERVED_WORDS = """
    break case catch class const continue debugger default delete do else enum export extends
    false finally for function if import in instanceof new null return super switch this
    throw true try typeof var void while with implements interface let package private
    protected public static yield any unknown never string number boolean symbol object
    bigint undefined async await type namespace declare module global as of is keyof infer
    readonly unique asserts abstract satisfies require from get set constructor accessor
    out override intrinsic
"""
# `Object` too: an optional property named like one of its members is typed through it.
RESERVED = frozenset([*_RESERVED_WORDS.split(), "Object"])
# Members every object has in TypeScript's eyes (lib's `interface Object`): `{}` is not
# assignable to `{ constructor?: string }`, as if `{}` had a `constructor` of its own.
OBJECT_MEMBERS = frozenset(
    {
        "constructor",
        "toString",
        "toLocaleString",
        "valueOf",
        "hasOwnProperty",
        "isPrototypeOf",
        "propertyIsEnumerable",
    }
)
# Keywords translated into the type (or that only annotate); every other keyword is a note.
_TYPED = frozenset(
    {
        "type",
        "enum",
        "const",
        "$ref",
        "allOf",
        "anyOf",
        "oneOf",
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "items",
        "prefixItems",
        "nullable",
        "description",
        "title",
        "default",
        "deprecated",
        "examples",
        "$defs",
        "definitions",
        "$schema",
        "$id",
        "$comment",
    }
)
_UNSAFE_IN_STRING = re.compile(f"[{UNSAFE_CHARACTERS}]")
_TAG_START = re.compile(r"(?<!\S)@")

# precedence of a type's text: a union must be parenthesised inside an intersection or array
UNION, INTERSECTION, ATOM = 0, 1, 2


@dataclass(frozen=True)
class TsType:
    """A TypeScript type's text (possibly several lines, indented for where it stands) and
    the notes of what the type could not say."""

    text: str
    notes: tuple[str, ...] = ()
    precedence: int = ATOM


UNKNOWN = TsType("unknown")
NEVER = TsType("never")


def ts_string(text: str) -> str:
    """A TypeScript string literal of ``text``: JSON escapes, plus ``\\uXXXX`` for control,
    bidi and line-separator characters and lone surrogates (the file stays valid UTF-8)."""
    quoted = json.dumps(text, ensure_ascii=False)
    return _UNSAFE_IN_STRING.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


def property_key(name: str) -> str:
    """``name`` as a property name: itself when it is an identifier, else a string literal."""
    return name if IDENTIFIER.match(name) else ts_string(name)


def type_name(text: str) -> str:
    """An identifier for a type alias or namespace made from any text (``my-Node`` ->
    ``my_Node``); a reserved word gets a leading ``$``."""
    name = re.sub(r"[^A-Za-z0-9_$]", "_", text) or "_"
    if name[0].isdigit():
        name = "_" + name
    return "$" + name if name in RESERVED else name


def doc_comment(paragraphs: Sequence[str], indent: str = "") -> list[str]:
    """A JSDoc block of ``paragraphs`` (empty ones skipped); no lines when there is nothing.

    Control, bidi and line-separator characters and lone surrogates are written as escapes
    (``base/display.visible``), ``*/`` cannot close the comment (``*\\/``), and an ``@`` that
    would start a tag (``@deprecated``, ``@param``) is ``\\@``, so a description cannot add
    tags or code.
    """
    text = "\n\n".join(p.strip() for p in paragraphs if p and p.strip())
    if not text:
        return []
    text = _TAG_START.sub(r"\\@", visible(text).replace("*/", "*\\/"))
    lines = [line.rstrip() for line in text.split("\n")]
    if len(lines) == 1 and len(lines[0]) <= 90:
        return [f"{indent}/** {lines[0]} */"]
    body = [f"{indent} * {line}" if line else f"{indent} *" for line in lines]
    return [f"{indent}/**", *body, f"{indent} */"]


def note(text: str) -> str:
    """A note cut to :data:`MAX_NOTE` characters."""
    return text if len(text) <= MAX_NOTE else text[: MAX_NOTE - 1] + "…"


def literal(value: Any, depth: int = 0) -> str:
    """The literal type of a JSON value: ``"a"``, ``80``, ``null``, ``[1, "x"]``, ``{ a: 1 }``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return ts_string(value)
    if depth >= MAX_DEPTH:
        return "unknown"
    if isinstance(value, list):
        return "[" + ", ".join(literal(v, depth + 1) for v in value) + "]"
    if isinstance(value, Mapping):
        if not value:
            return "{ [key: string]: never }"
        fields = "; ".join(
            f"{property_key(str(k))}: {literal(v, depth + 1)}" for k, v in value.items()
        )
        return "{ " + fields + " }"
    return "unknown"


def json_type_of(value: Any) -> str:
    """The TypeScript type of a JSON value's kind: ``string``, ``number``, ``unknown[]``..."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "unknown[]"
    return "{ [key: string]: unknown }"


def union(parts: Sequence[TsType]) -> TsType:
    """``A | B``: ``unknown`` absorbs the rest, ``never`` vanishes, repeats are dropped."""
    notes = tuple(n for p in parts for n in p.notes)
    texts: list[str] = []
    for part in parts:
        if part.text == "unknown":
            return TsType("unknown", notes)
        if part.text != "never" and part.text not in texts:  # `|` is associative: no parens
            texts.append(part.text)
    if not texts:
        return TsType("never", notes)
    if len(texts) == 1:
        only = next(p for p in parts if p.text != "never")
        return TsType(only.text, notes, only.precedence)
    return TsType(" | ".join(texts), notes, UNION)


def intersection(parts: Sequence[TsType]) -> TsType:
    """``A & B``: ``unknown`` parts vanish, ``never`` wins, repeats are dropped."""
    notes = tuple(n for p in parts for n in p.notes)
    kept: list[TsType] = []
    for part in parts:
        if part.text == "never":
            return TsType("never", notes)
        if part.text != "unknown" and part.text not in [k.text for k in kept]:
            kept.append(part)
    if not kept:
        return TsType("unknown", notes)
    if len(kept) == 1:
        return TsType(kept[0].text, notes, kept[0].precedence)
    texts = [k.text if k.precedence > INTERSECTION else f"({k.text})" for k in kept]
    return TsType(" & ".join(texts), notes, INTERSECTION)


def _prefixed(prefix: str, notes: Sequence[str]) -> tuple[str, ...]:
    """Notes of a part of a schema as one note naming that part: ``items: integer, minimum: 1``."""
    return (f"{prefix}: {', '.join(notes)}",) if notes else ()


@dataclass
class Aliases:
    """The named types of one tool: one alias per ``$ref`` target (of the parameters or the
    result schema), named once, so shared and recursive definitions are written once.

    Attributes:
        qualifier: how a reference is written outside the tool's namespace
            (``ToolTypes.tree_sum.``); inside it, aliases name each other bare.
        entries: alias name -> its type (rendered inside the namespace), in naming order.
    """

    qualifier: str
    entries: dict[str, TsType] = field(default_factory=dict)
    _names: dict[tuple[int, str], str] = field(default_factory=dict)


@dataclass(frozen=True)
class SchemaRoot:
    """One schema document (a tool's parameters, or its result) whose ``$ref`` resolve
    against its own ``$defs``; ``key`` tells two documents' references apart."""

    key: int
    schema: Any
    root_name: str

    @property
    def defs(self) -> dict[str, Any]:
        return definitions(self.schema) if isinstance(self.schema, Mapping) else {}


class TypeWriter:
    """Renders the schemas of one tool, collecting its aliases."""

    def __init__(self, aliases: Aliases) -> None:
        self.aliases = aliases

    def render(
        self, schema: Any, root: SchemaRoot, *, depth: int = 0, indent: int = 0, local: bool
    ) -> TsType:
        """The type of ``schema``; ``local`` means the text stands inside the tool's
        namespace (alias bodies), else outside (the method signature)."""
        if depth > MAX_DEPTH:
            return TsType("unknown", (f"nested deeper than {MAX_DEPTH} levels: not typed",))
        if schema is True:
            return UNKNOWN
        if schema is False:
            return NEVER
        if not isinstance(schema, Mapping):
            return TsType("unknown", (note(f"not a JSON Schema: {compact(schema)}"),))
        notes = [note(keyword_note(k, v)) for k, v in schema.items() if k not in _TYPED]
        literals = self._literals(schema)
        if literals is not None:
            return TsType(literals.text, (*literals.notes, *notes), literals.precedence)
        parts: list[TsType] = []
        if "$ref" in schema:
            parts.append(self._ref(schema["$ref"], root, local=local))
        typed = self._typed(schema, root, depth, indent, local)
        if typed is not None:
            parts.append(typed)
        parent_type = schema.get("type")
        if parent_type is None and isinstance(schema.get("allOf"), list):
            # every allOf branch holds, so one branch's type holds for the others too
            typed_branches = [b for b in schema["allOf"] if isinstance(b, Mapping) and "type" in b]
            parent_type = typed_branches[0]["type"] if typed_branches else None
        for key in ("allOf", "anyOf", "oneOf"):
            branches = schema.get(key)
            if branches is None:
                continue
            if not isinstance(branches, list):
                notes.append(note(keyword_note(key, branches)))
                continue
            rendered = [
                self._branch(b, parent_type, root, depth, indent, local, f"{key}[{i}]")
                for i, b in enumerate(branches)
            ]
            parts.append(intersection(rendered) if key == "allOf" else union(rendered))
            if key == "oneOf" and len(branches) > 1:
                notes.append("exactly one of the oneOf branches")
        result = intersection(parts) if parts else UNKNOWN
        if schema.get("nullable") is True:
            result = union([result, TsType("null")])
        return TsType(result.text, (*result.notes, *notes), result.precedence)

    def _branch(
        self,
        branch: Any,
        parent_type: Any,
        root: SchemaRoot,
        depth: int,
        indent: int,
        local: bool,
        where: str,
    ) -> TsType:
        # A branch holds together with its parent, so it is read with the parent's type:
        # {"required": ["id"]} under an object is an object that has "id".
        if isinstance(branch, Mapping) and parent_type is not None and "type" not in branch:
            branch = {**branch, "type": parent_type}
        out = self.render(branch, root, depth=depth + 1, indent=indent, local=local)
        described = _description(branch)
        notes = ([described] if described else []) + list(out.notes)
        return TsType(out.text, _prefixed(where, notes), out.precedence)

    def _literals(self, schema: Mapping[str, Any]) -> TsType | None:
        if "const" in schema:
            return TsType(literal(schema["const"]))
        values = schema.get("enum")
        if values is None:
            return None
        if not isinstance(values, list):
            return TsType("unknown", (note(keyword_note("enum", values)),))
        if len(values) > MAX_LITERALS:
            kinds = union([TsType(json_type_of(v)) for v in values])
            return TsType(kinds.text, (f"one of {len(values)} enum values",), kinds.precedence)
        return union([TsType(literal(v)) for v in values])

    def _typed(
        self, schema: Mapping[str, Any], root: SchemaRoot, depth: int, indent: int, local: bool
    ) -> TsType | None:
        types = schema.get("type")
        if types is None:
            return None
        names = types if isinstance(types, list) else [types]
        parts = [self._one_type(t, schema, root, depth, indent, local) for t in names]
        return union(parts)

    def _one_type(
        self,
        type_: Any,
        schema: Mapping[str, Any],
        root: SchemaRoot,
        depth: int,
        indent: int,
        local: bool,
    ) -> TsType:
        if type_ == "string":
            return TsType("string")
        if type_ == "integer":
            return TsType("number", ("integer",))
        if type_ in ("number", "boolean", "null"):
            return TsType(str(type_))
        if type_ == "array":
            return self._array(schema, root, depth, indent, local)
        if type_ == "object":
            return self._object(schema, root, depth, indent, local)
        return TsType("unknown", (note(f"type {compact(type_)}: not a JSON type"),))

    def _array(
        self, schema: Mapping[str, Any], root: SchemaRoot, depth: int, indent: int, local: bool
    ) -> TsType:
        items = schema.get("items", True)
        prefix = schema.get("prefixItems")
        if isinstance(items, list):  # the draft-07 tuple form: not 2020-12, so not typed
            return TsType("unknown[]", (note(keyword_note("items", items)),))
        rest = self.render(items, root, depth=depth + 1, indent=indent, local=local)
        notes = _prefixed("items", _with_description(items, rest.notes))
        if not isinstance(prefix, list):
            if rest.text == "never":
                return TsType("[]", notes)
            return TsType(_element(rest) + "[]", notes)
        minimum = schema.get("minItems", 0)
        required = minimum if isinstance(minimum, int) and not isinstance(minimum, bool) else 0
        elements = []
        for i, item in enumerate(prefix):
            element = self.render(item, root, depth=depth + 1, indent=indent, local=local)
            notes += _prefixed(f"prefixItems[{i}]", _with_description(item, element.notes))
            text = element.text if element.precedence > UNION else f"({element.text})"
            elements.append(text if i < required else f"{text}?")
        if required > len(prefix):  # positions past the prefix that minItems requires
            if rest.text == "never":
                return TsType("never", (*notes, f"minItems {required} > {len(prefix)} positions"))
            if required <= len(prefix) + MAX_REQUIRED_REST:
                elements += [_element(rest)] * (required - len(prefix))
        if rest.text != "never":
            elements.append(f"...{_element(rest)}[]")
        return TsType("[" + ", ".join(elements) + "]", notes)

    def _object(
        self, schema: Mapping[str, Any], root: SchemaRoot, depth: int, indent: int, local: bool
    ) -> TsType:
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        raw_required = schema.get("required")
        required = [r for r in raw_required if isinstance(r, str)] if raw_required else []
        pad = INDENT * (indent + 1)
        lines: list[str] = []
        index_parts: list[TsType] = []
        notes: list[str] = []
        for name, sub in props.items():
            t = self.render(sub, root, depth=depth + 1, indent=indent + 1, local=local)
            lines += doc_comment(_property_doc(sub, t.notes), pad)
            optional = "" if name in required else "?"
            text = t.text
            if optional and name in OBJECT_MEMBERS:  # so that an object without it is valid
                text = f"{text} | Object[{ts_string(name)}]"
            lines.append(f"{pad}{property_key(str(name))}{optional}: {text};")
            index_parts.append(t)
        for name in dict.fromkeys(required):
            if name not in props:
                lines.append(f"{pad}{property_key(name)}: unknown;")
        patterns = schema.get("patternProperties")
        pattern_types = []
        if isinstance(patterns, Mapping):
            for pattern, sub in patterns.items():
                t = self.render(sub, root, depth=depth + 1, indent=indent + 1, local=local)
                pattern_types.append(t)
                where = f"keys matching {compact(pattern)}"
                notes += _prefixed(where, _with_description(sub, t.notes)) or (where,)
        # JSON Schema objects are open: other keys are typed unless additionalProperties is
        # false, and an index signature must also admit every declared property's type.
        extra = schema.get("additionalProperties", True)
        others = list(pattern_types)
        if extra is not False:
            other = self.render(extra, root, depth=depth + 1, indent=indent + 1, local=local)
            if extra is not True:
                notes += _prefixed("other keys", _with_description(extra, other.notes))
            others.append(other)
        index = union([*others, *index_parts]) if others else None
        if index is not None:
            lines.append(f"{pad}[key: string]: {index.text};")
        if not props and not required:
            if index is None:
                return TsType("{ [key: string]: never }", tuple(notes))
            return TsType(f"{{ [key: string]: {index.text} }}", tuple(notes))
        return TsType("{\n" + "\n".join(lines) + "\n" + INDENT * indent + "}", tuple(notes))

    def _ref(self, ref: Any, root: SchemaRoot, *, local: bool) -> TsType:
        if not isinstance(ref, str):
            return TsType("unknown", (note(keyword_note("$ref", ref)),))
        key = (root.key, ref)
        name = self.aliases._names.get(key)
        if name is None:
            try:
                target = resolve_ref(ref, root.defs)
            except SchemaTransformError:
                return TsType("unknown", (note(f"$ref {compact(ref)} cannot be resolved"),))
            base = root.root_name if ref == "#" else type_name(ref.rsplit("/", 1)[-1])
            name = base
            n = 2
            while name in self.aliases.entries:
                name = f"{base}_{n}"
                n += 1
            self.aliases._names[key] = name
            self.aliases.entries[name] = UNKNOWN  # taken before rendering: recursion ends here
            body = self.render(target, root, depth=0, indent=1, local=True)
            described = _description(target)
            notes = ([described] if described else []) + list(body.notes)
            self.aliases.entries[name] = TsType(body.text, tuple(notes), body.precedence)
        return TsType(name if local else self.aliases.qualifier + name)


def _element(item: TsType) -> str:
    return item.text if item.precedence == ATOM else f"({item.text})"


def _description(schema: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return None
    parts = [schema.get("title"), schema.get("description")]
    text = ". ".join(p.strip().rstrip(".") for p in parts if isinstance(p, str) and p.strip())
    return text or None


def _with_description(schema: Any, notes: Sequence[str]) -> list[str]:
    described = _description(schema)
    return ([described] if described else []) + list(notes)


def _property_doc(schema: Any, notes: Sequence[str]) -> list[str]:
    """A property's JSDoc: its title and description, default, examples, then notes."""
    lines = [_description(schema) or ""]
    if isinstance(schema, Mapping):
        if "default" in schema:
            lines.append(note(keyword_note("default", schema["default"])))
        if "examples" in schema:
            lines.append(note(keyword_note("examples", schema["examples"])))
        if schema.get("deprecated") is True:
            lines.append("deprecated")
    facts = [line for line in lines[1:] if line] + list(notes)
    return [lines[0], "; ".join(facts)] if facts else [lines[0]]
