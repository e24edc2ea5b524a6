"""Hostile input at the server's doors: the stdio MCP server answers every malformed line and
keeps running, the official MCP client never hangs or kills it, and the HTTP API answers no
input with a 5xx (MCP over stdio, lone surrogates, results the host must decode,
integers beyond 4300 digits).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from sqlalchemy import update
from starlette.testclient import TestClient
from tests.factories import McpSessionFactory

from toolfoundry import Foundry
from toolfoundry.registry.schema import versions

from .mcp.test_mcp_stdio_support import RawStdio, raw_stdio
from .mcp.test_mcp_support import relaxed_config, serve_http, text_of
from .test_server_web_support import compose, snapshot

BIG = "1" * 5000


def call_line(request_id: int, arguments: str, tool: str = "run_js") -> bytes:
    """A tools/call line whose arguments are raw JSON text, hostile as written."""
    return (
        f'{{"jsonrpc": "2.0", "id": {request_id}, "method": "tools/call", '
        f'"params": {{"name": "{tool}", "arguments": {arguments}}}}}'
    ).encode()


@pytest.fixture
def db(tmp_path: Path) -> str:
    relaxed_config(tmp_path)
    return f"sqlite:///{tmp_path / 'registry.db'}"


@pytest.fixture
def raw(db: str, tmp_path: Path) -> Iterator[RawStdio]:
    with raw_stdio(db, tmp_path) as server:
        yield server


MALFORMED = [
    # (line, JSON-RPC error code, the id the answer carries)
    (b"not json at all", -32700, None),
    (b"[" * 1100 + b"]" * 1100, -32700, None),
    (b"\xff\xfe{}", -32700, None),
    (call_line(11, '{"code": "export default 1", "args": {"n": ' + BIG + "}}"), -32700, 11),
    (call_line(12, '{"code": "export default \\"\\ud800\\""}'), -32700, 12),
    (call_line(13, '{"code": "x", "args": ' + "[" * 300 + "]" * 300 + "}"), -32700, 13),
    (call_line(14, '{"code": "x", "args": {"v": NaN}}'), -32700, 14),
    (call_line(15, '{"code": "x", "args": {"v": 1e999}}'), -32700, 15),
    (b"[1, 2]", -32600, None),
    (b'{"jsonrpc": "2.0", "id": 16, "method": 7}', -32600, 16),
    (b'{"jsonrpc": "2.0", "id": "s", "what": "no method"}', -32600, "s"),
]


def test_stdio_answers_every_malformed_line_and_keeps_running(raw: RawStdio) -> None:
    for n, (line, code, request_id) in enumerate(MALFORMED):
        raw.send(line)
        error = raw.answer(request_id)["error"]
        assert error["code"] == code, (line[:80], error)
        raw.ping(1000 + n)  # still serving
    raw.send(b"")  # a blank line is no message: nothing to answer
    raw.ping(2000)
    assert raw.proc.poll() is None


def test_stdio_parse_errors_locate_the_problem(raw: RawStdio) -> None:
    raw.send(call_line(21, '{"code": "x", "args": {"deep": {"n": ' + BIG + "}}}"))
    error = raw.answer(21)["error"]
    paths = [p["path"] for p in error["data"]["problems"]]
    assert paths == ["$.params.arguments.args.deep.n"]
    draft = {
        "name": "bad_name_test",
        "description": "d",
        "code": "export default 1",
        "tests": [{"name": "\\ud800", "input": {}, "expected": 1}],
    }
    text = json.dumps(draft).replace("\\\\ud800", "\\ud800")  # a real JSON escape
    raw.send(call_line(22, text, "create_tool"))
    error = raw.answer(22)["error"]
    assert error["data"]["problems"][0]["path"] == "$.params.arguments.tests[0].name"
    raw.ping(23)


def test_a_tool_that_returns_logs_or_throws_lone_surrogates_through_the_official_client(
    db: str, tmp_path: Path, mcp_session: McpSessionFactory
) -> None:
    async def scenario() -> None:
        async with mcp_session(db, tmp_path) as (session, _):
            # a failed run_js is an error result; its console output is in _meta
            returned = await session.call_tool("run_js", {"code": 'export default "a\\ud800"'})
            assert returned.is_error is True
            assert returned.structured_content is not None
            assert returned.structured_content["error"]["kind"] == "invalid_output"
            logged = await session.call_tool(
                "run_js", {"code": 'console.log("\\ud800"); throw new Error("\\udc00")'}
            )
            assert logged.structured_content is not None
            assert logged.meta is not None
            assert logged.meta["toolfoundry/logs"] == ["\\ud800"]  # visible, six characters
            assert "\\udc00" in logged.structured_content["error"]["message"]
            deep = "let v = []; for (let i = 0; i < 1100; i++) v = [v]; export default v"
            nested = await session.call_tool("run_js", {"code": deep})
            assert "invalid_output" in text_of(nested)
            raw_json = await session.call_tool(
                "run_js", {"code": 'export default JSON.rawJSON("1".repeat(5000))'}
            )
            assert "invalid_output" in text_of(raw_json)
            # a number the gate refuses fails this request, never the connection
            with pytest.raises(MCPError) as refused:
                await session.call_tool(
                    "run_js", {"code": "export default 1", "args": {"n": 10**400}}
                )
            assert refused.value.error.code == types.PARSE_ERROR
            listed = await session.list_tools()
            assert {t.name for t in listed.tools} >= {"run_js", "create_tool"}

    anyio.run(scenario)


def test_the_same_calls_over_http_mcp_fail_cleanly(db: str, tmp_path: Path) -> None:
    from .mcp.test_mcp_support import http_session

    async def scenario(port: int) -> None:
        async with http_session(port) as (session, _):
            returned = await session.call_tool("run_js", {"code": 'export default "a\\ud800"'})
            assert "invalid_output" in text_of(returned)
            huge = await session.call_tool(
                "run_js", {"code": "export default 1", "args": {"n": 10**400}}
            )
            assert huge.structured_content is not None  # the SDK's parser took it; the gate not
            assert huge.structured_content["error"]["kind"] == "invalid_arguments"

    with serve_http(db, tmp_path) as port:
        anyio.run(scenario, port)


# ---- the HTTP API ----


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[TestClient, Foundry]]:
    foundry = Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}")
    echo = {
        "name": "echo",
        "description": "Echo a text, or a lone surrogate when asked.",
        "parameters": {
            "type": "object",
            "properties": {"text": {}, "bad": {"type": "boolean"}},
        },
        "code": 'export function handler({ text, bad }) { return bad ? "\\ud800" : text }',
        "tests": [{"input": {"text": "hi"}, "expected": "hi"}],
    }
    assert foundry.create_tool(echo).status == "active"
    with TestClient(compose(foundry), base_url="http://127.0.0.1:8000") as test_client:
        yield test_client, foundry
    foundry.close()


def post(client: TestClient, path: str, body: bytes) -> Any:
    response = client.post(path, content=body, headers={"content-type": "application/json"})
    assert response.status_code < 500, response.text
    response.content.decode("utf-8")
    return response


DRAFT = (
    '{"name": "slug", "description": "DESC", "author": "AUTHOR", "code": "CODE",'
    ' "parameters": {"type": "object", "properties": {"t": {"type": "string",'
    ' "description": "PDESC"}}}, "tests": [{"name": "TNAME", "input": {"t": "a"},'
    ' "expected": "a"}]}'
)
FIELDS = {
    "TNAME": "$.tests[0].name",
    "DESC": "$.description",
    "AUTHOR": "$.author",
    "CODE": "$.code",
    "PDESC": "$.parameters.properties.t.description",
}


@pytest.mark.parametrize("field", list(FIELDS))
def test_a_lone_surrogate_in_any_draft_field_is_a_located_422(
    client: tuple[TestClient, Foundry], field: str
) -> None:
    test_client, foundry = client
    fill = {
        k: "export function handler({ t }) { return t }" if k == "CODE" else "ok" for k in FIELDS
    }
    fill[field] = (
        "x\\ud800" if field != "CODE" else "export function handler({ t }) { return t } //\\ud800"
    )
    body = DRAFT
    for key, value in fill.items():
        body = body.replace(f'"{key}"', f'"{value}"')
    before = snapshot(foundry)
    for _ in range(2):  # a retry stores nothing either: no duplicate version
        response = post(test_client, "/api/tools", body.encode())
        assert response.status_code == 422
        problems = response.json()["error"]["problems"]
        assert problems[0]["path"] == FIELDS[field]
        assert "lone surrogate" in problems[0]["message"]
    assert snapshot(foundry) == before
    assert test_client.get("/api/approvals").status_code == 200


@pytest.mark.parametrize(
    ("args", "path"),
    [
        ('{"text": ' + BIG + "}", "$.args.text"),  # was a 500 (Python's 4300-digit limit)
        ('{"text": ' + "9" * 400 + "}", "$.args.text"),  # beyond a double
        ('{"text": 1e999}', "$.args.text"),
        ('{"text": "\\udfff"}', "$.args.text"),
    ],
)
def test_hostile_call_arguments_are_422(
    client: tuple[TestClient, Foundry], args: str, path: str
) -> None:
    test_client, _ = client
    response = post(test_client, "/api/tools/echo/call", ('{"args": ' + args + "}").encode())
    assert response.status_code == 422
    assert response.json()["error"]["problems"][0]["path"] == path


def test_results_the_host_refuses_are_reported_not_500(
    client: tuple[TestClient, Foundry],
) -> None:
    test_client, foundry = client
    response = post(test_client, "/api/tools/echo/call", b'{"args": {"bad": true}}')
    assert response.status_code == 200
    assert response.json()["error"]["kind"] == "invalid_output"
    usage = foundry.usage("echo")
    assert usage.failures == {"invalid_output": 1}


def test_bodies_that_break_the_text_rules_are_400(client: tuple[TestClient, Foundry]) -> None:
    test_client, _ = client
    for body in (b"\xff\xfe", b"[" * 1100 + b"]" * 1100, b'{"args": NaN'):
        response = post(test_client, "/api/tools/echo/call", body)
        assert response.status_code == 400
        assert response.json()["error"]["kind"] == "invalid_json"


def test_a_stored_lone_surrogate_from_before_the_gate_does_not_break_reviewers(
    client: tuple[TestClient, Foundry],
) -> None:
    test_client, foundry = client
    pending = {
        "name": "weather",
        "description": "Weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        "code": "export async function handler({ city }) {\n"
        "  return (await (await fetch('https://api.example.com/w?c=' + city)).json()).t\n}\n",
        "capabilities": {"network": ["api.example.com"]},
        "fixtures": [{"url": "https://api.example.com/w?c=Oslo", "body": '{"t": 1}'}],
        "tests": [{"name": "oslo", "input": {"city": "Oslo"}, "expected": 1}],
    }
    assert foundry.create_tool(pending).status == "pending_approval"
    # what an older build committed: a test name holding a lone surrogate
    with foundry.registry.engine.begin() as conn:
        conn.execute(
            update(versions).values(
                tests=[{"name": "\ud800", "input": {"city": "Oslo"}, "expected": 1}],
                test_results=[{"name": "\ud800", "passed": True}],
            )
        )
    for path in ("/api/approvals", "/api/tools/weather", "/api/tools/weather/versions/1"):
        response = test_client.get(path)
        assert response.status_code == 200, (path, response.text)
        response.content.decode("utf-8")
