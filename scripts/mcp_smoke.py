"""Drive ``toolfoundry serve`` over stdio with the official MCP client: create a tool, call it.

    python scripts/mcp_smoke.py /path/to/bin/toolfoundry sqlite:////tmp/registry.db

Exit 0 when create_tool answered ``active``, the new tool was listed and its call returned the
right value; otherwise a one-line reason on stderr and exit 1. Used by scripts/wheel_smoke.sh.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

DRAFT: dict[str, Any] = {
    "name": "count_words",
    "description": "Count the words of a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
    },
    "code": "export const handler = ({ text }) => text.split(/\\s+/).filter(Boolean).length;",
    "tests": [{"input": {"text": "one two  three"}, "expected": 3}],
}


async def smoke(command: str, db: str) -> str | None:
    """None when every step worked, else what went wrong."""
    params = StdioServerParameters(
        command=command, args=["serve", "--db", db], env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        created = await session.call_tool("create_tool", DRAFT)
        content = created.structured_content or {}
        if created.is_error or content.get("status") != "active":
            return f"create_tool answered {created.model_dump(mode='json')}"
        names = {tool.name for tool in (await session.list_tools()).tools}
        if DRAFT["name"] not in names:
            return f"{DRAFT['name']} is not listed: {sorted(names)}"
        called = await session.call_tool(DRAFT["name"], {"text": "tools that last"})
        if called.is_error or called.structured_content != {"result": 3}:
            return f"the call answered {called.model_dump(mode='json')}"
    return None


def main() -> None:
    command, db = sys.argv[1:3]
    problem = anyio.run(smoke, command, db)
    if problem is not None:
        print(f"mcp smoke: {problem}", file=sys.stderr)
        raise SystemExit(1)
    print("mcp smoke: create_tool active, listed, called over stdio")


if __name__ == "__main__":
    main()
