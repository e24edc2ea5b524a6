"""What the review page shows of the upstream MCP servers (``/ui/upstream``).

Each upstream with its state (connecting, ready, down and why), and each of its tools with its
policy and standing. A tool that waits for a person shows its input schema, and one approved for
an earlier schema shows the change as a unified diff of the two schemas: the person approves
what they saw (the form carries the schema's hash; a schema that changed meanwhile is refused).
"""

from __future__ import annotations

from typing import Any

from toolfoundry.base.json_gate import encode
from toolfoundry.foundry import Foundry
from toolfoundry.foundry.upstream_gate import schema_diff


def upstream_view(foundry: Foundry) -> dict[str, Any]:
    """The page's data: ``servers`` (statuses) and ``tools`` (entries with their diffs)."""
    servers = foundry.upstreams
    if servers is None:
        return {"servers": [], "tools": [], "waiting": 0}
    tools = []
    for entry in foundry.upstream_tools():
        shown = entry.to_dict()
        shown["schema_text"] = encode(entry.tool.input_schema, indent=2)
        shown["diff"] = schema_diff(entry.approved_schema, entry.tool.input_schema)
        tools.append(shown)
    waiting = sum(t["standing"] in ("needs_approval", "schema_changed") for t in tools)
    return {
        "servers": [s.to_dict() for s in servers.statuses()],
        "tools": tools,
        "waiting": waiting,
    }
