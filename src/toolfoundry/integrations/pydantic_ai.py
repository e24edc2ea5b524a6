"""The foundry as a Pydantic AI toolset (``pip install toolfoundry[pydantic-ai]``).

    from pydantic_ai import Agent
    from toolfoundry.integrations.pydantic_ai import FoundryToolset

    agent = Agent("openai:gpt-4o-mini", toolsets=[FoundryToolset(fd)])

The tool list is read from the registry at every run step, so a tool the model makes with
``create_tool`` is offered (and callable) at the next step of the same run. Each tool keeps its
own JSON Schema; calls go through :meth:`Foundry.call`. A failed call is a Pydantic AI tool
error the model sees as JSON (kind, message, problems, step): ``invalid_arguments`` as a
:class:`~pydantic_ai.ModelRetry` (correct the arguments and call again), every other kind as a
:class:`~pydantic_ai.ToolFailed` (adapt; no retry budget spent).

A ``create_tool`` whose draft needs a human's approval under the foundry's policy is deferred
with Pydantic AI's human-in-the-loop mechanism (``ApprovalRequired``): the run ends with
``DeferredToolRequests``; resume it with ``DeferredToolResults(approvals={id: True})`` and the
tool is created and approved in the name of ``metadata={id: {"approved_by": "alice"}}`` (or the
toolset's ``approved_by``). With ``approval=False`` such versions wait in ``pending_approval``
for the foundry's own review (``toolfoundry approvals``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from toolfoundry.base.extras import requires_extra
from toolfoundry.integrations.bridge import FoundryBridge, ToolAnswer
from toolfoundry.spec import DeclaredTool, ErrorKind

with requires_extra("pydantic-ai", "toolfoundry.integrations.pydantic_ai"):
    import anyio.to_thread
    from pydantic_ai import ApprovalRequired, ModelRetry, RunContext, ToolDefinition, ToolFailed
    from pydantic_ai.toolsets import AbstractToolset, ToolsetTool
    from pydantic_core import SchemaValidator, core_schema

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry

__all__ = ["FoundryToolset"]

# Arguments are validated once, by the foundry against the tool's own JSON Schema.
_ANY_ARGUMENTS = SchemaValidator(core_schema.any_schema())


class FoundryToolset(AbstractToolset[Any]):
    """The meta-tools and every active registry tool, re-read at each run step.

    Args:
        foundry: the foundry whose tools are offered and called.
        tools: more declared tools to offer (``@tool`` functions, workflows).
        id: the toolset's id (unique among one agent's toolsets).
        max_retries: how often the model may retry a tool after ``invalid_arguments``.
        approval: defer risky ``create_tool`` calls for a human (Pydantic AI approval).
        approved_by: the name an approval is recorded under when the resumed run's
            ``DeferredToolResults.metadata`` gives no ``approved_by``.
    """

    def __init__(
        self,
        foundry: Foundry,
        *,
        tools: Sequence[DeclaredTool] = (),
        id: str = "toolfoundry",
        max_retries: int = 2,
        approval: bool = True,
        approved_by: str = "user",
    ) -> None:
        self.bridge = FoundryBridge(foundry, tools)
        self._id = id
        self.max_retries = max_retries
        self.approval = approval
        self.approved_by = approved_by

    @property
    def id(self) -> str | None:
        return self._id

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        """The tools offered at this step (the registry is read again on every step)."""
        specs = await anyio.to_thread.run_sync(self.bridge.specs)
        return {
            spec.name: ToolsetTool(
                toolset=self,
                tool_def=ToolDefinition(
                    name=spec.name,
                    description=spec.description,
                    parameters_json_schema=spec.parameters,
                ),
                max_retries=self.max_retries,
                args_validator=_ANY_ARGUMENTS,
            )
            for spec in specs
        }

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        """Run one call through the foundry; failures become Pydantic AI tool errors.

        Raises:
            ApprovalRequired: a risky ``create_tool`` not yet approved in this run.
            ModelRetry: the arguments broke the tool's schema.
            ToolFailed: any other failure (kind, message, problems and step as JSON).
        """
        approved_by = None
        if self.approval and self.bridge.approval_reasons(name, tool_args):
            if not ctx.tool_call_approved:
                reasons = list(self.bridge.approval_reasons(name, tool_args))
                raise ApprovalRequired(metadata={"reasons": reasons})
            metadata = ctx.tool_call_metadata
            given = metadata.get("approved_by") if isinstance(metadata, dict) else None
            approved_by = str(given) if given else self.approved_by
        answer = await anyio.to_thread.run_sync(
            lambda: self.bridge.call(
                name, tool_args, call_id=ctx.tool_call_id, approved_by=approved_by
            )
        )
        return _returned(answer)


def _returned(answer: ToolAnswer) -> Any:
    if not answer.is_error:
        return answer.value
    if answer.kind == ErrorKind.INVALID_ARGUMENTS.value:
        raise ModelRetry(answer.error_text())
    raise ToolFailed(answer.error_text())
