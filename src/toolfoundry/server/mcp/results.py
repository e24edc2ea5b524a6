"""A foundry ``CallResult`` as an MCP ``CallToolResult``.

- Success: ``structuredContent`` is the tool's value when it is a JSON object, else
  ``{"result": value}`` (MCP up to 2025-11-25 only allows an object there; wrapping always,
  whatever the protocol version, keeps one shape for every client), plus one text block with
  the value as JSON. When the tool declares an output schema (of that structured content:
  catalog/mcp.py ``output_schema``) and the content does not match it, the call is reported as a
  ``runtime_error`` instead, so clients never receive a result that contradicts the schema
  they were shown.
- Failure: ``isError: true``; the text block states the error kind, message, every argument
  problem with its JSON path, and the tool's console output; ``structuredContent`` is
  ``{"error": {"kind", "message", "problems"}}`` for programs.
- ``_meta``: ``toolfoundry/duration_ms`` and, when the tool logged anything,
  ``toolfoundry/logs``.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from toolfoundry.base.json_gate import InvalidJson, encode
from toolfoundry.base.json_schema import InvalidSchema, compile_schema
from toolfoundry.spec import CallResult, ErrorKind


def call_tool_result(
    result: CallResult, output_schema: dict[str, Any] | None
) -> types.CallToolResult:
    """The MCP form of ``result``, checked against ``output_schema`` when there is one."""
    meta: dict[str, Any] = {"toolfoundry/duration_ms": round(result.duration_ms, 3)}
    if result.logs:
        meta["toolfoundry/logs"] = list(result.logs)
    if result.error is not None:
        return _error_result(result, meta)
    value = result.value
    structured = value if isinstance(value, dict) else {"result": value}
    if output_schema is not None:  # it describes the structured content (catalog/mcp.py)
        mismatch = _schema_mismatch(output_schema, structured)
        if mismatch is not None:
            failed = CallResult.failure(
                ErrorKind.RUNTIME_ERROR,
                f"the tool returned a value that does not match its output schema: {mismatch}",
                logs=result.logs,
                duration_ms=result.duration_ms,
            )
            return _error_result(failed, meta)
    try:
        text = encode(value, compact=False)  # the gate's strict JSON: what every client parses
    except InvalidJson as exc:  # only an in-process tool can get here (sandboxes are gated)
        failed = CallResult.failure(
            ErrorKind.INVALID_OUTPUT,
            f"the tool returned a value that is not JSON: {exc}",
            logs=result.logs,
            duration_ms=result.duration_ms,
        )
        return _error_result(failed, meta)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=structured,
        _meta=meta,
    )


def _error_result(result: CallResult, meta: dict[str, Any]) -> types.CallToolResult:
    error = result.error
    assert error is not None
    lines = [f"{error.kind.value}: {error.message}"]
    lines += [f"- {p.path}: {p.message}" for p in error.problems]
    if result.logs:
        lines.append("console output:")
        lines += [f"  {line}" for line in result.logs]
    return types.CallToolResult(
        content=[types.TextContent(text="\n".join(lines))],
        structured_content={"error": error.to_dict()},
        is_error=True,
        _meta=meta,
    )


def _schema_mismatch(schema: dict[str, Any], value: Any) -> str | None:
    # The one validator of agent-made schemas: a hostile pattern cannot stall the server.
    try:
        problems = compile_schema(schema).problems(value)
    except InvalidSchema as exc:  # a version stored before create time checked this
        return f"the output schema cannot be used: {exc}"
    if not problems:
        return None
    return f"{problems[0].path}: {problems[0].message}"
