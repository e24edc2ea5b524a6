"""The rules of the JavaScript static check, applied node by node over a tree-sitter tree.

This is a second fence: the sandbox has no eval-free guarantee and no network without a
policy anyway. The rules aim at what a model writes by habit or an injected prompt writes on
purpose, including the usual obfuscations (``window["ev" + "al"]``, ``(0, eval)``,
``(async function(){}).constructor``), and refuse a whole family when a form is ambiguous.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import re
from collections.abc import Callable, Mapping
from typing import Any

from tree_sitter import Node

from toolfoundry.forge.findings import Finding, Severity
from toolfoundry.sandbox.js.intl_parts import IntlLocales
from toolfoundry.sandbox.js.modules import MANIFEST, packages
from toolfoundry.sandbox.js.surface import global_instead
from toolfoundry.spec import Capabilities, StorageScope

GLOBAL_OBJECTS = frozenset({"globalThis", "window", "self", "global", "frames", "top", "parent"})
NETWORK_NAMES = frozenset({"fetch", "XMLHttpRequest", "Request", "WebSocket", "EventSource"})
STORAGE_NAMES = frozenset({"localStorage", "sessionStorage"})
RANDOM_CALLS = frozenset({"Math.random", "crypto.getRandomValues", "crypto.randomUUID"})
FUNCTION_LIKE = frozenset(
    {"function_expression", "arrow_function", "generator_function", "function", "class"}
)
# Legitimate double-underscore names that are language features, not host hooks.
LANGUAGE_DUNDERS = frozenset(
    {"__proto__", "__defineGetter__", "__defineSetter__", "__lookupGetter__", "__lookupSetter__"}
)
SAFE_CONSTRUCTOR_USES = frozenset(
    {"member_expression", "subscript_expression", "binary_expression", "unary_expression"}
    | {"new_expression", "expression_statement"}
)
LONG_LITERAL_CHARS = 10_000
# What formats with a locale (its first argument): a literal tag without data is a warning.
INTL_FORMATTERS = frozenset(
    {"DateTimeFormat", "NumberFormat", "PluralRules", "RelativeTimeFormat", "ListFormat"}
)
LOCALE_METHODS = frozenset({"toLocaleString", "toLocaleDateString", "toLocaleTimeString"})
LOCALE_TAG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*")


@functools.cache
def intl_locales() -> IntlLocales:
    """The locales the built sandbox has Intl data for (read once per process)."""
    return IntlLocales.read(MANIFEST)


def test_locale_findings(code: str, inputs: list[Any]) -> list[Finding]:
    """Warnings for tests that hand code which formats with Intl (``Intl.`` or
    ``toLocale``) a locale without data in an argument named like one (``locale``, ``lang``):
    the test passes on en-US output the model may not expect."""
    if "Intl." not in code and "toLocale" not in code:
        return []
    locales = intl_locales()
    out = []
    for i, arguments in enumerate(inputs):
        if not isinstance(arguments, Mapping):
            continue
        for key, value in arguments.items():
            named = any(word in str(key).lower() for word in ("locale", "lang"))
            if not named or not isinstance(value, str) or not LOCALE_TAG.fullmatch(value):
                continue
            if not locales.served(value):
                message = (
                    f"test {i} formats with {value!r}, a locale the sandbox's Intl has no data "
                    "for: the tool answers as en-US. Locales with data: "
                    f"{', '.join(sorted(locales.names()))} (and their regions)"
                )
                path = f"$.tests[{i}].input.{key}"
                rule = "intl_locale_without_data"
                out.append(Finding(rule, Severity.WARNING, message, path=path))
    return out


_BRACED_ESCAPE = re.compile(r"\\u\{([0-9a-fA-F]{1,6})\}")
_IDENTIFIER_ESCAPE = re.compile(r"\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})")


def literal_value(node: Node | None) -> str | None:
    """The value of a string literal or substitution-free template, else None."""
    while node is not None and node.type == "parenthesized_expression":
        node = node.named_children[0] if node.named_child_count == 1 else None
    if node is None:
        return None
    if node.type not in ("string", "template_string"):
        return None
    parts: list[str] = []
    for child in node.named_children:
        if child.type == "template_substitution":
            return None
        raw = (child.text or b"").decode("utf-8", "replace")
        if child.type == "escape_sequence":
            raw = _BRACED_ESCAPE.sub(lambda m: chr(int(m.group(1), 16)), raw)
            with contextlib.suppress(UnicodeDecodeError):
                raw = codecs.decode(raw, "unicode_escape")
        parts.append(raw)
    return "".join(parts)


def unwrap(node: Node) -> Node:
    """Strip parentheses and take the last operand of a comma sequence: ``(0, eval)`` is eval."""
    while True:
        wrapped = node.type in ("parenthesized_expression", "sequence_expression")
        if wrapped and node.named_child_count:
            node = node.named_children[-1]
        else:
            return node


def text(node: Node | None) -> str:
    """The source text of a node."""
    return "" if node is None else (node.text or b"").decode("utf-8", "replace")


def name_of(node: Node | None) -> str:
    """An identifier's name: JavaScript reads ``\\u0065val`` and ``\\u{65}val`` as ``eval``."""
    raw = text(node)
    if "\\" not in raw:
        return raw

    def decode(match: re.Match[str]) -> str:
        value = int(match.group(1) or match.group(2), 16)
        return chr(value) if value <= 0x10FFFF else match.group(0)

    return _IDENTIFIER_ESCAPE.sub(decode, raw)


class RuleWalker:
    """Applies every rule to one tree; findings accumulate in :attr:`findings`."""

    def __init__(
        self,
        capabilities: Capabilities,
        libraries: frozenset[str],
        hook_names: frozenset[str],
        has_tests: bool,
        locate: Callable[[Node], tuple[int, int]],
    ) -> None:
        self.capabilities = capabilities
        self.libraries = libraries
        self.hook_names = hook_names
        self.has_tests = has_tests
        self.locate = locate
        self.findings: list[Finding] = []
        self.used_network = False
        self.used_storage = False
        self._seen: set[tuple[str, int, int]] = set()

    def report(
        self, rule: str, node: Node, message: str, severity: Severity = Severity.ERROR
    ) -> None:
        """Record one finding, once per rule and place."""
        line, column = self.locate(node)
        if (rule, line, column) in self._seen:
            return
        self._seen.add((rule, line, column))
        self.findings.append(Finding(rule, severity, message, line, column))

    def visit(self, node: Node, kind: str) -> None:
        """Apply the rules that concern this node's type (``kind`` is ``node.type``)."""
        if kind in ("identifier", "shorthand_property_identifier"):
            self._name(node, name_of(node))
        elif kind in ("member_expression", "subscript_expression"):
            self._member(node)
        elif kind in ("pair_pattern", "shorthand_property_identifier_pattern"):
            self._destructured(node)
        elif kind == "call_expression":
            self._call(node)
        elif kind == "new_expression":
            self._new(node)
        elif kind in ("import_statement", "export_statement"):
            source = node.child_by_field_name("source")
            if source is not None:
                self._import_source(source, literal_value(source))
        elif kind == "with_statement":
            self.report(
                "with_statement",
                node,
                "`with` statements are not allowed (and not valid in ES modules); "
                "name the object explicitly",
            )
        elif kind in ("while_statement", "do_statement", "for_statement"):
            self._loop(node)
        elif kind in ("string", "template_string") and len(text(node)) > LONG_LITERAL_CHARS:
            self.report(
                "long_literal",
                node,
                f"a literal longer than {LONG_LITERAL_CHARS} characters; pass large data as an "
                "argument instead of embedding it in the code",
                Severity.WARNING,
            )
        elif kind.startswith("jsx_"):
            self.report(
                "syntax_error",
                node,
                "JSX is not plain JavaScript; build strings or objects instead",
            )

    def _name(self, node: Node, name: str) -> None:
        if name == "eval":
            self.report(
                "no_eval",
                node,
                "`eval` is not allowed in tools: compute the value directly, or parse data with "
                "JSON.parse",
            )
        elif name == "Function":
            self.report(
                "no_function_constructor",
                node,
                "the `Function` constructor compiles strings as code and is not allowed; "
                "write an ordinary function",
            )
        elif name == "require":
            self.report(
                "no_require",
                node,
                '`require` does not exist in the sandbox: use `import x from "<library>"` with a '
                f"bundled library ({packages(self.libraries)})",
            )
        elif name in NETWORK_NAMES:
            self._network(node, name)
        elif name in STORAGE_NAMES:
            self._storage(node, name)
        elif self._is_hook(name):
            self._hook(node, name)

    def _is_hook(self, name: str) -> bool:
        if name in LANGUAGE_DUNDERS:
            return False
        return name.startswith(("__host", "__tf")) or name in self.hook_names

    def _hook(self, node: Node, name: str) -> None:
        self.report(
            "host_hook",
            node,
            f"`{name}` is an internal hook of the sandbox; use the public web APIs "
            "(fetch, localStorage, crypto) instead",
        )

    def _network(self, node: Node, name: str) -> None:
        self.used_network = True
        if not self.capabilities.network:
            self.report(
                "network_without_capability",
                node,
                f"`{name}` needs the network capability: add the hosts you call to "
                'capabilities.network (e.g. ["api.example.com"]) and give fetch fixtures for tests',
            )

    def _storage(self, node: Node, name: str) -> None:
        self.used_storage = True
        if self.capabilities.storage is StorageScope.NONE:
            self.report(
                "storage_without_capability",
                node,
                f"`{name}` needs the storage capability: set capabilities.storage to true",
            )

    def _member(self, node: Node) -> None:
        obj = node.child_by_field_name("object")
        if obj is None:
            return
        target = unwrap(obj)
        if node.type == "member_expression":
            prop: str | None = name_of(node.child_by_field_name("property"))
        else:
            prop = literal_value(node.child_by_field_name("index"))
        on_global = target.type == "identifier" and name_of(target) in GLOBAL_OBJECTS
        if prop is None:
            if on_global or target.type == "this":
                self.report(
                    "computed_global_access",
                    node,
                    f"`{text(target)}[...]` with a computed key can reach any global, eval "
                    "included; refer to the global you need by its name",
                )
            return
        if prop in ("eval", "Function", "require") or prop in NETWORK_NAMES | STORAGE_NAMES:
            if prop in ("eval", "Function") or on_global:
                self._name(node, prop)
        elif prop == "constructor":
            self._constructor(node, target)
        elif prop == "__proto__":
            self.report(
                "prototype_reach",
                node,
                "reading `__proto__` is not allowed; use Object.getPrototypeOf only on your own "
                "objects, or better, plain data",
            )
        elif self._is_hook(prop):
            self._hook(node, prop)
        elif f"{text(target)}.{prop}" in RANDOM_CALLS and self.has_tests:
            self.report(
                "nondeterministic",
                node,
                f"`{text(target)}.{prop}` makes results vary between runs, so tests with "
                "`expected` values may fail; derive values from the input where you can",
                Severity.WARNING,
            )

    def _destructured(self, node: Node) -> None:
        if node.type == "pair_pattern":
            key = node.child_by_field_name("key")
            if key is not None and key.type == "computed_property_name" and key.named_children:
                key = key.named_children[0]
            literal = key is not None and key.type in ("string", "template_string")
            name = literal_value(key) if literal else text(key)
        else:
            name = text(node)
        if name == "constructor":
            self.report(
                "no_function_constructor",
                node,
                "destructuring `constructor` can get the Function constructor (code from "
                "strings), which is not allowed; write an ordinary function",
            )
        elif name is not None:
            self._name(node, name)

    def _constructor(self, node: Node, target: Node) -> None:
        chained = target.type in ("member_expression", "subscript_expression") and (
            text(target.child_by_field_name("property")) == "constructor"
            or literal_value(target.child_by_field_name("index")) == "constructor"
        )
        parent = node.parent
        while parent is not None and parent.type == "parenthesized_expression":
            parent = parent.parent
        # Reading `x.constructor` to compare it, test it or read `.name` is fine; calling it or
        # handing it on (a variable, an argument, a return value) can launder Function.
        handed_on = parent is None or parent.type not in SAFE_CONSTRUCTOR_USES
        proto_of = target.type == "call_expression" and "getPrototypeOf" in text(
            target.child_by_field_name("function")
        )
        if chained or handed_on or proto_of or target.type in FUNCTION_LIKE:
            self.report(
                "no_function_constructor",
                node,
                "reaching a function's `constructor` gets the Function constructor (code from "
                "strings), which is not allowed; write an ordinary function",
            )

    def _call(self, node: Node) -> None:
        fn = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if fn is None:
            return
        arg_nodes = [] if args is None else list(args.named_children)
        if fn.type == "import":
            first = arg_nodes[0] if arg_nodes else None
            spec = literal_value(first)
            if spec is None:
                self.report(
                    "dynamic_import",
                    node,
                    "`import()` needs a string literal naming a bundled library; computed "
                    "module names are not allowed",
                )
            else:
                self._import_source(node, spec)
            return
        name = text(unwrap(fn))
        if (
            name in ("setTimeout", "setInterval")
            and arg_nodes
            and arg_nodes[0].type
            in (
                "string",
                "template_string",
            )
        ):
            self.report(
                "no_eval", node, f"`{name}` with a string runs code from text; pass a function"
            )
        self._locale_arguments(fn, arg_nodes)
        for arg in arg_nodes:
            if literal_value(arg) == "constructor":
                self.report(
                    "no_function_constructor",
                    arg,
                    "looking up `constructor` by name (Reflect.get, getOwnPropertyDescriptor) "
                    "can get the Function constructor; write an ordinary function",
                )
            if unwrap(arg).type == "identifier" and name_of(unwrap(arg)) in GLOBAL_OBJECTS:
                self.report(
                    "global_reflection",
                    arg,
                    f"passing `{text(unwrap(arg))}` to a function lets it enumerate or reach "
                    "every global; refer to the global you need by its name",
                )

    def _new(self, node: Node) -> None:
        ctor = node.child_by_field_name("constructor")
        args = node.child_by_field_name("arguments")
        if ctor is None or args is None:
            return
        ctor = unwrap(ctor)
        self._locale_arguments(ctor, list(args.named_children))
        is_ctor_prop = (
            ctor.type == "member_expression"
            and text(ctor.child_by_field_name("property")) == "constructor"
        )
        if is_ctor_prop and any(
            a.type in ("string", "template_string") for a in args.named_children
        ):
            self.report(
                "no_function_constructor",
                node,
                '`new x.constructor("...")` compiles a string as code; write an ordinary function',
            )

    def _locale_arguments(self, callee: Node, arguments: list[Node]) -> None:
        """Warn about a literal locale without data in ``Intl.X(locale)`` or
        ``x.toLocale*String(locale)``: it formats as en-US, which a test may not show."""
        if callee.type != "member_expression" or not arguments:
            return
        owner = text(callee.child_by_field_name("object"))
        member = text(callee.child_by_field_name("property"))
        if not ((owner == "Intl" and member in INTL_FORMATTERS) or member in LOCALE_METHODS):
            return
        first = unwrap(arguments[0])
        items = first.named_children if first.type == "array" else [first]
        locales = intl_locales()
        tags = [(item, literal_value(item)) for item in items]
        if any(tag is None or locales.served(tag) for _, tag in tags):
            return  # computed, or one of the list is served (the first served one is used)
        for item, tag in tags:
            if tag is None or not LOCALE_TAG.fullmatch(tag):
                continue
            self.report(
                "intl_locale_without_data",
                item,
                f"the sandbox's Intl has no data for {tag!r}: it formats as en-US here. Locales "
                f"with data: {', '.join(sorted(locales.names()))} (and their regions)",
                Severity.WARNING,
            )

    def _import_source(self, node: Node, spec: str | None) -> None:
        if spec is None or spec not in self.libraries:
            instead = global_instead(spec) if spec is not None else None
            self.report(
                "forbidden_import",
                node,
                f"cannot import {spec!r}: "
                + (
                    instead
                    or f"only the bundled libraries can be imported "
                    f"({packages(self.libraries)}); write the code yourself otherwise"
                ),
            )

    def _loop(self, node: Node) -> None:
        cond = node.child_by_field_name("condition")
        cond_text = text(cond).strip("();").strip() if cond is not None else ""
        if cond_text not in ("", "true", "1", "!0"):
            return
        body = node.child_by_field_name("body")
        if body is not None and not _has_exit(body):
            self.report(
                "infinite_loop",
                node,
                "this loop never ends (no break, return or throw inside); the call will time out",
                Severity.WARNING,
            )


def _has_exit(node: Node) -> bool:
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type in ("break_statement", "return_statement", "throw_statement"):
            return True
        if current.type in FUNCTION_LIKE or current.type in (
            "function_declaration",
            "generator_function_declaration",
            "method_definition",
        ):
            continue
        stack.extend(current.children)
    return False
