"""The ``describe`` JSON: groups -> commands -> parameters, with every count computed."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import groupby
from typing import Any

from toolfoundry.catalog.ordering import UNGROUPED, ordered
from toolfoundry.catalog.schema_transform import type_label
from toolfoundry.spec import Level, Param, ToolSpec

FORMAT_VERSION = 1


def describe_parameter(param: Param) -> dict[str, Any]:
    """One parameter: name, type, required, then enum/default/help when the schema states them."""
    out: dict[str, Any] = {
        "name": param.name,
        "type": type_label(param.schema),
        "required": param.required,
    }
    if param.enum is not None:
        out["enum"] = param.enum
    if param.has_default:
        out["default"] = param.default
    if param.description is not None:
        out["help"] = param.description
    return out


def describe_command(spec: ToolSpec) -> dict[str, Any]:
    """One command (tool) with its parameters, in declaration order."""
    params = [describe_parameter(p) for p in spec.params]
    out: dict[str, Any] = {
        "name": spec.name,
        "description": spec.description,
        "level": spec.level.value,
        "version": spec.version,
        "capabilities": spec.capabilities.to_dict(),
        "parameter_count": len(params),
        "required_count": sum(1 for p in params if p["required"]),
        "parameters": params,
    }
    returns = spec.returns
    if returns is not None:
        out["returns"] = type_label(returns)
    return out


def describe(specs: Iterable[ToolSpec]) -> dict[str, Any]:
    """The whole catalogue as JSON-ready data.

    Tools are grouped by ``ToolSpec.group`` (ungrouped tools form the group named ``null``,
    listed first), groups and commands sorted by name.
    """
    tools = ordered(specs)
    groups: list[dict[str, Any]] = []
    for name, members in groupby(tools, key=lambda s: s.group or UNGROUPED):
        commands = [describe_command(s) for s in members]
        groups.append(
            {
                "name": name or None,
                "command_count": len(commands),
                "commands": commands,
            }
        )
    return {
        "format_version": FORMAT_VERSION,
        "tool_count": len(tools),
        "primitive_count": sum(1 for s in tools if s.level is Level.PRIMITIVE),
        "workflow_count": sum(1 for s in tools if s.level is Level.WORKFLOW),
        "group_count": len(groups),
        "groups": groups,
    }
