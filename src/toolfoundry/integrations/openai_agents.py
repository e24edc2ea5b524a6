"""The foundry's tools as OpenAI Agents SDK ``FunctionTool`` s (``toolfoundry[openai-agents]``).

    from agents import Agent, Runner
    from toolfoundry.integrations.openai_agents import foundry_tools

    agent = Agent(name="builder", tools=foundry_tools(fd))
    result = Runner.run_sync(agent, "...")

Each tool keeps its own JSON Schema (``strict_json_schema=False``: the SDK's strict rewrite
would change it) and calls go through :meth:`Foundry.call`. A failure is returned the way the
SDK expects a tool error, as the tool's output text: JSON with the kind, message, problems and
step, so the model can repair its call.

Tools that change during a run: the SDK reads ``Agent.tools`` at every turn and lets it be
reassigned during a run, so after each call through one of these tools the running agent's
foundry tools are replaced by the registry's current set. A tool made by ``create_tool`` is
offered from the next turn of the same run. (One ``Agent`` object per concurrent run, as the
SDK requires for tools that change: ``agent.clone()``.)

Approval: ``create_tool`` of a draft the foundry's policy holds for a human has
``needs_approval``; the run stops with an interruption, ``state.approve(item)`` then
``Runner.run(agent, state)`` creates the tool and approves it in ``approved_by``'s name;
``state.reject(item)`` creates nothing. With ``approval=False`` such a version waits in
``pending_approval`` for the foundry's own review.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolfoundry.base.extras import requires_extra
from toolfoundry.base.json_gate import InvalidJson, decode
from toolfoundry.integrations.bridge import CREATE_TOOL, FoundryBridge, ToolAnswer
from toolfoundry.spec import DeclaredTool, ToolSpec

with requires_extra("openai-agents", "toolfoundry.integrations.openai_agents"):
    import anyio.to_thread
    from agents import FunctionTool, RunContextWrapper, Tool
    from agents.tool_context import ToolContext

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry

__all__ = ["foundry_tools"]


def foundry_tools(
    foundry: Foundry,
    *,
    tools: Sequence[DeclaredTool] = (),
    approval: bool = True,
    approved_by: str = "user",
) -> list[FunctionTool]:
    """The meta-tools and every active registry tool as FunctionTools, kept current in a run.

    Args:
        foundry: the foundry whose tools are offered and called.
        tools: more declared tools to offer (``@tool`` functions, workflows).
        approval: give risky ``create_tool`` calls ``needs_approval`` (SDK tool approval).
        approved_by: the name a version approved through the SDK is recorded under.

    Returns:
        The tools to pass as ``Agent(tools=...)`` (other tools may sit beside them).
    """
    return _Toolbox(FoundryBridge(foundry, tools), approval, approved_by).current()


class _Toolbox:
    """Builds FunctionTools for the bridge's specs, reusing one per unchanged spec."""

    def __init__(self, bridge: FoundryBridge, approval: bool, approved_by: str) -> None:
        self.bridge = bridge
        self.approval = approval
        self.approved_by = approved_by
        self._built: dict[ToolSpec, FunctionTool] = {}
        self._owned: set[int] = set()

    def current(self) -> list[FunctionTool]:
        """One FunctionTool per offered spec (the same object while a spec is unchanged)."""
        out = []
        for spec in self.bridge.specs():
            tool = self._built.get(spec)
            if tool is None:
                tool = self._built[spec] = self._function_tool(spec)
                self._owned.add(id(tool))
            out.append(tool)
        return out

    def _function_tool(self, spec: ToolSpec) -> FunctionTool:
        name = spec.name

        async def invoke(ctx: ToolContext[Any], raw: str) -> str:
            return await self._invoke(name, ctx, raw)

        needs_approval: Any = False
        if self.approval and name == CREATE_TOOL:

            async def needs_approval(
                _ctx: RunContextWrapper[Any], params: dict[str, Any], _call_id: str
            ) -> bool:
                return bool(self.bridge.approval_reasons(name, params))

        return FunctionTool(
            name=name,
            description=spec.description,
            params_json_schema=spec.parameters,
            on_invoke_tool=invoke,
            strict_json_schema=False,  # the tool's own schema, not the SDK's strict rewrite
            needs_approval=needs_approval,
        )

    async def _invoke(self, name: str, ctx: ToolContext[Any], raw: str) -> str:
        try:
            args: Any = decode(raw) if raw else {}  # the one gate, as for every client's input
        except InvalidJson:
            args = raw  # not JSON the gate takes: the foundry answers invalid_arguments
        # needs_approval held this call until a human approved it: record that approval
        approved = self.approval and bool(self.bridge.approval_reasons(name, args))
        answer = await anyio.to_thread.run_sync(
            lambda: self.bridge.call(
                name,
                args,
                call_id=ctx.tool_call_id,
                approved_by=self.approved_by if approved else None,
            )
        )
        if ctx.agent is not None:
            await anyio.to_thread.run_sync(self._refresh, ctx.agent)
        return _output(answer)

    def _refresh(self, agent: Any) -> None:
        """Put the registry's current tools in place of ours on the running agent."""
        tools: list[Tool] = list(agent.tools)
        fresh = self.current()
        kept = [t for t in tools if id(t) not in self._owned]
        at = next((i for i, t in enumerate(tools) if id(t) in self._owned), len(kept))
        at = min(at, len(kept))
        updated: list[Tool] = [*kept[:at], *fresh, *kept[at:]]
        if len(updated) != len(tools) or any(
            a is not b for a, b in zip(updated, tools, strict=True)
        ):
            agent.tools = updated  # the SDK reads Agent.tools again at the next turn


def _output(answer: ToolAnswer) -> str:
    return answer.error_text() if answer.is_error else answer.value_text()
