"""The foundry's own meta-tools, declared as typed Python functions.

Their descriptions are projected from these signatures and docstrings like any other tool's
(dogfooding: ``docs/SKILL.md`` is rendered from here and checked in CI). The MCP server and the
agent loop offer them next to the registry's active tools.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal, NotRequired

from pydantic import Field
from typing_extensions import TypedDict

from toolfoundry.declare import from_function
from toolfoundry.spec import DeclaredTool, ToolSpec

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry

# Version numbers are 32-bit integers in the registry; larger ones are argument errors.
MAX_VERSION = 2**31 - 1
META_TOOL_NAMES = ("create_tool", "search_tools", "tool_history", "rollback_tool", "run_js")


class TestCase(TypedDict):
    """One example the tool must satisfy before it can become active."""

    input: dict[str, Any]
    expected: NotRequired[Any]
    error: NotRequired[str]
    name: NotRequired[str]
    fixtures: NotRequired[list[Fixture]]


class Fixture(TypedDict):
    """What the host's fetch answers to one request while tests run (the network is cut)."""

    url: str
    method: NotRequired[str]
    status: NotRequired[int]
    headers: NotRequired[dict[str, str]]
    body: NotRequired[str]


class CapabilityRequest(TypedDict, total=False):
    """Capabilities beyond computation; any of them makes the tool wait for human approval."""

    network: list[str]
    credentials: list[str]
    storage: bool
    system: bool


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

    def create_tool(
        name: str,
        description: str,
        parameters: dict[str, Any],
        code: str,
        tests: list[TestCase],
        language: Literal["javascript", "python"] = "javascript",
        capabilities: CapabilityRequest | None = None,
        fixtures: list[Fixture] | None = None,
        changes_tests: list[str] | None = None,
    ) -> dict[str, Any]:
        """Create a new tool, or the next version of an existing one, from code and tests.

        The code is checked statically, its tests run in a sandbox with the network cut, and
        the capability policy decides: a pure tool becomes active at once; one asking for
        network, credentials, shared storage or system access waits for a human's approval.
        A new version must also pass the current version's tests, except those listed in
        ``changes_tests``. On refusal, read ``findings`` and ``test_results``, fix the code
        and call again.

        Args:
            name: tool name: a letter or '_', then letters, digits, '_' or '-' (max 64).
            description: what the tool does and when to use it, for other models.
            parameters: JSON Schema (type object) of the tool's arguments.
            code: an ES module exporting ``handler(args)`` (sync or async) that returns
                JSON; only fetch, localStorage, crypto and the bundled npm libraries exist.
            tests: examples the tool must pass: ``{"input": {...}, "expected": value}`` or
                ``{"input": {...}, "error": "substring of the error"}``.
            language: ``javascript`` (in-process WebAssembly sandbox) or ``python``.
            capabilities: what the tool needs beyond computation, e.g.
                ``{"network": ["api.example.com"]}``.
            fixtures: canned HTTP answers that fetch returns while the tests run.
            changes_tests: names of the current version's tests this version deliberately
                changes (they are not used as a regression gate).
        """
        draft: dict[str, Any] = {
            "name": name,
            "description": description,
            "parameters": parameters,
            "code": code,
            "tests": tests,
            "language": language,
        }
        if capabilities:
            draft["capabilities"] = capabilities
        if fixtures:
            draft["fixtures"] = fixtures
        if changes_tests:
            draft["changes_tests"] = changes_tests
        return current().create_tool(draft).to_dict()

    def search_tools(
        query: str, k: Annotated[int, Field(ge=1, le=100)] = 5
    ) -> list[dict[str, Any]]:
        """Find existing tools by what they do, best match first; look here before creating one.

        Args:
            query: words describing the need, e.g. "convert markdown to html".
            k: how many tools to return at most.
        """
        return [hit.to_dict() for hit in current().search(query, k)]

    def tool_history(name: str) -> list[dict[str, Any]]:
        """List every version of a tool with its status, author and creation time.

        Args:
            name: the tool's name.
        """
        return [version.summary() for version in current().history(name)]

    def rollback_tool(
        name: str, version: Annotated[int, Field(ge=1, le=MAX_VERSION)]
    ) -> dict[str, Any]:
        """Make an earlier version of a tool the current one (nothing is deleted).

        Args:
            name: the tool's name.
            version: the version number to restore; see tool_history.
        """
        return current().rollback(name, to=version, by="agent").summary()

    def run_js(code: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        """Run a one-off JavaScript ES module in the sandbox, without registering it.

        Use it to try an idea before turning it into a tool. The module exports
        ``handler(args)`` or a default value; it has no network and no storage.

        Args:
            code: the ES module source.
            args: the arguments passed to ``handler``.
        """
        from toolfoundry.sandbox import SandboxPolicy
        from toolfoundry.sandbox import run_js as sandbox_run_js

        limits = current().config.limits
        policy = SandboxPolicy(
            timeout_s=limits.timeout_s,
            memory_bytes=limits.memory_mib * 1024 * 1024,
            output_bytes=limits.output_bytes,
        )
        return sandbox_run_js(code, args or {}, policy).to_dict()

    # create_tool and rollback_tool change the registry although they need no capability.
    changes_registry = (create_tool, rollback_tool)
    return [
        from_function(fn, read_only=fn not in changes_registry)
        for fn in (create_tool, search_tools, tool_history, rollback_tool, run_js)
    ]


def builtin_specs() -> list[ToolSpec]:
    """The meta-tools' specs (unbound: no foundry is opened), for catalogues and name clashes."""
    return [tool.spec for tool in builtin_tools()]
