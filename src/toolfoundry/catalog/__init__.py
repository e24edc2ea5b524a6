"""ToolSpec -> catalogue formats, each a pure function of specs, plus the drift check.

``render(format, specs)`` gives the text of any format; the typed functions give the data
that goes into each vendor SDK's ``tools`` argument.
"""

from toolfoundry.catalog.anthropic import anthropic_tool, anthropic_tools
from toolfoundry.catalog.arguments import restore_arguments
from toolfoundry.catalog.describe_json import describe
from toolfoundry.catalog.formats import FORMATS, UnknownFormat, project, render
from toolfoundry.catalog.gemini import gemini_function_declaration, gemini_function_declarations
from toolfoundry.catalog.gemini_schema import gemini_schema
from toolfoundry.catalog.mcp import mcp_tool, mcp_tools
from toolfoundry.catalog.openai_chat import openai_chat_tool, openai_chat_tools
from toolfoundry.catalog.openai_responses import openai_responses_tool, openai_responses_tools
from toolfoundry.catalog.openai_strict import StrictSchema, strict_schema
from toolfoundry.catalog.ordering import ordered
from toolfoundry.catalog.schema_transform import SchemaTransformError
from toolfoundry.catalog.skill import InvalidSkill, skill_markdown

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
