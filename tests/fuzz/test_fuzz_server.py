"""Fuzz the server's two JSON doors with random arguments: MCP ``tools/call`` (through the
streamable HTTP transport ``toolfoundry serve --http`` runs) and the HTTP API under ``/api``.

Invalid shapes, huge strings, deep nesting, bytes that are not JSON. Oracles: never a 5xx or a
broken protocol message; an MCP answer is a JSON-RPC ``result`` or ``error``, a failed tool
call is ``isError`` with an error kind; an API refusal is ``{"error": {"kind", ...}}``; and
the server still answers an ordinary call after every example.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from starlette.testclient import TestClient
from tests.server.mcp.test_mcp_stdio_support import RawStdio, raw_stdio

from toolfoundry import Foundry
from toolfoundry.server.app import create_app

from .hostile_json import DEEP, HOSTILE_LITERALS, HUGE_NUMBERS, hostile_text
from .js_grammar import fuzz_settings

MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SHOUT: dict[str, Any] = {
    "name": "shout",
    "description": "Upper-case a text.",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"],
        "additionalProperties": False,
    },
    "code": "export function handler({ text }) { return text.toUpperCase(); }",
    "tests": [{"input": {"text": "hi"}, "expected": "HI"}],
}
TOOL_NAMES = ["shout", "run_js", "create_tool", "search_tools", "tool_history", "rollback_tool"]
ODD_NAMES = ["", "nope", "../etc/passwd", "shout\x00", "a" * 300, "ü", "SHOUT", "tools/list"]

LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-(2**64), 2**64)
    | st.floats(allow_nan=False)
    | hostile_text(10)
    | st.sampled_from(["\x00", "\ud7ff\ue000", "export default 1", "shout"])
    | st.just(200_000).map("x".__mul__)  # a huge string (built lazily: short reprs)
    | HUGE_NUMBERS
    | DEEP
)
JSON = st.recursive(
    LEAF,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text(8), inner, max_size=4),
    max_leaves=12,
)
KEYS = st.sampled_from(
    [
        *("text", "code", "args", "name", "query", "k", "version", "description"),
        *("parameters", "tests", "capabilities", "junk"),
    ]
)
ARGUMENTS = st.dictionaries(KEYS, JSON, max_size=5)
CODES = st.sampled_from(
    ["export default 1", "while (true) {}", "export default globalThis.__host", "x(", ""]
)
# Arguments of the right types for each tool, so calls also get past validation.
TYPED = {
    "shout": st.fixed_dictionaries({"text": hostile_text(20)}),
    "run_js": st.fixed_dictionaries(
        {"code": CODES}, optional={"args": st.dictionaries(st.text(max_size=5), JSON, max_size=3)}
    ),
    "search_tools": st.fixed_dictionaries(
        {"query": hostile_text(20)}, optional={"k": st.integers(-5, 2**64)}
    ),
    "tool_history": st.fixed_dictionaries({"name": st.sampled_from(TOOL_NAMES + ODD_NAMES)}),
    "rollback_tool": st.fixed_dictionaries(
        {"name": st.sampled_from(TOOL_NAMES + ODD_NAMES), "version": st.integers(-1, 2**64)}
    ),
    "create_tool": st.fixed_dictionaries(
        {
            "name": st.sampled_from(["made", "shout", "", "run_js"]),
            "description": hostile_text(20),
            "code": CODES,
            "tests": st.just([{"input": {}, "expected": 1}]) | JSON,
        },
        optional={"capabilities": JSON, "parameters": JSON},
    ),
}


def nested(depth: int) -> str:
    """JSON text nested ``depth`` deep, built as text (json.dumps would recurse)."""
    return '{"a":' * depth + "[]" + "}" * depth


def argument_text() -> st.SearchStrategy[str]:
    return (
        ARGUMENTS.map(json.dumps)
        | JSON.map(json.dumps)
        | st.sampled_from([50, 500, 5000, 50_000]).map(nested)
        | st.sampled_from(HOSTILE_LITERALS).map(lambda text: f'{{"text": {text}, "code": {text}}}')
    )


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    directory: Path = tmp_path_factory.mktemp("server-fuzz")
    foundry = Foundry.open(f"sqlite:///{directory / 'registry.db'}")
    assert foundry.create_tool(SHOUT).status == "active"
    with TestClient(create_app(foundry), base_url="http://127.0.0.1:8000") as test_client:
        yield test_client
    foundry.close()


@pytest.fixture(scope="module")
def session(client: TestClient) -> dict[str, str]:
    """Headers of an initialized MCP session."""
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "fuzz", "version": "0"},
        },
    }
    r = client.post("/mcp", json=hello, headers=MCP_HEADERS)
    assert r.status_code == 200, r.text
    headers = {**MCP_HEADERS, "mcp-session-id": r.headers["mcp-session-id"]}
    done = client.post(
        "/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert done.status_code == 202
    return headers


def rpc_messages(text: str) -> list[dict[str, Any]]:
    """JSON-RPC messages of a response, plain JSON or server-sent events."""
    if text.lstrip().startswith("{"):
        return [json.loads(text)]
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:")]


def check_rpc(message: dict[str, Any]) -> None:
    assert message.get("jsonrpc") == "2.0"
    assert ("result" in message) != ("error" in message), message
    if "error" in message:
        assert isinstance(message["error"]["code"], int)
        assert message["error"]["message"]
        event(f"mcp: json-rpc error {message['error']['message'][:50]}")
        return
    result = message["result"]
    assert isinstance(result.get("content"), list)
    if result.get("isError"):
        kind = result["structuredContent"]["error"]["kind"]
        assert isinstance(kind, str)
        assert kind
        event(f"mcp: isError {kind}")
    else:
        event("mcp: result")


def still_serves(client: TestClient, headers: dict[str, str]) -> None:
    """An ordinary call still works (run_js: the fuzzed API may have disabled ``shout``)."""
    call = {
        "jsonrpc": "2.0",
        "id": 99,
        "method": "tools/call",
        "params": {"name": "run_js", "arguments": {"code": "export default 'OK'"}},
    }
    r = client.post("/mcp", json=call, headers=headers)
    assert r.status_code == 200, r.text
    assert rpc_messages(r.text)[0]["result"]["structuredContent"]["value"] == "OK"


def refusal_kind(document: Any) -> Any:
    """The kind of an API refusal: an Error's or a CallResult's ``error.kind``, or the first
    blocker of a CreateResult or Decision step."""
    if not isinstance(document, dict):
        return None
    if isinstance(document.get("error"), dict):
        return document["error"].get("kind")
    step = document.get("step")
    if isinstance(step, dict) and step.get("blockers"):
        return step["blockers"][0]
    return None


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, str]:
    """A tool name and its arguments as JSON text: typed for the tool half the time."""
    name = draw(st.sampled_from(TOOL_NAMES + ODD_NAMES))
    if name in TYPED and draw(st.booleans()):
        return name, json.dumps(draw(TYPED[name]))
    return name, draw(argument_text())


@fuzz_settings(250)
@given(
    call=calls(),
    params_shape=st.sampled_from(
        ["normal", "normal", "normal", "no-arguments", "params-list", "name-number"]
    ),
)
def test_mcp_tool_calls_never_break_the_protocol(
    client: TestClient, session: dict[str, str], call: tuple[str, str], params_shape: str
) -> None:
    name, arguments = call
    params = {
        "normal": f'{{"name": {json.dumps(name)}, "arguments": {arguments}}}',
        "no-arguments": f'{{"name": {json.dumps(name)}}}',
        "params-list": f"[{arguments}]",
        "name-number": f'{{"name": 7, "arguments": {arguments}}}',
    }[params_shape]
    body = f'{{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {params}}}'
    r = client.post("/mcp", content=body.encode("utf-8", "surrogatepass"), headers=session)
    assert r.status_code < 500, r.text[:500]
    messages = rpc_messages(r.text)
    assert messages, (r.status_code, r.text[:500])
    for message in messages:
        check_rpc(message)
    still_serves(client, session)


@fuzz_settings(60)
@given(body=st.binary(max_size=64) | argument_text().map(str.encode))
def test_mcp_endpoint_refuses_garbage_with_a_json_rpc_error(
    client: TestClient, session: dict[str, str], body: bytes
) -> None:
    r = client.post("/mcp", content=body, headers=session)
    assert r.status_code < 500, r.text[:500]
    if r.status_code >= 400:
        for message in rpc_messages(r.text):
            assert "error" in message, message
    still_serves(client, session)


API_TEMPLATES = [
    ("GET", "/api/tools"),
    ("POST", "/api/tools"),
    ("GET", "/api/tools/{name}"),
    ("GET", "/api/tools/{name}/versions"),
    ("GET", "/api/tools/{name}/versions/{version}"),
    ("GET", "/api/tools/{name}/diff"),
    ("POST", "/api/tools/{name}/versions/{version}/approve"),
    ("POST", "/api/tools/{name}/versions/{version}/reject"),
    ("POST", "/api/tools/{name}/rollback"),
    ("POST", "/api/tools/{name}/disable"),
    ("POST", "/api/tools/{name}/enable"),
    ("POST", "/api/tools/{name}/call"),
    ("GET", "/api/approvals"),
    ("GET", "/api/audit"),
    ("GET", "/api/search"),
    ("PUT", "/api/tools"),
    ("GET", "/api/{name}"),
]
# No raw "..": the client itself resolves it before sending.
PATH_NAMES = ["shout", "nope", "%2e%2e", "%00", "a" * 300, "ü", "shout%2Fx", "run_js"]
VERSIONS = ["1", "0", "2", "-1", "99999999999999999999", "x", "1.5"]
QUERY = st.dictionaries(
    st.sampled_from(["query", "k", "a", "b", "limit", "tool", "q", "version"]),
    st.sampled_from(["", "1", "-5", "99999999999", "shout", "x" * 5000, "\x00", "1e9"]),
    max_size=3,
)


@fuzz_settings(200)
@given(
    template=st.sampled_from(API_TEMPLATES),
    name=st.sampled_from(PATH_NAMES),
    version=st.sampled_from(VERSIONS),
    query=QUERY,
    body=argument_text().map(str.encode) | st.binary(max_size=32),
    content_type=st.sampled_from(["application/json", "text/plain", "application/json; x=y"]),
)
def test_api_answers_every_request_with_json_and_a_kind(
    client: TestClient,
    session: dict[str, str],
    template: tuple[str, str],
    name: str,
    version: str,
    query: dict[str, str],
    body: bytes,
    content_type: str,
) -> None:
    method, pattern = template
    path = pattern.format(name=name, version=version)
    content = body if method != "GET" else None
    r = client.request(
        method, path, params=query, content=content, headers={"Content-Type": content_type}
    )
    assert r.status_code < 500, (method, path, r.status_code, r.text[:500])
    document = r.json()
    if r.status_code >= 400:
        kind = refusal_kind(document)
        assert isinstance(kind, str), (method, path, r.status_code, document)
        assert kind
        event(f"api: {r.status_code} {kind}")
    else:
        event(f"api: {r.status_code}")
    still_serves(client, session)


@pytest.fixture(scope="module")
def stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawStdio]:
    directory: Path = tmp_path_factory.mktemp("stdio-fuzz")
    db = f"sqlite:///{directory / 'registry.db'}"
    with Foundry.open(db) as foundry:
        assert foundry.create_tool(SHOUT).status == "active"
    with raw_stdio(db, directory) as server:
        yield server


@fuzz_settings(80)
@given(call=calls(), garbage=st.none() | st.binary(max_size=48))
def test_stdio_answers_every_line_and_keeps_serving(
    stdio: RawStdio, call: tuple[str, str], garbage: bytes | None
) -> None:
    name, arguments = call
    line = (
        f'{{"jsonrpc": "2.0", "id": 1, "method": "tools/call", '
        f'"params": {{"name": {json.dumps(name)}, "arguments": {arguments}}}}}'
    ).encode("utf-8", "surrogatepass")
    if garbage is not None:
        line = garbage.replace(b"\n", b" ")
    stdio.send(line)
    stdio.send(b'{"jsonrpc": "2.0", "id": 2, "method": "ping"}')
    # the line is answered (by its id, or by a parse error that could not read one) ...
    wanted: list[Any] = [2] if garbage is not None and not garbage.strip() else [(1, None), 2]
    seen = stdio.answers(*wanted)
    for message in seen.values():
        assert ("result" in message) != ("error" in message), message
        event("stdio: error" if "error" in message else "stdio: result")
    assert stdio.proc.poll() is None  # ... and the server is still there
