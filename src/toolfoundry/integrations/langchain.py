"""The foundry's tools as LangChain ``StructuredTool`` s, for LangChain and LangGraph agents
(``pip install toolfoundry[langchain]``).

    from langchain.agents import create_agent
    from toolfoundry.integrations.langchain import FoundryMiddleware

    agent = create_agent(model, middleware=[FoundryMiddleware(fd)], checkpointer=saver)

:func:`foundry_tools` gives the current tools (for ``create_agent(tools=...)``, LangGraph's
``ToolNode`` or ``model.bind_tools``); :class:`FoundryMiddleware` keeps them current during a
run: before each model call it offers the registry's current set, and it runs a tool made
by ``create_tool`` in the same run (LangChain's middleware hooks for dynamic tools).

Each tool's ``args_schema`` is the tool's own JSON Schema and calls go through
:meth:`Foundry.call` (LangChain does not validate a JSON Schema ``args_schema``: the foundry
does, once). A failure is a :class:`~langchain_core.tools.ToolException`, which LangChain turns
into a ``ToolMessage`` with ``status="error"`` holding the JSON (kind, message, problems, step).

Approval: inside a LangGraph run (a checkpointer is needed), ``create_tool`` of a draft the
foundry's policy holds for a human calls LangGraph's ``interrupt`` with the draft and the
reasons; resume with ``Command(resume={"type": "approve", "by": "alice"})`` (or ``True``) to
create and approve it, ``{"type": "reject", "message": "..."}`` (or ``False``) to create
nothing. Outside a graph, or with ``approval=False``, the version waits in
``pending_approval`` for the foundry's own review.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from toolfoundry.base.extras import requires_extra
from toolfoundry.integrations.bridge import CREATE_TOOL, FoundryBridge, ToolAnswer
from toolfoundry.spec import DeclaredTool, ToolSpec

with requires_extra("langchain", "toolfoundry.integrations.langchain"):
    import anyio.to_thread
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ToolCallRequest
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import BaseTool, StructuredTool, ToolException
    from langgraph.runtime import get_runtime
    from langgraph.types import interrupt

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry

__all__ = ["FoundryMiddleware", "FoundryTool", "foundry_tools"]


def foundry_tools(
    foundry: Foundry,
    *,
    tools: Sequence[DeclaredTool] = (),
    approval: bool = True,
    approved_by: str = "user",
) -> list[FoundryTool]:
    """The meta-tools and every active registry tool, as StructuredTools (a snapshot).

    Args:
        foundry: the foundry whose tools are offered and called.
        tools: more declared tools to offer (``@tool`` functions, workflows).
        approval: interrupt a LangGraph run for risky ``create_tool`` calls.
        approved_by: the name an approval is recorded under when the resume value has none.
    """
    return _Toolbox(FoundryBridge(foundry, tools), approval, approved_by).current()


class FoundryTool(StructuredTool):
    """A StructuredTool that hands its call's id to the foundry (for the trace span)."""

    def _to_args_and_kwargs(
        self, tool_input: str | dict[str, Any], tool_call_id: str | None
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        # The arguments go to the foundry whole, as the model sent them, with the call's id.
        parsed = self._parse_input(tool_input, tool_call_id)
        return (), {"arguments": parsed, "call_id": tool_call_id}


class _Toolbox:
    """Builds FoundryTools for the bridge's specs, one per unchanged spec."""

    def __init__(self, bridge: FoundryBridge, approval: bool, approved_by: str) -> None:
        self.bridge = bridge
        self.approval = approval
        self.approved_by = approved_by
        self._built: dict[ToolSpec, FoundryTool] = {}

    def current(self) -> list[FoundryTool]:
        out = []
        for spec in self.bridge.specs():
            tool = self._built.get(spec)
            if tool is None:
                tool = self._built[spec] = self._tool(spec)
            out.append(tool)
        return out

    def find(self, name: str) -> FoundryTool | None:
        """The current tool named ``name`` (the registry is read again)."""
        return next((t for t in self.current() if t.name == name), None)

    def _tool(self, spec: ToolSpec) -> FoundryTool:
        name = spec.name

        def run(arguments: Any, call_id: str | None) -> Any:
            return self._run(name, arguments, call_id)

        async def arun(arguments: Any, call_id: str | None) -> Any:
            return await anyio.to_thread.run_sync(self._run, name, arguments, call_id)

        return FoundryTool(
            name=name,
            description=spec.description,
            args_schema=spec.parameters,
            func=run,
            coroutine=arun,
            handle_tool_error=True,  # a ToolException becomes a ToolMessage, status "error"
        )

    def _run(self, name: str, arguments: Any, call_id: str | None) -> Any:
        approved_by = None
        if self.approval and _can_interrupt():
            reasons = self.bridge.approval_reasons(name, arguments)
            if reasons:
                approved_by = self._ask(arguments, reasons)
        answer = self.bridge.call(name, arguments, call_id=call_id, approved_by=approved_by)
        return _returned(answer)

    def _ask(self, arguments: Mapping[str, Any], reasons: tuple[str, ...]) -> str:
        """Pause the graph for a human (LangGraph ``interrupt``); the name they approved in.

        On resume LangGraph runs the tool again from the start and ``interrupt`` returns the
        resume value, so nothing is created before the human has decided.
        """
        decision = interrupt(
            {
                "action": CREATE_TOOL,
                "name": arguments.get("name"),
                "capabilities": arguments.get("capabilities"),
                "code": arguments.get("code"),
                "reasons": list(reasons),
            }
        )
        if isinstance(decision, Mapping):
            if decision.get("type") == "approve":
                return str(decision.get("by") or self.approved_by)
            message = decision.get("message") or "a human rejected this tool"
            raise ToolException(json.dumps({"ok": False, "rejected": str(message)}))
        if decision is True:
            return self.approved_by
        raise ToolException(json.dumps({"ok": False, "rejected": "a human rejected this tool"}))


def _can_interrupt() -> bool:
    """Whether this call runs in a LangGraph run that can pause: one with a checkpointer
    (LangGraph gives a thread id exactly then)."""
    try:
        runtime = get_runtime()
    except RuntimeError:  # not inside a runnable at all
        return False
    info = getattr(runtime, "execution_info", None)
    return info is not None and info.thread_id is not None


def _returned(answer: ToolAnswer) -> Any:
    if answer.is_error:
        raise ToolException(answer.error_text())
    return answer.value_text()


class FoundryMiddleware(AgentMiddleware):
    """Keeps a ``create_agent`` agent's foundry tools current for every model call.

    Args:
        foundry: the foundry whose tools are offered and called.
        tools: more declared tools to offer (``@tool`` functions, workflows).
        approval: interrupt the run for risky ``create_tool`` calls (needs a checkpointer).
        approved_by: the name an approval is recorded under when the resume value has none.
    """

    def __init__(
        self,
        foundry: Foundry,
        *,
        tools: Sequence[DeclaredTool] = (),
        approval: bool = True,
        approved_by: str = "user",
    ) -> None:
        super().__init__()
        self._toolbox = _Toolbox(FoundryBridge(foundry, tools), approval, approved_by)
        # registered when the agent is built; the rest arrive through the hooks below
        self.tools: Sequence[BaseTool] = self._toolbox.current()

    def _offer(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        fresh = self._toolbox.current()
        names = {t.name for t in fresh}
        others = [t for t in request.tools if _tool_name(t) not in names]
        return request.override(tools=[*others, *fresh])

    def _resolve(self, request: ToolCallRequest) -> ToolCallRequest:
        if request.tool is not None:
            return request
        tool = self._toolbox.find(request.tool_call["name"])
        return request if tool is None else request.override(tool=tool)

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], Any]
    ) -> Any:
        """Offer the registry's current tools at this model call."""
        return handler(self._offer(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[Any]],
    ) -> Any:
        """Offer the registry's current tools at this model call."""
        offered = await anyio.to_thread.run_sync(self._offer, request)
        return await handler(offered)

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]
    ) -> ToolMessage | Any:
        """Run a foundry tool the agent was not built with (made during this run)."""
        return handler(self._resolve(request))

    async def awrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Awaitable[Any]]
    ) -> ToolMessage | Any:
        """Run a foundry tool the agent was not built with (made during this run)."""
        resolved = await anyio.to_thread.run_sync(self._resolve, request)
        return await handler(resolved)


def _tool_name(tool: BaseTool | dict[str, Any]) -> str | None:
    if isinstance(tool, BaseTool):
        return tool.name
    function = tool.get("function")
    name = function.get("name") if isinstance(function, Mapping) else tool.get("name")
    return name if isinstance(name, str) else None
