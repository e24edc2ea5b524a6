"""Static check of a JavaScript tool module with tree-sitter.

Reports syntax errors with line and column, the rule findings of :mod:`js_rules`, a missing
``handler``/default export, and informative warnings (unused parameters or capabilities).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

import tree_sitter_javascript
from tree_sitter import Language, Node, Parser

from toolfoundry.forge.checks.js_rules import LANGUAGE_DUNDERS, RuleWalker, text
from toolfoundry.forge.findings import Finding, Severity
from toolfoundry.sandbox.js.modules import default_catalog
from toolfoundry.spec import Capabilities, StorageScope

MAX_SYNTAX_FINDINGS = 20
_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_LANGUAGE = Language(tree_sitter_javascript.language())


def bundled_libraries() -> frozenset[str]:
    """Specifiers a tool may import: the sandbox's own list (its manifest's names and the
    other forms it lists for them, such as ``dayjs/esm``), as its module loader resolves them.

    Empty when the libraries are not built: then the sandbox imports nothing either.
    """
    return default_catalog().importable()


@lru_cache(maxsize=1)
def host_hook_names() -> frozenset[str]:
    """Double-underscore names the sandbox's prelude uses for its host hooks."""
    from toolfoundry.sandbox.js.wasm_engine import prelude_source  # loads wasmtime

    names = set(re.findall(r"\b__[A-Za-z]\w*", prelude_source()))
    return frozenset(names - LANGUAGE_DUNDERS)


class _Locator:
    """Maps byte offsets to 1-based (line, character column)."""

    def __init__(self, source: bytes) -> None:
        self.source = source
        self.starts = [0] + [m.end() for m in re.finditer(rb"\n", source)]

    def __call__(self, node: Node) -> tuple[int, int]:
        offset = node.start_byte
        row = bisect.bisect_right(self.starts, offset) - 1
        prefix = self.source[self.starts[row] : offset].decode("utf-8", "replace")
        return row + 1, len(prefix) + 1


def check_javascript(
    code: str,
    *,
    capabilities: Capabilities | None = None,
    parameters: Mapping[str, Any] | None = None,
    has_tests: bool = True,
    libraries: Iterable[str] | None = None,
) -> tuple[Finding, ...]:
    """Check a JavaScript tool module without running it.

    Args:
        code: the ES module source.
        capabilities: what the tool requested; decides whether fetch/localStorage are allowed.
        parameters: the tool's parameters schema, to warn about parameters the code never uses.
        has_tests: whether the tool has expected-value tests (nondeterminism warnings).
        libraries: importable library names; defaults to the sandbox's bundled libraries.

    Returns:
        Findings sorted by position; any ``error`` finding blocks the version.
    """
    capabilities = capabilities or Capabilities()
    source = code.encode("utf-8", "surrogatepass")
    tree = Parser(_LANGUAGE).parse(source)
    locate = _Locator(source)
    walker = RuleWalker(
        capabilities,
        frozenset(libraries) if libraries is not None else bundled_libraries(),
        host_hook_names(),
        has_tests,
        locate,
    )
    syntax: list[Finding] = []
    # (node, inside an ERROR node, parent has an error below it)
    stack: list[tuple[Node, bool, bool]] = [(tree.root_node, False, True)]
    while stack:
        node, in_error, near_error = stack.pop()
        kind = node.type
        if near_error and (node.is_missing or (kind == "ERROR" and not in_error)):
            if len(syntax) < MAX_SYNTAX_FINDINGS:
                syntax.append(_syntax_finding(node, locate))
            if node.is_missing:
                continue
        walker.visit(node, kind)
        has_error = node.has_error
        # Anonymous nodes (punctuation, keywords) matter only where tree-sitter saw an error.
        children = node.children if has_error else node.named_children
        inside = in_error or kind == "ERROR"
        stack.extend((child, inside, has_error) for child in reversed(children))
    words = set(_WORD.findall(code))
    findings = syntax + walker.findings
    if not syntax and not _exports_handler(tree.root_node):
        findings.append(
            Finding(
                "no_handler",
                Severity.ERROR,
                "the module must export its entry point: `export function handler(args) {...}` "
                "(sync or async) or `export default ...`",
                1,
                1,
            )
        )
    findings += _unused(walker, capabilities, parameters, words)
    return tuple(sorted(findings, key=lambda f: (f.line or 0, f.column or 0, f.rule)))


def _syntax_finding(node: Node, locate: _Locator) -> Finding:
    line, column = locate(node)
    if node.is_missing:
        message = f"syntax error: missing `{node.type}` here"
    else:
        snippet = text(node).strip().splitlines()[0][:40] if text(node).strip() else node.type
        message = f"syntax error: unexpected `{snippet}`; check brackets, commas and quotes"
    return Finding("syntax_error", Severity.ERROR, message, line, column)


def _exports_handler(root: Node) -> bool:
    for node in root.named_children:
        if node.type != "export_statement":
            continue
        if any(child.type == "default" for child in node.children):
            return True
        declaration = node.child_by_field_name("declaration")
        if declaration is not None:
            name = declaration.child_by_field_name("name")
            if name is not None and text(name) == "handler":
                return True
            for declarator in declaration.named_children:
                if text(declarator.child_by_field_name("name")) == "handler":
                    return True
        for clause in node.named_children:
            if clause.type != "export_clause":
                continue
            for spec in clause.named_children:
                exported = spec.child_by_field_name("alias") or spec.child_by_field_name("name")
                if text(exported) in ("handler", "default"):
                    return True
    return False


def _unused(
    walker: RuleWalker,
    capabilities: Capabilities,
    parameters: Mapping[str, Any] | None,
    words: set[str],
) -> list[Finding]:
    out: list[Finding] = []
    properties = (parameters or {}).get("properties") or {}
    for name in properties:
        if name not in words:
            out.append(
                Finding(
                    "unused_parameter",
                    Severity.WARNING,
                    f"parameter `{name}` is in the schema but the code never mentions it; "
                    "use it or remove it from `parameters`",
                    1,
                    1,
                )
            )
    if capabilities.network and not walker.used_network:
        out.append(
            Finding(
                "unused_capability",
                Severity.WARNING,
                "capabilities.network is requested but the code never calls fetch; drop it so "
                "the tool can activate without a human's approval",
            )
        )
    if capabilities.storage is not StorageScope.NONE and not walker.used_storage:
        out.append(
            Finding(
                "unused_capability",
                Severity.WARNING,
                "capabilities.storage is requested but the code never uses localStorage; drop it",
            )
        )
    return out
