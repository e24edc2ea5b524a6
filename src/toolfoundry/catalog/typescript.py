"""The ``typescript`` format: one declaration file typing the ``tools`` global of code mode.

    interface ToolsByName {
      /** Count the words of a text. */
      word_count(args: { text: string }): Promise<number>;
    }
    declare const tools: Omit<ToolsByName, "call"> & { call<N ...>(name: N, args, options?) };

``ToolsByName`` lists every tool under its full name with JSDoc from its description, its
argument type from ``parameters`` and its result from ``returns`` (``unknown`` without one);
``tools`` is that interface less the runtime's own members (``call``), plus the typed
``tools.call``. The built-in meta-tools (``create_tool``, ``search_tools``...) are never
declared: ``tools`` reaches the registry's tools, not them. A name that is not an identifier
is a quoted member (``"my-tool"``), reached as ``tools["my-tool"]``. Types named by ``$ref``
live in ``declare namespace ToolTypes.<tool>``. The schema rules are
:mod:`toolfoundry.catalog.typescript_types`.

Namespaces: :func:`namespace_path` splits a name into the path ``tools`` reaches it by. A
registry tool's name has no separator, so its path has one part; an upstream MCP server's tool
(``github.create_issue``, spec/names.py) becomes ``tools.github.create_issue``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from toolfoundry.catalog.ordering import ordered
from toolfoundry.catalog.typescript_types import (
    IDENTIFIER,
    RESERVED,
    Aliases,
    SchemaRoot,
    TsType,
    TypeWriter,
    doc_comment,
    property_key,
    ts_string,
)
from toolfoundry.spec import ErrorKind, ToolSpec
from toolfoundry.spec.names import META_TOOL_NAMES, NAMESPACE_SEPARATOR

# Names the runtime's `tools` keeps for itself (sandbox/js/prelude/47-tools.js: `call`, and
# `then` so that `await tools` is the object): a tool of that name is reached only through
# tools.call.
RUNTIME_MEMBERS = ("call", "then")
TYPES_NAMESPACE = "ToolTypes"

HEADER = """\
// The `tools` global of toolfoundry's code mode, for run_js snippets and tool handlers.
// Generated from the tools' declarations by toolfoundry; do not edit.
//
//   const n = await tools.word_count({ text });                 // current active version
//   const m = await tools.call("word_count", { text }, { version: 2 });
//   try { ... } catch (e) { if (e instanceof ToolError && e.kind === "not_active") ... }
"""

PRELUDE = """\
/** Why a tool call failed: `ToolError.kind`. */
type ToolErrorKind =
{kinds}
  | (string & {{}});

/** What a failed tool call throws; catch it and branch on `kind`. */
declare class ToolError extends Error {{
  constructor(message: string, kind?: ToolErrorKind, tool?: string | null);
  /** Why the call failed. */
  readonly kind: ToolErrorKind;
  /** What went wrong, in words. */
  readonly message: string;
  /** The tool that was called. */
  readonly tool: string | null;
}}

/** The third argument of `tools.call`. */
interface ToolCallOptions {{
  /** An active version of the tool to call instead of its current one. */
  version?: number;
}}
"""

CALL = """\
  /**
   * Call a tool by name: its current active version, or the active `version` given.
   * Same call as `tools.NAME(args)`; resolves to the tool's result, or throws a ToolError.
   */
  call<N extends keyof ToolsByName>(
    name: N,
    args: Parameters<ToolsByName[N]>[0],
    options?: ToolCallOptions,
  ): ReturnType<ToolsByName[N]>;"""


def namespace_path(name: str) -> tuple[str, ...]:
    """The members ``tools`` reaches a tool by: ``("word_count",)``;
    ``("github", "create_issue")`` for a namespaced name."""
    return tuple(name.split(NAMESPACE_SEPARATOR))


def namespace_name(name: str) -> str:
    """The tool's namespace under ``ToolTypes``, one-to-one with tool names: ``-`` is ``$``
    (no tool name holds a ``$``), a reserved word gets a leading ``$``, a namespaced name is
    nested namespaces (``github.create_issue``)."""
    parts = [p.replace("-", "$") for p in namespace_path(name)]
    return ".".join("$" + p if p in RESERVED else p for p in parts)


@dataclass(frozen=True)
class ToolDeclaration:
    """One tool's part of the file.

    Attributes:
        name: the tool's full name.
        doc: its JSDoc paragraphs (description, then what the types could not say).
        method: the ``ToolsByName`` member, without JSDoc, unindented (may span lines).
        aliases: the ``declare namespace ToolTypes.<tool> { ... }`` block, or "".
    """

    name: str
    doc: tuple[str, ...]
    method: str
    aliases: str

    @property
    def signature(self) -> str:
        """What a search hit and ``show_tool`` carry: the member, the JSDoc of what the types
        could not say (not the description: it is beside), and the named types it uses."""
        notes = doc_comment(self.doc[1:])
        return "\n".join([*notes, self.method, *([self.aliases] if self.aliases else [])])


def declaration(spec: ToolSpec) -> ToolDeclaration:
    """The declaration of one tool (a pure function of its spec)."""
    namespace = namespace_name(spec.name)
    aliases = Aliases(qualifier=f"{TYPES_NAMESPACE}.{namespace}.")
    writer = TypeWriter(aliases)
    args = writer.render(spec.parameters, SchemaRoot(0, spec.parameters, "Arguments"), local=False)
    returns = spec.returns
    result = (
        TsType("unknown")
        if returns is None
        else writer.render(returns, SchemaRoot(1, returns, "Result"), local=False)
    )
    facts = []
    if args.notes:
        facts.append("Arguments: " + "; ".join(args.notes) + ".")
    if returns is not None:
        described = _described(returns)
        if described or result.notes:
            facts.append("Returns: " + "; ".join([*described, *result.notes]) + ".")
    key = property_key(spec.name)
    # tools.NAME() sends {}: the argument may be left out when nothing at the top is required
    optional = "" if spec.parameters.get("required") else "?"
    method = f"{key}(args{optional}: {args.text}): Promise<{result.text}>;"
    return ToolDeclaration(spec.name, (spec.description, *facts), method, _alias_block(aliases))


def _described(schema: object) -> list[str]:
    if isinstance(schema, dict):
        text = schema.get("description")
        if isinstance(text, str) and text.strip():
            return [text.strip().rstrip(".")]
    return []


def _alias_block(aliases: Aliases) -> str:
    if not aliases.entries:
        return ""
    lines = [f"declare namespace {aliases.qualifier.rstrip('.')} {{"]
    for name, body in aliases.entries.items():
        lines += doc_comment(body.notes, "  ")
        lines.append(f"  type {name} = {body.text};")
    return "\n".join([*lines, "}"])


def typescript_declarations(specs: Iterable[ToolSpec]) -> str:
    """The whole declaration file for ``specs`` (sorted by group, then name), less the
    meta-tools among them, which ``tools`` cannot call.

    Raises:
        ValueError: two specs share a name.
    """
    tools = [declaration(spec) for spec in ordered(specs) if spec.name not in META_TOOL_NAMES]
    kinds = "\n".join(f"  | {ts_string(kind.value)}" for kind in ErrorKind)
    count = f"{len(tools)} tool" + ("" if len(tools) == 1 else "s")
    out = [HEADER.rstrip("\n"), f"// {count}.", "", PRELUDE.format(kinds=kinds)]
    out.append("/** Every tool by its full name, as `tools.call` takes it. */")
    out.append("interface ToolsByName {")
    for tool in tools:
        out += doc_comment(tool.doc, "  ")
        out += ["  " + line if line else line for line in tool.method.split("\n")]
    out += ["}", "", *_tools_global([t.name for t in tools])]
    for tool in tools:
        if tool.aliases:
            out += ["", tool.aliases]
    return "\n".join(out) + "\n"


def _tools_global(names: Sequence[str]) -> list[str]:
    """``declare const tools``: ``ToolsByName`` less the runtime's members and namespaced
    names, the namespaces as nested objects, and ``call``."""
    nested = [n for n in names if len(namespace_path(n)) > 1]
    omitted = " | ".join(ts_string(n) for n in [*RUNTIME_MEMBERS, *nested])
    lines = [
        "/**",
        " * The registry's tools: `await tools.NAME(args)` calls NAME's current active version;",
        " * `await tools.call(name, args, { version })` any tool by name.",
        " */",
        f"declare const tools: Omit<ToolsByName, {omitted}> & {{",
    ]
    lines += _namespace_members(nested, depth=1)
    return [*lines, CALL, "};"]


def _namespace_members(names: Sequence[str], depth: int) -> list[str]:
    """Nested object types for namespaced names, each leaf typed as its ``ToolsByName`` entry."""
    groups: dict[str, list[str]] = {}
    for name in names:
        groups.setdefault(namespace_path(name)[depth - 1], []).append(name)
    pad = "  " * depth
    lines = []
    for head, members in groups.items():
        key = head if IDENTIFIER.match(head) else ts_string(head)
        leaves = [m for m in members if len(namespace_path(m)) == depth + 1]
        deeper = [m for m in members if len(namespace_path(m)) > depth + 1]
        lines.append(f"{pad}{key}: {{")
        for leaf in leaves:
            member = property_key(namespace_path(leaf)[-1])
            lines.append(f"{pad}  {member}: ToolsByName[{ts_string(leaf)}];")
        lines += _namespace_members(deeper, depth + 1)
        lines.append(f"{pad}}};")
    return lines
