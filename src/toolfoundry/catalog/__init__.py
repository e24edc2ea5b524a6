"""ToolSpec -> catalogue formats, each a pure function of specs, plus the drift check.

``render(format, specs)`` gives the text of any format; the typed functions give the data
that goes into each vendor SDK's ``tools`` argument.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolfoundry.base.lazy import lazy_names

# Imported now: a lazy name equal to its module's would be shadowed by the submodule itself
# once anything imports it (schema_transform and json only).
from toolfoundry.catalog.gemini_schema import gemini_schema

if TYPE_CHECKING:  # what __getattr__ below returns, for type checkers (tests keep both equal)
    from toolfoundry.catalog.anthropic import anthropic_tool, anthropic_tools
    from toolfoundry.catalog.arguments import restore_arguments
    from toolfoundry.catalog.describe_json import describe
    from toolfoundry.catalog.formats import FORMATS, UnknownFormat, project, render
    from toolfoundry.catalog.gemini import gemini_function_declaration, gemini_function_declarations
    from toolfoundry.catalog.mcp import mcp_tool, mcp_tools
    from toolfoundry.catalog.openai_chat import openai_chat_tool, openai_chat_tools
    from toolfoundry.catalog.openai_responses import openai_responses_tool, openai_responses_tools
    from toolfoundry.catalog.openai_strict import StrictSchema, strict_schema
    from toolfoundry.catalog.ordering import ordered
    from toolfoundry.catalog.schema_transform import SchemaTransformError
    from toolfoundry.catalog.skill import InvalidSkill, skill_markdown

# Each projection loads on first use: reading toolfoundry.toml (catalog.drift's Artifact) needs
# none, serving MCP only mcp.py, and restore_arguments alone loads the JSON Schema validator.
_LAZY = {
    "anthropic_tool": "toolfoundry.catalog.anthropic",
    "anthropic_tools": "toolfoundry.catalog.anthropic",
    "restore_arguments": "toolfoundry.catalog.arguments",
    "describe": "toolfoundry.catalog.describe_json",
    "FORMATS": "toolfoundry.catalog.formats",
    "UnknownFormat": "toolfoundry.catalog.formats",
    "project": "toolfoundry.catalog.formats",
    "render": "toolfoundry.catalog.formats",
    "gemini_function_declaration": "toolfoundry.catalog.gemini",
    "gemini_function_declarations": "toolfoundry.catalog.gemini",
    "mcp_tool": "toolfoundry.catalog.mcp",
    "mcp_tools": "toolfoundry.catalog.mcp",
    "openai_chat_tool": "toolfoundry.catalog.openai_chat",
    "openai_chat_tools": "toolfoundry.catalog.openai_chat",
    "openai_responses_tool": "toolfoundry.catalog.openai_responses",
    "openai_responses_tools": "toolfoundry.catalog.openai_responses",
    "StrictSchema": "toolfoundry.catalog.openai_strict",
    "strict_schema": "toolfoundry.catalog.openai_strict",
    "ordered": "toolfoundry.catalog.ordering",
    "SchemaTransformError": "toolfoundry.catalog.schema_transform",
    "InvalidSkill": "toolfoundry.catalog.skill",
    "skill_markdown": "toolfoundry.catalog.skill",
}
__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "FORMATS",
    "InvalidSkill",
    "SchemaTransformError",
    "StrictSchema",
    "UnknownFormat",
    "anthropic_tool",
    "anthropic_tools",
    "describe",
    "gemini_function_declaration",
    "gemini_function_declarations",
    "gemini_schema",
    "mcp_tool",
    "mcp_tools",
    "openai_chat_tool",
    "openai_chat_tools",
    "openai_responses_tool",
    "openai_responses_tools",
    "ordered",
    "project",
    "render",
    "restore_arguments",
    "skill_markdown",
    "strict_schema",
]
