"""The foundry as an MCP server (the official SDK's low-level ``Server``).

``server.py`` builds it (``build_mcp_server``, ``serve_stdio``); ``listing.py`` pages the
dynamic tool list, ``resources.py`` serves each tool's source and tests, ``results.py`` shapes
call results, ``stdio.py`` is the JSON-gated stdio transport. Importing this package loads
nothing: each module loads the MCP SDK itself.
"""
