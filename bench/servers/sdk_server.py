"""The bare official Python MCP SDK server the throughput bench compares ``serve`` with.

    python bench/servers/sdk_server.py PORT

One tool, ``add_one(x) -> x + 1``, in plain Python (no sandbox, no registry): what the SDK's
high-level ``MCPServer`` costs per call and nothing else. Streamable HTTP at ``/mcp`` with
JSON responses and sessions, as ``toolfoundry serve --http`` runs it (server/app.py), under
uvicorn. Prints ``ready`` once it listens.
"""

from __future__ import annotations

import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-baseline", log_level="WARNING")


@server.tool()
def add_one(x: int) -> int:
    """Add one to an integer."""
    return x + 1


def main() -> None:
    port = int(sys.argv[1])
    app = server.streamable_http_app(json_response=True, host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    uvicorn_server = uvicorn.Server(config)
    print("ready", flush=True)
    uvicorn_server.run()


if __name__ == "__main__":
    main()
