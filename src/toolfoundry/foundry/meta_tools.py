"""The foundry's own meta-tools, declared as typed Python functions.

Their descriptions are projected from these signatures and docstrings like any other tool's
(dogfooding: ``docs/SKILL.md`` is rendered from here and checked in CI). The MCP server and the
agent loop offer them next to the registry's active tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from toolfoundry.declare import from_function
from toolfoundry.forge.draft_json import draft_signature
from toolfoundry.forge.policy import CapabilityPolicy
from toolfoundry.foundry.create_tool_text import create_tool_description
from toolfoundry.foundry.version_changes import version_changes
from toolfoundry.registry import AGENT_ACTOR, RegistryError
from toolfoundry.spec import CallError, DeclaredTool, ErrorKind, Problem, ToolCallFailed, ToolSpec
from toolfoundry.spec.names import META_TOOL_NAMES, NAME_PATTERN, QUALIFIED_NAME_PATTERN

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry

# Version numbers are 32-bit integers in the registry; larger ones are argument errors.
MAX_VERSION = 2**31 - 1
# A registered tool's name: anything else (a lone surrogate, a path) is an argument error.
ToolName = Annotated[str, Field(pattern=NAME_PATTERN)]
# a tool that may be an upstream server's too (``UPSTREAM.TOOL``)
AnyToolName = Annotated[
    str, Field(pattern=f"{NAME_PATTERN}|{QUALIFIED_NAME_PATTERN}", max_length=64)
]


def builtin_tools(foundry: Foundry | Callable[[], Foundry] | None = None) -> list[DeclaredTool]:
    """The meta-tools, bound to a foundry (opened lazily on first call when not given).

    Args:
        foundry: the foundry the tools act on, or a factory for it; by default
            ``Foundry.open()`` on the first call that needs it.
    """
    holder: list[Foundry] = []

    def current() -> Foundry:
        if not holder:
            if foundry is None:
                from toolfoundry.foundry import Foundry

                holder.append(Foundry.open())
            elif callable(foundry) and not hasattr(foundry, "create_tool"):
                holder.append(foundry())
            else:
                holder.append(foundry)  # type: ignore[arg-type]
        return holder[0]

    def create_tool(**draft: Any) -> dict[str, Any]:
        """Create a new tool, or the next version of an existing one, from code and tests.

        The code is checked statically, its tests run in a sandbox with the network cut, and
        the capability policy decides: a pure tool becomes active at once; one asking for
        network, credentials, shared storage or system access waits for a human's approval.
        A new version must also pass every earlier version's tests (named ``v3:name`` after
        the version that added them), except those it retires in ``changes_tests`` with a
        reason. An identical resubmission creates nothing (``unchanged: true``). On refusal,
        read ``findings`` and ``test_results``, fix the code and call again.
        """
        # only the fields the caller sent: the forge applies the declared defaults
        result = current().create_tool(draft, by=AGENT_ACTOR)
        from toolfoundry.forge.testrun import unavailable_error  # loaded by the create path

        unavailable = unavailable_error(result.step)
        if unavailable is not None:  # no verdict on the code: an error of its own kind
            raise ToolCallFailed(unavailable)
        return dict(result.to_dict())

    def search_tools(
        query: str, k: Annotated[int, Field(ge=1, le=100)] = 5
    ) -> list[dict[str, Any]]:
        """Find existing tools by what they do, best match first; look here before creating one.

        Each hit has a ``strength``: ``strong`` when the tool shares enough of the need, in
        words or meaning; ``weak`` when it is only the closest there is (``matched``: the
        query's words it has): read it, or show_tool, before relying on it, and create the
        tool when none fits. Strong hits come first; an empty list means no tool shares a
        word or a meaning with the need. The first hit carries its ``parameters`` (JSON
        Schema): call it with them. Each hit's ``signature`` types ``tools.NAME(args)`` for
        run_js. A hit with ``upstream`` is another MCP server's tool, ``UPSTREAM.TOOL`` (in
        run_js ``tools.UPSTREAM.TOOL(args)``, or call_tool); its ``standing`` says whether it
        runs now or waits for a person's approval.

        Args:
            query: words describing the need, e.g. "convert markdown to html".
            k: how many tools to return at most.
        """
        foundry = current()
        hits = foundry.search(query, k)
        signed = foundry.signatures([hit.name for hit in hits])
        found = [{**hit.to_dict(), "signature": signed.get(hit.name)} for hit in hits]
        if foundry.upstreams is None:
            return found
        from toolfoundry.foundry.upstream_search import merged_hits, upstream_hits

        return merged_hits(found, upstream_hits(query, foundry.upstream_tools(), k), k)

    def tool_history(name: str) -> list[dict[str, Any]]:
        """List a tool's versions: status, author, creation time, and ``changes`` from the
        version each was made from (which of code, description, parameters, returns,
        capabilities differ; tests added or retired).

        Args:
            name: the tool's name.
        """
        history = current().history(name)
        changed = version_changes(history)
        return [{**v.summary(), "changes": changed[v.version].to_dict()} for v in history]

    def rollback_tool(
        name: str, version: Annotated[int, Field(ge=1, le=MAX_VERSION)]
    ) -> dict[str, Any]:
        """Make an earlier version of a tool the current one (nothing is deleted).

        Args:
            name: the tool's name.
            version: the version number to restore; see tool_history.
        """
        return current().rollback(name, to=version, by=AGENT_ACTOR).summary()

    def run_js(code: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run a one-off JavaScript ES module in the sandbox, where ``tools`` calls your tools.

        The module exports ``handler(args)`` or a default value; it cannot fetch or store by
        itself. ``await tools.NAME(args)`` runs NAME's active version with what it was
        approved for (network, storage); ``tools["my-tool"](args)`` for a name with ``-``;
        ``tools.call(name, args, { version })`` any active version. Make many calls in one run
        and return only what you need. A failed call throws a catchable ``ToolError``
        (``kind``: ``not_found``, ``not_active``, ``invalid_arguments``, ``timeout``...;
        ``message``; ``tool``). Types: search_tools hits' ``signature``, or the resource
        ``toolfoundry://types/tools.d.ts``. The answer has ``value``, ``logs`` and ``run_id``:
        create_tool with ``from_run`` keeps a working run as a tool.

        Args:
            code: the ES module source.
            args: the arguments passed to ``handler``.
        """
        # a tool call's own limits; `tools` reaches the registry; the run is kept (run_id)
        ran = current().run_js(code, args or {}, by=AGENT_ACTOR)
        if ran.error is not None:  # a failed run is a failed call (MCP: isError), logs kept
            raise ToolCallFailed(ran.error, ran.logs)
        return {**ran.to_dict(), "run_id": ran.details["run_id"]}

    def show_tool(
        name: AnyToolName, version: Annotated[int, Field(ge=1, le=MAX_VERSION)] | None = None
    ) -> dict[str, Any]:
        """Read a tool before improving it: description, parameters, code, capabilities, status,
        and its TypeScript ``signature`` as ``tools.NAME`` in run_js.

        Also the test suite that gated the version (earlier versions' tests as ``v3:name``,
        then its own) with inputs, expected values and fixtures; the tests it retired and
        why; its calls and last error. A next version must pass that suite, except what it
        retires in ``changes_tests``. An upstream server's tool (``UPSTREAM.TOOL``): its
        description, parameters, annotations, signature, policy and ``standing`` (whether
        it runs now).

        Args:
            name: the tool's name.
            version: which version; the current one when left out (see tool_history).
        """
        if "." in name:
            entry = current().upstream_tool(name)
            if entry is None:
                message = f"no upstream server lists a tool {name!r} now"
                raise ToolCallFailed(CallError(ErrorKind.NOT_FOUND, message))
            from toolfoundry.catalog.typescript import declaration

            return {**entry.to_dict(), "signature": declaration(entry.tool.spec()).signature}
        try:
            return current().show_tool(name, version)
        except RegistryError as exc:
            raise ToolCallFailed(CallError(ErrorKind.NOT_FOUND, exc.message)) from None

    def call_tool(name: AnyToolName, arguments: dict[str, Any]) -> Any:
        """Call any active tool by name, for a tool created after your tool list was read.

        The same call as by the tool's own name: arguments validated against its parameters,
        run under its own approved capabilities (network, storage) and limits, recorded. An
        upstream server's tool is ``UPSTREAM.TOOL``. Meta-tools are called directly, never
        through call_tool.

        Args:
            name: the tool's name, e.g. one create_tool just made.
            arguments: the tool's arguments, as its parameters schema describes them.
        """
        if name in META_TOOL_NAMES:
            message = f"{name} is a meta-tool: call it directly, not through call_tool"
            problem = Problem("$.name", message)
            raise ToolCallFailed(CallError(ErrorKind.INVALID_ARGUMENTS, message, (problem,)))
        result = current().call(name, arguments)
        if result.error is not None:
            raise ToolCallFailed(result.error, result.logs)
        return result.value

    # Its parameters are the draft's fields, each with the type, description and default of the
    # one declaration (toolfoundry.forge.draft_json), as the HTTP API's OpenAPI ``Draft`` has.
    create_tool.__signature__ = draft_signature()  # type: ignore[attr-defined]
    create_tool.__annotations__ = {
        **{p.name: p.annotation for p in draft_signature().parameters.values()},
        "return": dict[str, Any],
    }

    # create_tool and rollback_tool change the registry although they need no capability;
    # call_tool, and run_js through its `tools`, do whatever the tools they call do.
    changes_registry = (create_tool, rollback_tool)
    calls_other_tools = (call_tool, run_js)
    declared = {
        fn.__name__: fn
        for fn in (
            create_tool,
            search_tools,
            tool_history,
            rollback_tool,
            run_js,
            show_tool,
            call_tool,
        )
    }
    # create_tool's description ends with what the sandbox offers, read from its manifest
    described = {"create_tool": create_tool_description(create_tool, _python_tier(foundry))}
    return [
        from_function(
            declared[name],
            read_only=declared[name] not in changes_registry + calls_other_tools,
            calls_tools=declared[name] in calls_other_tools,
            description=described.get(name),
        )
        for name in META_TOOL_NAMES  # the one list of their names, in the order clients see
    ]


def _python_tier(foundry: Foundry | Callable[[], Foundry] | None) -> CapabilityPolicy | None:
    """The policy Python tools are made under, when the served foundry has the Python tier
    (bubblewrap found; the jail's own probe runs with the first Python draft), else None: an
    unbound catalogue (docs/catalog.json) describes the JavaScript sandbox only."""
    from toolfoundry.foundry import Foundry

    if not isinstance(foundry, Foundry):
        return None
    from toolfoundry.sandbox.process import find_bwrap

    return foundry.config.policy if find_bwrap() is not None else None


def builtin_specs() -> list[ToolSpec]:
    """The meta-tools' specs (unbound: no foundry is opened), for catalogues and name clashes."""
    return [tool.spec for tool in builtin_tools()]
