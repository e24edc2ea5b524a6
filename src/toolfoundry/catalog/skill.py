"""``SKILL.md``: the catalogue as an Agent Skill, for people and for models.

Follows the open Agent Skills format: YAML front matter with ``name`` (lowercase letters,
digits and single hyphens, at most 64 characters, equal to the skill's folder name) and
``description`` (what the skill is and when to use it, at most 1024 characters), then a
Markdown body. Primitives and workflows are separate sections; every count is computed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence

from toolfoundry.base.display import visible
from toolfoundry.catalog.ordering import ordered
from toolfoundry.catalog.schema_transform import type_label
from toolfoundry.spec import Capabilities, Level, Param, StorageScope, ToolSpec

SKILL_NAME_PATTERN = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
MAX_NAME = 64
MAX_DESCRIPTION = 1024
DEFAULT_SKILL_NAME = "toolfoundry"
MAX_FIELD_DEPTH = 3  # nested object fields listed under a parameter, then cut

_INTRO = {
    Level.PRIMITIVE: "Each primitive does one thing with no reasoning: call it directly.",
    Level.WORKFLOW: (
        "Each workflow runs fixed steps over shared state and reports every step as completed, "
        "empty, ready, skipped, unavailable or blocked (with the blockers to resolve)."
    ),
}


class InvalidSkill(ValueError):
    """A skill name or description that the Agent Skills format does not allow."""


def validate_skill_name(name: str) -> str:
    """Return ``name`` if it is a valid skill name, else raise :class:`InvalidSkill`."""
    if len(name) > MAX_NAME or not re.fullmatch(SKILL_NAME_PATTERN, name):
        raise InvalidSkill(
            f"invalid skill name {name!r}: use at most {MAX_NAME} lowercase letters, digits "
            "and single hyphens, not starting or ending with a hyphen"
        )
    return name


def skill_description(specs: Sequence[ToolSpec]) -> str:
    """What the catalogue holds and when to use it, within the 1024-character limit."""
    names = [s.name for s in specs]
    head = (
        f"Catalogue of {_count(len(specs), 'tool')} "
        f"({_count(_level_count(specs, Level.PRIMITIVE), 'primitive')}, "
        f"{_count(_level_count(specs, Level.WORKFLOW), 'workflow')})"
    )
    tail = (
        ". Use it to pick the right tool for a task and to see each tool's arguments, "
        "defaults and what it may access before calling it."
    )
    listed: list[str] = []
    for i, name in enumerate(names):
        more = len(names) - i - 1
        candidate = [*listed, name]
        suffix = f" and {more} more" if more else ""
        if len(head + ": " + ", ".join(candidate) + suffix + tail) > MAX_DESCRIPTION:
            break
        listed = candidate
    if listed:
        left = len(names) - len(listed)
        head += ": " + ", ".join(listed) + (f" and {left} more" if left else "")
    return head + tail


def skill_markdown(
    specs: Iterable[ToolSpec], *, name: str = DEFAULT_SKILL_NAME, description: str | None = None
) -> str:
    """Render the catalogue as a ``SKILL.md`` document.

    Args:
        specs: the tools to list.
        name: the skill name; must equal the folder the file is installed in.
        description: overrides the computed description (at most 1024 characters).

    Raises:
        InvalidSkill: the name or description breaks the Agent Skills rules.
    """
    tools = ordered(specs)
    validate_skill_name(name)
    text = skill_description(tools) if description is None else description.strip()
    if not text or len(text) > MAX_DESCRIPTION or "\n" in text:
        raise InvalidSkill(f"a skill description is one line of 1 to {MAX_DESCRIPTION} characters")
    groups = sorted({s.group for s in tools if s.group})
    lines = [
        "---",
        f"name: {name}",
        f"description: {json.dumps(text, ensure_ascii=False)}",
        "---",
        "",
        f"# {name} tools",
        "",
        "Generated from the tools' declarations by `toolfoundry catalog write`; do not edit.",
        "",
        f"{_count(len(tools), 'tool')}: "
        f"{_count(_level_count(tools, Level.PRIMITIVE), 'primitive')} and "
        f"{_count(_level_count(tools, Level.WORKFLOW), 'workflow')}"
        + (f", in {_count(len(groups), 'group')} ({', '.join(groups)})." if groups else "."),
    ]
    for level, title in ((Level.PRIMITIVE, "Primitives"), (Level.WORKFLOW, "Workflows")):
        members = [s for s in tools if s.level is level]
        lines += ["", f"## {title} ({len(members)})", "", _INTRO[level]]
        if not members:
            lines += ["", "None."]
        for spec in members:
            lines += ["", *_tool_section(spec)]
    # Markdown has no lossless escape: ESC, C1 and bidi characters from a tool's text are
    # written visibly (\x1b), so neither a terminal showing the file nor its reader obeys them.
    return visible("\n".join(lines) + "\n")


def _tool_section(spec: ToolSpec) -> list[str]:
    facts = []
    if spec.group:
        facts.append(f"group `{spec.group}`")
    if spec.version is not None:
        facts.append(f"version {spec.version}")
    facts.append("access: " + _access(spec.capabilities, calls_tools=spec.calls_tools))
    lines = [f"### `{spec.name}`", "", spec.description, "", "- " + "; ".join(facts)]
    params = spec.params
    lines.append(f"- {_count(len(params), 'parameter')}" + (":" if params else ""))
    for param in params:
        lines += _param_lines(param, "  ")
    returns = spec.returns
    if returns is not None:
        lines.append(f"- returns `{type_label(returns)}`")
    return lines


def _param_lines(param: Param, indent: str, depth: int = 0) -> list[str]:
    kind = "required" if param.required else "optional"
    head = f"`{param.name}` ({type_label(param.schema)}, {kind}"
    if param.has_default:
        head += f", default `{_json(param.default)}`"
    details = []
    if param.description:
        details.append(" ".join(param.description.split()))
    if param.enum is not None:
        details.append("One of: " + ", ".join(f"`{_json(v)}`" for v in param.enum) + ".")
    lines = [f"{indent}- {head})" + (": " + " ".join(details) if details else "")]
    fields = param.schema.get("properties")
    if isinstance(fields, dict) and depth < MAX_FIELD_DEPTH:
        required = set(param.schema.get("required", ()))
        for name, schema in fields.items():
            field = Param(name, schema, name in required)
            lines += _param_lines(field, indent + "  ", depth + 1)
    return lines


def _access(caps: Capabilities, *, calls_tools: bool) -> str:
    if caps.is_pure and not calls_tools:
        return "pure computation"
    parts = ["what the tools it calls reach, each under its own approval"] if calls_tools else []
    if caps.network:
        parts.append("network (" + ", ".join(caps.network) + ")")
    if caps.credentials:
        parts.append("credentials (" + ", ".join(caps.credentials) + ")")
    if caps.storage is not StorageScope.NONE:
        parts.append(f"storage ({caps.storage.value})")
    if caps.system:
        parts.append("system")
    return ", ".join(parts)


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


def _level_count(specs: Sequence[ToolSpec], level: Level) -> int:
    return sum(1 for s in specs if s.level is level)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
