"""Two requests with one JSON-RPC id in flight in one MCP session (server/mcp/request_ids.py):
the second gets an immediate ``-32600`` error, the first its answer; nothing hangs. Raw requests
over Streamable HTTP and stdio, since the official client never sends a duplicate."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.server.test_server_web_support import serve

from toolfoundry import Foundry
from toolfoundry.server.app import create_app

from .test_mcp_stdio_support import raw_stdio

# a run_js call that keeps its request in flight for about a second
SLOW = (
    "export function handler() {"
    " const end = Date.now() + 1000; while (Date.now() < end) {} return 'done'; }"
)
HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
PROTOCOL = "2025-06-18"


def slow_call(request_id: Any) -> dict[str, Any]:
    params = {"name": "run_js", "arguments": {"code": SLOW}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def ping(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}


@pytest.fixture
def http_session(tmp_path: Path) -> Iterator[tuple[httpx.Client, str]]:
    """A Streamable HTTP session of the real application, opened with raw requests."""
    with (
        Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd,
        serve(create_app(fd)) as base,
        httpx.Client(base_url=base, headers=HEADERS, timeout=30) as client,
    ):
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        opened = client.post("/mcp", json=init)
        assert opened.status_code == 200, opened.text
        client.headers["mcp-session-id"] = opened.headers["mcp-session-id"]
        client.headers["mcp-protocol-version"] = PROTOCOL
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post("/mcp", json=note).status_code == 202
        yield client, base


@pytest.mark.parametrize("second", [7, "7"], ids=["same id", "same id as a string"])
def test_http_a_second_request_with_an_id_in_flight_is_refused_at_once(
    http_session: tuple[httpx.Client, str], second: Any
) -> None:
    client, _base = http_session
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(client.post, "/mcp", json=slow_call(7))
        time.sleep(0.3)  # the first is running in the sandbox now
        started = time.monotonic()
        refused = client.post("/mcp", json=ping(second))
        took = time.monotonic() - started
        answered = first.result(timeout=30)  # the first is answered, not left hanging
    assert refused.status_code == 400
    body = refused.json()
    assert body["id"] == second
    assert body["error"]["code"] == -32600
    assert "already in flight" in body["error"]["message"]
    assert took < 0.5  # at once, not after the first
    assert answered.status_code == 200
    result = answered.json()
    assert result["id"] == 7
    assert result["result"]["structuredContent"]["value"] == "done"
    # answered, the id may be used again; another session's id 7 was never in conflict
    assert client.post("/mcp", json=ping(7)).json() == {"jsonrpc": "2.0", "id": 7, "result": {}}


def test_http_distinct_ids_run_side_by_side(http_session: tuple[httpx.Client, str]) -> None:
    client, _base = http_session
    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(client.post, "/mcp", json=slow_call(7))
        time.sleep(0.3)
        assert client.post("/mcp", json=ping(8)).json()["result"] == {}
        assert first.result(timeout=30).json()["id"] == 7


def next_answer(server: Any) -> dict[str, Any]:
    """The next message the server writes that carries an id."""
    while True:
        message = json.loads(server.lines.get(timeout=30))
        if "id" in message:
            return dict(message)


@pytest.mark.parametrize("second", [7, "7"], ids=["same id", "same id as a string"])
def test_stdio_a_second_request_with_an_id_in_flight_is_refused_at_once(
    tmp_path: Path, second: Any
) -> None:
    with raw_stdio(f"sqlite:///{tmp_path / 'r.db'}", tmp_path) as server:
        server.send(json.dumps(slow_call(7)).encode())
        time.sleep(0.3)
        server.send(json.dumps(ping(second)).encode())
        # the refusal comes first, at once; then the first request's answer
        refused = next_answer(server)
        answered = next_answer(server)
        assert refused["id"] == second
        assert answered["id"] == 7
        assert refused["error"]["code"] == -32600
        assert "already in flight" in refused["error"]["message"]
        assert answered["result"]["structuredContent"]["value"] == "done"
        server.ping(7)  # answered: the id is free again
