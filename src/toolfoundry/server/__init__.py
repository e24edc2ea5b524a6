"""Serving the foundry: the MCP server, the review page and the HTTP API."""
