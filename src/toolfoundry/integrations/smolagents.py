"""The foundry's tools as smolagents ``Tool`` s (``pip install toolfoundry[smolagents]``).

    from smolagents import ToolCallingAgent
    from toolfoundry.integrations.smolagents import FoundryTools

    box = FoundryTools(fd)
    agent = ToolCallingAgent(tools=box.tools(), model=model, step_callbacks=[box.refresh])

:meth:`FoundryTools.refresh` is a step callback (smolagents' hook after each step): it puts
the registry's current tools in the running agent's ``tools``, so a tool made by
``create_tool`` is offered from the next step of the same run. :func:`foundry_tools` is the
one-off list.

smolagents describes a tool by ``inputs`` (one entry per argument) rather than one JSON
Schema; each entry is the argument's own schema from the tool's parameters, given the
``description`` smolagents requires, ``nullable`` for an optional argument and type ``any``
when the schema names no single JSON type. Calls go through :meth:`Foundry.call`, which
validates against the whole schema; smolagents first checks the top-level types itself (a
wrong type is its own ``AgentToolCallError`` and never reaches the foundry). A failed call
raises :class:`FoundryToolError`, which smolagents reports to the model as the step's tool
error, carrying the JSON (kind, message, problems, step).

smolagents has no human-in-the-loop step for tool calls, so a draft that needs approval is
left to the foundry's own review: the version waits in ``pending_approval`` until someone
runs ``toolfoundry approvals approve``.
"""

from __future__ import annotations

import keyword
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolfoundry.base.extras import requires_extra
from toolfoundry.integrations.bridge import FoundryBridge
from toolfoundry.spec import DeclaredTool, ToolSpec

with requires_extra("smolagents", "toolfoundry.integrations.smolagents"):
    from smolagents import Tool  # type: ignore[import-untyped]
    from smolagents.tools import AUTHORIZED_TYPES  # type: ignore[import-untyped]

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry

__all__ = ["FoundrySmolTool", "FoundryToolError", "FoundryTools", "foundry_tools"]

logger = logging.getLogger(__name__)


class FoundryToolError(Exception):
    """A failed foundry call; its message is the JSON the model reads (kind, problems, step)."""


class FoundrySmolTool(Tool):  # type: ignore[misc]
    """One foundry tool as a smolagents Tool (its ``forward`` takes the arguments as given)."""

    skip_forward_signature_validation = True  # forward(**arguments) serves every schema

    def __init__(self, bridge: FoundryBridge, spec: ToolSpec, name: str) -> None:
        self.name = name
        self.description = spec.description
        self.inputs, self._optional = _inputs(spec.parameters)
        self.output_type = "any"
        self.foundry_name = spec.name
        self._bridge = bridge
        super().__init__()

    def forward(self, **arguments: Any) -> Any:
        """Call the tool through the foundry.

        Raises:
            FoundryToolError: the call failed (the message is the failure as JSON).
        """
        # smolagents marks an optional argument nullable and may send null for "absent"
        args = {k: v for k, v in arguments.items() if not (v is None and k in self._optional)}
        answer = self._bridge.call(self.foundry_name, args)
        if answer.is_error:
            raise FoundryToolError(answer.error_text())
        return answer.value


class FoundryTools:
    """The meta-tools and every active registry tool as smolagents Tools, kept current.

    Args:
        foundry: the foundry whose tools are offered and called.
        tools: more declared tools to offer (``@tool`` functions, workflows).
    """

    def __init__(self, foundry: Foundry, *, tools: Sequence[DeclaredTool] = ()) -> None:
        self.bridge = FoundryBridge(foundry, tools)
        self._built: dict[ToolSpec, FoundrySmolTool] = {}

    def tools(self) -> list[FoundrySmolTool]:
        """One Tool per offered spec (the same object while a spec is unchanged)."""
        out: list[FoundrySmolTool] = []
        names: set[str] = set()
        for spec in self.bridge.specs():
            name = _python_name(spec.name)
            if name in names:
                logger.warning("tool %r is not offered: %r already has its name", spec.name, name)
                continue
            names.add(name)
            tool = self._built.get(spec)
            if tool is None:
                tool = self._built[spec] = FoundrySmolTool(self.bridge, spec, name)
            out.append(tool)
        return out

    def refresh(self, _step: Any, agent: Any) -> None:
        """A smolagents step callback: the agent's foundry tools become the current set."""
        current = {tool.name: tool for tool in self.tools()}
        for name, tool in list(agent.tools.items()):
            if isinstance(tool, FoundrySmolTool) and name not in current:
                del agent.tools[name]
        for name, tool in current.items():
            held = agent.tools.get(name)
            if held is None or isinstance(held, FoundrySmolTool):
                agent.tools[name] = tool


def foundry_tools(foundry: Foundry, *, tools: Sequence[DeclaredTool] = ()) -> list[FoundrySmolTool]:
    """The foundry's tools as smolagents Tools, once (see :class:`FoundryTools` to keep them
    current during a run).

    Args:
        foundry: the foundry whose tools are offered and called.
        tools: more declared tools to offer.
    """
    return FoundryTools(foundry, tools=tools).tools()


def _python_name(name: str) -> str:
    """smolagents wants tool names that are Python identifiers; foundry names may hold '-'."""
    python = name.replace("-", "_")
    return python + "_" if keyword.iskeyword(python) else python


def _inputs(parameters: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """smolagents ``inputs`` from a parameters schema, and the optional arguments' names."""
    required = set(parameters.get("required") or ())
    inputs: dict[str, dict[str, Any]] = {}
    optional: set[str] = set()
    for name, schema in (parameters.get("properties") or {}).items():
        entry = dict(schema) if isinstance(schema, dict) else {}
        kind = entry.get("type")
        known = (isinstance(kind, str) and kind in AUTHORIZED_TYPES) or (
            isinstance(kind, list) and kind and all(k in AUTHORIZED_TYPES for k in kind)
        )
        if not known:
            entry["type"] = "any"
        if not isinstance(entry.get("description"), str):
            entry["description"] = name
        if name not in required:
            entry["nullable"] = True
            if not _allows_null(schema):
                optional.add(name)
        inputs[name] = entry
    return inputs, optional


def _allows_null(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    return kind == "null" or (isinstance(kind, list) and "null" in kind)
