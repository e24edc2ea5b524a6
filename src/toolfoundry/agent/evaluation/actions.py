"""The next-action tools a model answers with, so scoring compares structure, not prose.

Each action is a typed Python function declared with :func:`toolfoundry.declare.from_function`:
its ToolSpec is what the model is offered, and its validator checks the model's arguments.
The descriptions say what an action does, never which step status it is meant for: that
judgement is what the evaluation measures.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolfoundry.declare.function import FunctionTool, from_function
from toolfoundry.spec import ToolSpec


def gather_input(blocker: str, via: str | None = None) -> dict[str, Any]:
    """Go back and produce the missing input that a step names, before that step runs again.

    Args:
        blocker: the missing input being gathered, exactly as the workflow reported it.
        via: the catalog tool to gather it with, if one fits.
    """
    return {"blocker": blocker, "via": via}


def leave_step(step: str, reason: str = "") -> dict[str, Any]:
    """Leave a step as it is and carry on without it; nothing will be done about it.

    Args:
        step: the step's name in the workflow response.
        reason: why it can be left alone.
    """
    return {"step": step, "reason": reason}


def route_around(step: str, via: str) -> dict[str, Any]:
    """Get what a step would have produced another way, with another tool of the catalog.

    Args:
        step: the step's name in the workflow response.
        via: the catalog tool to use instead.
    """
    return {"step": step, "via": via}


def request_session(dependency: str) -> dict[str, Any]:
    """Ask the operator for a new session or credentials for a dependency, then come back.

    Args:
        dependency: the session, account or service that is needed.
    """
    return {"dependency": dependency}


def retry_step(step: str) -> dict[str, Any]:
    """Run a step again, unchanged, now.

    Args:
        step: the step's name in the workflow response.
    """
    return {"step": step}


def widen_query(step: str, change: str) -> dict[str, Any]:
    """Run a step again with a broader query, looser filters or more sources.

    Args:
        step: the step's name in the workflow response.
        change: what to broaden, e.g. "search the last 90 days instead of 7".
    """
    return {"step": step, "change": change}


def stop(reason: str) -> dict[str, Any]:
    """Stop here and report the outcome to the user.

    Args:
        reason: what to tell the user.
    """
    return {"reason": reason}


ACTIONS: dict[str, FunctionTool[..., dict[str, Any]]] = {
    fn.__name__: from_function(fn)
    for fn in (
        gather_input,
        leave_step,
        route_around,
        request_session,
        retry_step,
        widen_query,
        stop,
    )
}


def action_specs() -> list[ToolSpec]:
    """The next-action tools offered to the model, in a fixed order."""
    return [action.spec for action in ACTIONS.values()]


def action_parameters(name: str) -> tuple[str, ...]:
    """The parameter names of one action (KeyError for an unknown action)."""
    return tuple(p.name for p in ACTIONS[name].spec.params)


def validate_action(name: str, arguments: Mapping[str, Any] | None) -> str | None:
    """None when ``name(arguments)`` is a well-formed action call, else why it is not."""
    action = ACTIONS.get(name)
    if action is None:
        return f"unknown action {name!r}; the actions are {sorted(ACTIONS)}"
    if arguments is None:
        return "the arguments are not a JSON object"
    result = action.call(arguments)
    return None if result.error is None else result.error.message
