"""Which registry tools a JavaScript tool's code calls through code mode's ``tools``, read
from its tree-sitter tree without running it.

The forms a name can be read from:

- ``tools.NAME(...)``, ``tools["NAME"](...)``, ``tools.call("NAME", ...)`` and a
  destructuring ``const { NAME } = tools``: the registry tool NAME;
- ``tools.UPSTREAM.TOOL(...)`` (or ``tools.UPSTREAM["TOOL"](...)``): the tool TOOL of the
  upstream MCP server UPSTREAM, named ``UPSTREAM.TOOL`` (spec/names.py).

Any other use is *computed*: ``tools[name]``, ``tools.call(name, ...)``, ``tools`` passed or
kept as a value, ``globalThis.tools``. The forge cannot see which tool such a site calls, so the
draft names them in ``uses`` (forge/gates.py). A declaration named ``tools`` (a variable, a
parameter, an import) hides the global from the code after it and the call sites from this
reading: it is reported as ``shadowed``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import tree_sitter_javascript
from tree_sitter import Language, Node, Parser

from toolfoundry.forge.checks.js_rules import GLOBAL_OBJECTS, literal_value, name_of, text
from toolfoundry.spec.names import NAMESPACE_SEPARATOR

GLOBAL = "tools"
# where an identifier declares a binding (the parent's type, and the field naming it, if any)
_DECLARING_FIELDS = {
    "variable_declarator": "name",
    "function_declaration": "name",
    "function_expression": "name",
    "generator_function_declaration": "name",
    "generator_function": "name",
    "class_declaration": "name",
    "class": "name",
    "catch_clause": "parameter",
    "arrow_function": "parameter",
    "assignment_pattern": "left",
    "assignment_expression": "left",
    "augmented_assignment_expression": "left",
    "for_in_statement": "left",
    "pair_pattern": "value",
}
_DECLARING_PARENTS = frozenset(
    {
        "formal_parameters",
        "array_pattern",
        "rest_pattern",
        "import_clause",
        "import_specifier",
        "namespace_import",
        "export_specifier",
    }
)
_LANGUAGE = Language(tree_sitter_javascript.language())


@dataclass(frozen=True)
class ToolCallSite:
    """One place the code reaches ``tools``.

    Attributes:
        name: the tool it calls (``word_count``, or ``UPSTREAM.TOOL``); None when computed.
        line: 1-based line of the site.
        column: 1-based column (in characters).
        form: the site's source text, for messages (cut to 80 characters).
    """

    name: str | None
    line: int
    column: int
    form: str


@dataclass(frozen=True)
class ToolCalls:
    """What the code's use of ``tools`` says about the tools it calls.

    Attributes:
        named: each site whose tool the code names, in source order.
        computed: each site whose tool is only known when it runs.
        shadowed: each declaration of a binding named ``tools``.
    """

    named: tuple[ToolCallSite, ...] = ()
    computed: tuple[ToolCallSite, ...] = ()
    shadowed: tuple[ToolCallSite, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The tools the code names, each once, in the order first met."""
        return tuple(dict.fromkeys(s.name for s in self.named if s.name is not None))

    def first_site(self, name: str) -> ToolCallSite | None:
        """Where the code first names ``name``."""
        return next((s for s in self.named if s.name == name), None)


@lru_cache(maxsize=64)
def tool_calls(code: str) -> ToolCalls:
    """Read the tools ``code`` calls (cached: a create reads them twice, a test run once)."""
    source = code.encode("utf-8", "surrogatepass")
    tree = Parser(_LANGUAGE).parse(source)
    reader = _Reader(source)
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        reader.visit(node)
        stack.extend(reversed(node.named_children))
    return ToolCalls(tuple(reader.named), tuple(reader.computed), tuple(reader.shadowed))


class _Reader:
    def __init__(self, source: bytes) -> None:
        self._source = source
        self._line_starts = [0] + [i + 1 for i, b in enumerate(source) if b == 0x0A]
        self.named: list[ToolCallSite] = []
        self.computed: list[ToolCallSite] = []
        self.shadowed: list[ToolCallSite] = []

    def visit(self, node: Node) -> None:
        kind = node.type
        if kind in ("identifier", "shorthand_property_identifier_pattern"):
            if name_of(node) == GLOBAL:
                self._global(node)
        elif kind == "shorthand_property_identifier" and name_of(node) == GLOBAL:
            self._site(self.computed, None, node.parent or node)  # { tools }: passed on
        elif kind in ("member_expression", "subscript_expression"):
            target = node.child_by_field_name("object")  # globalThis.tools: another way in
            if (
                target is not None
                and target.type == "identifier"
                and name_of(target) in GLOBAL_OBJECTS
                and _key(node) == GLOBAL
            ):
                self._site(self.computed, None, node)

    def _global(self, node: Node) -> None:
        parent = node.parent
        if parent is None:
            return
        if node.type == "shorthand_property_identifier_pattern" or _declares(node, parent):
            self._site(self.shadowed, None, node)
            return
        while parent.type == "parenthesized_expression" and parent.parent is not None:
            node, parent = parent, parent.parent
        if parent.type in ("member_expression", "subscript_expression") and _is(
            parent.child_by_field_name("object"), node
        ):
            self._member(parent)
        elif parent.type == "variable_declarator" and _is(
            parent.child_by_field_name("value"), node
        ):
            self._destructured(parent)
        elif parent.type == "unary_expression" and text(parent).startswith("typeof"):
            return  # asks whether code mode is there: calls nothing
        else:
            self._site(self.computed, None, parent)  # kept or passed as a value

    def _member(self, access: Node) -> None:
        """``tools.KEY`` / ``tools["KEY"]``, and what the code does with it."""
        key = _key(access)
        outer = access.parent
        if key is None:
            self._site(self.computed, None, access)
        elif key == "call":
            if (
                outer is not None
                and outer.type == "call_expression"
                and _is(outer.child_by_field_name("function"), access)
            ):
                arguments = outer.child_by_field_name("arguments")
                first = (
                    arguments.named_children[0] if arguments and arguments.named_children else None
                )
                name = literal_value(first)
                self._site(self.named if name else self.computed, name or None, outer)
            else:
                self._site(self.computed, None, access)  # tools.call kept as a value
        elif (
            outer is not None
            and outer.type in ("member_expression", "subscript_expression")
            and _is(outer.child_by_field_name("object"), access)
            and outer.parent is not None
            and outer.parent.type == "call_expression"
            and _is(outer.parent.child_by_field_name("function"), outer)
        ):
            tool = _key(outer)  # tools.UPSTREAM.TOOL(...): an upstream server's tool
            if tool is None:
                self._site(self.computed, None, outer)
            else:
                self._site(self.named, f"{key}{NAMESPACE_SEPARATOR}{tool}", outer)
        else:
            self._site(self.named, key, access)

    def _destructured(self, declarator: Node) -> None:
        """``const { a, b: c } = tools``: a and b; a computed key or a rest is computed."""
        pattern = declarator.child_by_field_name("name")
        if pattern is None or pattern.type != "object_pattern":
            self._site(self.computed, None, declarator)  # const t = tools
            return
        for item in pattern.named_children:
            if item.type == "shorthand_property_identifier_pattern":
                self._site(self.named, name_of(item), item)
            elif item.type == "object_assignment_pattern":
                left = item.child_by_field_name("left")
                self._site(self.named, name_of(left), item)
            elif item.type == "pair_pattern":
                key = item.child_by_field_name("key")
                name = _property_name(key)
                self._site(self.named if name else self.computed, name, item)
            else:
                self._site(self.computed, None, item)

    def _site(self, into: list[ToolCallSite], name: str | None, node: Node) -> None:
        offset = node.start_byte
        row = _row(self._line_starts, offset)
        prefix = self._source[self._line_starts[row] : offset].decode("utf-8", "replace")
        form = " ".join(text(node).split())
        into.append(
            ToolCallSite(
                name, row + 1, len(prefix) + 1, form if len(form) <= 80 else form[:77] + "..."
            )
        )


def _row(starts: list[int], offset: int) -> int:
    low, high = 0, len(starts) - 1
    while low < high:
        middle = (low + high + 1) // 2
        if starts[middle] <= offset:
            low = middle
        else:
            high = middle - 1
    return low


def _is(a: Node | None, b: Node) -> bool:
    return a is not None and a.id == b.id


def _key(access: Node) -> str | None:
    """The key of ``x.KEY`` or of ``x["KEY"]`` (None when computed)."""
    if access.type == "member_expression":
        prop = access.child_by_field_name("property")
        return None if prop is None or prop.type != "property_identifier" else name_of(prop)
    return literal_value(access.child_by_field_name("index"))


def _property_name(key: Node | None) -> str | None:
    if key is None:
        return None
    if key.type == "property_identifier":
        return name_of(key)
    if key.type == "computed_property_name" and key.named_children:
        return literal_value(key.named_children[0])
    return literal_value(key)


def _declares(node: Node, parent: Node) -> bool:
    """Whether ``node`` (an identifier) is where a binding of its name is made."""
    if parent.type in _DECLARING_PARENTS:
        return True
    field = _DECLARING_FIELDS.get(parent.type)
    return field is not None and _is(parent.child_by_field_name(field), node)
