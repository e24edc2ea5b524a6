"""A loopback HTTP server speaking the vendors' wire formats, scripted turn by turn.

The vendor SDKs talk to it over real HTTP; it answers with the JSON fixtures under ``wire/``
(shaped after the public API references), filled with the tool calls a test scripts, and
keeps every request it received so tests can assert on what the loop really sent.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from tests.server.test_server_web_support import serve

from toolfoundry.agent import provider_for
from toolfoundry.agent.providers import Provider
from toolfoundry.foundry import Foundry

WIRE = Path(__file__).parent / "wire"
KINDS = ("openai", "openai-responses", "anthropic", "compat")
_ids = itertools.count(1)


def wire(name: str) -> dict[str, Any]:
    """A wire fixture, as a fresh dict."""
    data: dict[str, Any] = json.loads((WIRE / name).read_text(encoding="utf-8"))
    data.pop("_note", None)
    return data


def calls(kind: str, *tool_calls: tuple[str, dict[str, Any]], text: str = "") -> dict[str, Any]:
    """A vendor answer (for ``kind``) that calls these tools, in order, in one turn."""
    if kind == "openai":
        data = wire("openai_chat_tool_calls.json")
        message = data["choices"][0]["message"]
        template = message["tool_calls"][0]
        message["content"] = text or None
        message["tool_calls"] = [
            {
                **copy.deepcopy(template),
                "id": f"call_{next(_ids)}",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for name, args in tool_calls
        ]
        return data
    if kind == "compat":
        data = wire("compat_ollama_tool_calls.json")
        message = data["choices"][0]["message"]
        message["content"] = text
        message["tool_calls"] = [
            {"function": {"name": name, "arguments": args}} for name, args in tool_calls
        ]
        return data
    if kind == "openai-responses":
        data = wire("openai_responses_function_calls.json")
        reasoning, template = data["output"]  # a reasoning model: reasoning, then the call
        items: list[dict[str, Any]] = [reasoning]
        if text:
            items.append(_responses_message(text))
        for name, args in tool_calls:
            n = next(_ids)
            items.append(
                {
                    **copy.deepcopy(template),
                    "id": f"fc_{n}",
                    "call_id": f"call_{n}",
                    "name": name,
                    "arguments": json.dumps(args),
                }
            )
        data["output"] = items
        return data
    if kind == "anthropic":
        data = wire("anthropic_tool_use.json")
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        blocks += [
            {"type": "tool_use", "id": f"toolu_{next(_ids):04d}", "name": name, "input": args}
            for name, args in tool_calls
        ]
        data["content"] = blocks
        return data
    raise ValueError(kind)


def answer(kind: str, text: str) -> dict[str, Any]:
    """A vendor answer (for ``kind``) that ends the run with ``text``."""
    if kind in ("openai", "compat"):
        data = wire("openai_chat_text.json" if kind == "openai" else "compat_text.json")
        data["choices"][0]["message"]["content"] = text
        return data
    if kind == "openai-responses":
        data = wire("openai_responses_text.json")
        data["output"] = [_responses_message(text)]
        return data
    data = wire("anthropic_text.json")
    data["content"] = [{"type": "text", "text": text}]
    return data


def _responses_message(text: str) -> dict[str, Any]:
    item: dict[str, Any] = copy.deepcopy(wire("openai_responses_text.json")["output"][0])
    item["content"][0]["text"] = text
    return item


class VendorServer:
    """Answers POSTs to /v1/chat/completions, /v1/responses and /v1/messages from a script."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: deque[Any] = deque()
        self.port = 0

    def play(self, *answers: Any) -> None:
        """Queue answers: a JSON body, or ``(status, body)``."""
        self.script.extend(answers)

    def bodies(self) -> list[dict[str, Any]]:
        return [r["body"] for r in self.requests]

    async def handle(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.requests.append(
            {"path": request.url.path, "headers": dict(request.headers), "body": body}
        )
        if not self.script:
            error = {"error": {"type": "invalid_request_error", "message": "script exhausted"}}
            return JSONResponse(error, status_code=400)
        item = self.script.popleft()
        status, data = item if isinstance(item, tuple) else (200, item)
        return JSONResponse(data, status_code=status)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def base_url(self, kind: str) -> str:
        """What the SDK takes as base URL for ``kind`` (Anthropic's SDK adds /v1 itself)."""
        return self.url if kind == "anthropic" else f"{self.url}/v1"

    def provider(self, kind: str, model: str = "test-model") -> Provider:
        return provider_for(
            f"{kind}:{model}", base_url=self.base_url(kind), api_key="test-key", max_retries=0
        )


@pytest.fixture(scope="session")
def _vendor_server() -> Iterator[VendorServer]:
    vendor = VendorServer()
    paths = ("/v1/chat/completions", "/v1/responses", "/v1/messages")
    app = Starlette(routes=[Route(p, vendor.handle, methods=["POST"]) for p in paths])
    with serve(app) as base:
        vendor.port = int(base.rpartition(":")[2])
        yield vendor


@pytest.fixture
def vendor(_vendor_server: VendorServer) -> VendorServer:
    """The fake vendor server, with an empty script and request log."""
    _vendor_server.requests.clear()
    _vendor_server.script.clear()
    return _vendor_server


ADD_DRAFT: dict[str, Any] = {
    "name": "add",
    "description": "Add two integers, plus an optional third.",
    "parameters": {
        "type": "object",
        "properties": {
            "a": {"type": "integer"},
            "b": {"type": "integer"},
            "c": {"type": "integer", "default": 0},
        },
        "required": ["a", "b"],
        "additionalProperties": False,
    },
    "code": "export function handler({ a, b, c = 0 }) { return a + b + c; }",
    "tests": [{"input": {"a": 2, "b": 3}, "expected": 5}],
}

DOUBLE_DRAFT: dict[str, Any] = {
    "name": "double",
    "description": "Double a number.",
    "parameters": {
        "type": "object",
        "properties": {"x": {"type": "number"}},
        "required": ["x"],
        "additionalProperties": False,
    },
    "code": "export function handler({ x }) { return x * 2; }",
    "tests": [{"input": {"x": 2}, "expected": 4}, {"input": {"x": -1.5}, "expected": -3}],
}


@pytest.fixture
def foundry(foundry: Foundry) -> Foundry:
    """The shared foundry (tests/conftest.py) holding the active tool ``add``."""
    created = foundry.create_tool(ADD_DRAFT)
    assert created.status == "active", created.to_dict()
    return foundry
