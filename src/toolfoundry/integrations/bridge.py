"""The framework-neutral half of every adapter: which tools a foundry offers, how one runs.

An adapter asks :class:`FoundryBridge` for the tools to offer (the meta-tools of
:func:`~toolfoundry.foundry.meta_tools.builtin_tools`, any declared tools it was given, then
every active registry tool, each with its own JSON Schema), runs a call with
:meth:`FoundryBridge.call` (registry tools through :meth:`Foundry.call`: validation, limits,
usage, audit) and turns the :class:`ToolAnswer` into what its framework expects: the value, or
the failure as that framework's tool error, carrying the kind and problems as JSON.

Approval: a framework with a human-in-the-loop mechanism asks
:meth:`FoundryBridge.approval_reasons` before running a call; a ``create_tool`` whose draft the
foundry's policy would hold for a human needs that approval. Once the human approved, the call
runs with ``approved_by`` and the pending version is approved in that name.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolfoundry.base.json_gate import encode
from toolfoundry.foundry import telemetry
from toolfoundry.foundry.call import model_payload, model_text
from toolfoundry.spec import (
    CallResult,
    Capabilities,
    DeclaredTool,
    ErrorKind,
    Problem,
    StepStatus,
    ToolSpec,
)

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry

CREATE_TOOL = "create_tool"


@dataclass(frozen=True)
class ToolAnswer:
    """One call's outcome, in the form every adapter hands to its framework.

    Attributes:
        result: the CallResult (value or error, logs, duration, details).
        payload: the JSON a model sees: ``value`` or ``error`` (kind, message, problems),
            ``step`` (status, blockers), ``logs``.
        is_error: whether the framework should report it as a tool error: a failed call, or
            a step blocked by something the model can fix (not ``awaiting_approval``).
    """

    result: CallResult
    payload: dict[str, Any]
    is_error: bool

    @property
    def value(self) -> Any:
        """What a successful call returns to the model (for a create, the create's result)."""
        return self.payload.get("value")

    @property
    def kind(self) -> str:
        """The error kind (``invalid_arguments``, ...) or the step's first blocker; '' if none."""
        if self.result.error is not None:
            return self.result.error.kind.value
        blockers = self.payload["step"].get("blockers") or [""]
        return str(blockers[0])

    def value_text(self) -> str:
        """A successful call's value as text, for frameworks whose tool outputs are strings
        (a string as it is; anything else as JSON, through the one encoder)."""
        value = self.value
        return value if isinstance(value, str) else encode(value, default=str, compact=False)

    def error_text(self) -> str:
        """The failure as JSON text, for frameworks whose tool errors are strings."""
        return model_text({"ok": False, **self.payload})


class FoundryBridge:
    """The tools of one foundry (plus declared ones), read fresh whenever asked."""

    def __init__(self, foundry: Foundry, tools: Sequence[DeclaredTool] = ()) -> None:
        from toolfoundry.foundry.meta_tools import builtin_tools

        self.foundry = foundry
        local: dict[str, DeclaredTool] = {}
        # builtin_tools is the one list of meta-tools: any added there is offered here too
        for tool in [*builtin_tools(foundry), *tools]:
            if tool.spec.name in local:
                raise ValueError(f"two offered tools are named {tool.spec.name!r}")
            local[tool.spec.name] = tool
        self.local = local

    def specs(self) -> list[ToolSpec]:
        """The meta-tools and declared tools, then every active registry tool (a registry tool
        named like a local one is hidden: the local one answers that name)."""
        registry = [s for s in self.foundry.active_specs() if s.name not in self.local]
        return [t.spec for t in self.local.values()] + registry

    def spec(self, name: str) -> ToolSpec | None:
        """The spec offered under ``name`` now, or None."""
        local = self.local.get(name)
        if local is not None:
            return local.spec
        return next((s for s in self.foundry.active_specs() if s.name == name), None)

    def approval_reasons(self, name: str, args: Any) -> tuple[str, ...]:
        """Why a human must approve this call before it runs; empty when no one needs to.

        Only ``create_tool`` of a draft asking for risky capabilities (as the foundry's own
        policy judges them) needs a human. A draft whose capabilities cannot be read needs
        none: the create refuses it with a located problem.
        """
        if name != CREATE_TOOL or not isinstance(args, Mapping):
            return ()
        try:
            capabilities = Capabilities.from_dict(args.get("capabilities") or None)
        except (ValueError, TypeError):
            return ()
        language = args.get("language") or "javascript"
        decision = self.foundry.config.policy.decide(capabilities, str(language))
        return decision.reasons if decision.needs_approval else ()

    def call(
        self,
        name: str,
        args: Any,
        *,
        call_id: str | None = None,
        approved_by: str | None = None,
    ) -> ToolAnswer:
        """Run one call: a local tool by its own ``call``, any other through ``Foundry.call``.

        Args:
            name: the tool's name.
            args: the arguments as the model sent them (validated by the tool's schema).
            call_id: the framework's id for this call (labels the trace span).
            approved_by: who approved this call in the framework's human-in-the-loop
                mechanism; a version ``create_tool`` leaves pending is approved in that name.
        """
        local = self.local.get(name)
        if local is None:
            result = self.foundry.call(name, args, call_id=call_id)
        else:
            instruments = telemetry.instruments()
            if instruments is None:
                result = _call_local(local, name, args)
            else:
                result = instruments.call(
                    name, lambda: _call_local(local, name, args), call_id=call_id
                )
        payload = model_payload(result)
        if name == CREATE_TOOL and approved_by and result.ok:
            payload = self._approve_created(payload, approved_by)
        step = payload["step"]
        blocked = step.get("status") == StepStatus.BLOCKED.value
        is_error = blocked and step.get("blockers") != ["awaiting_approval"]
        return ToolAnswer(result, payload, is_error)

    def _approve_created(self, payload: dict[str, Any], by: str) -> dict[str, Any]:
        value = payload.get("value")
        if not isinstance(value, dict) or value.get("status") != "pending_approval":
            return payload
        name, version = str(value["name"]), int(value["version"])
        decision = self.foundry.approve(name, version, by=by, reason="approved in the agent run")
        value = {
            **value,
            "status": decision.status or value["status"],
            "approval": {"action": "approve", "by": by},
            "step": decision.step.to_dict(),
        }
        return {**payload, "value": value, "step": value["step"]}


def _call_local(tool: DeclaredTool, name: str, args: Any) -> CallResult:
    if not isinstance(args, Mapping):
        message = f"the arguments of {name!r} must be a JSON object, got {type(args).__name__}"
        return CallResult.failure(
            ErrorKind.INVALID_ARGUMENTS, message, problems=[Problem("$", message)]
        )
    return tool.call(args)
