"""Code mode over MCP stdio with the official client: one run_js snippet calls three registry
tools (one a network tool approved with a host-side credential, answering from a loopback
server) and returns one aggregate; the credential reaches the client nowhere; usage and audit
name the run as each inner call's caller."""

from __future__ import annotations

import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from tests.factories import McpSessionFactory
from tests.shared_drafts import word_count_draft

from toolfoundry import Foundry

from .test_mcp_support import by_name, structured, text_of

SECRET = "Bearer tf-mcp-secret-5e0a97c3d2"


class Weather(BaseHTTPRequestHandler):
    """Answers only with the credential, and reflects it back in the body."""

    def do_GET(self) -> None:
        auth = self.headers.get("Authorization")
        city = self.path.rpartition("=")[2]
        ok = auth == SECRET
        body = {"city": city, "temp": len(city), "echo": auth} if ok else {"error": "no key"}
        data = json.dumps(body).encode()
        self.send_response(200 if ok else 401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


SNIPPET = """
export async function handler({ text, city }) {
  const words = await tools.word_count({ text });
  const loud = await tools.shout({ text });
  const weather = await tools.weather({ city });
  let later;
  try { await tools.later({}); } catch (e) { later = e instanceof ToolError ? e.kind : "?"; }
  return { words, loud, temp: weather.temp, echo: weather.echo, later };
}
"""


def set_up(tmp_path: Path, server: str) -> str:
    config = tmp_path / "toolfoundry.toml"
    config.write_text(
        f'[limits]\ntimeout_s = 20.0\n[fetch]\nallow_http = ["{server}"]\n'
        'allow_private = ["127.0.0.1"]\n'
        f'[[fetch.credentials]]\nhost = "{server}"\nheader = "Authorization"\n'
        'env = "TF_MCP_TOKEN"\n'
    )
    db = f"sqlite:///{tmp_path / 'registry.db'}"
    weather = {
        "name": "weather",
        "description": "Current temperature of a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "code": (
            "export async function handler({ city }) {\n"
            f"  const r = await fetch('http://{server}/w?city=' + city);\n"
            "  const b = await r.json();\n"
            "  return { temp: b.temp, echo: b.echo };\n"
            "}\n"
        ),
        "capabilities": {"network": [server], "credentials": [server]},
        "fixtures": [{"url": f"http://{server}/w?city=Oslo", "body": {"temp": 4, "echo": None}}],
        "tests": [{"input": {"city": "Oslo"}, "expected": {"temp": 4, "echo": None}}],
    }
    shout = {
        **word_count_draft(),
        "name": "shout",
        "description": "Upper-case a text.",
        "code": "export function handler({ text }) { return text.toUpperCase(); }",
        "tests": [{"input": {"text": "hi"}, "expected": "HI"}],
    }
    later = {
        **weather,
        "name": "later",
        "description": "Waits for a person's approval.",
        "distinct_from": {"name": "weather", "why": "a copy that is never approved"},
    }
    with Foundry.open(db, config=config) as fd:
        assert fd.create_tool(word_count_draft()).status == "active"
        assert fd.create_tool(shout).status == "active"
        assert fd.create_tool(weather).status == "pending_approval"
        assert fd.approve("weather", by="alice").status == "active"
        assert fd.create_tool(later).status == "pending_approval"  # never approved
    return db


def test_run_js_over_stdio_calls_three_tools_and_returns_one_aggregate(
    tmp_path: Path,
    loopback_http: Callable[[type[BaseHTTPRequestHandler]], str],
    monkeypatch: pytest.MonkeyPatch,
    mcp_session: McpSessionFactory,
) -> None:
    monkeypatch.setenv("TF_MCP_TOKEN", SECRET)  # the server's environment, read at send time
    server = loopback_http(Weather)
    db = set_up(tmp_path, server)
    received: list[str] = []

    async def scenario() -> None:
        async with mcp_session(db, tmp_path) as (session, _):
            listing = await session.list_tools()
            received.append(listing.model_dump_json())
            assert {"word_count", "shout", "weather", "run_js"} <= set(by_name(listing))
            result = await session.call_tool(
                "run_js", {"code": SNIPPET, "args": {"text": "tools that last", "city": "Oslo"}}
            )
            received.append(result.model_dump_json())
            assert isinstance(result, types.CallToolResult)
            assert not result.is_error, text_of(result)
            out = structured(result)
            assert out["value"] == {
                "words": 3,
                "loud": "TOOLS THAT LAST",
                "temp": 4,
                "echo": "[redacted]",
                "later": "not_active",
            }
            received.append(out["run_id"])

    anyio.run(scenario)
    assert not any(SECRET in text for text in received)
    assert not any("tf-mcp-secret" in text for text in received)
    run_id = received[-1]
    with Foundry.open(db, config=tmp_path / "toolfoundry.toml") as fd:
        for name in ("word_count", "shout", "weather", "later"):
            [row] = [a for a in fd.audit(name) if a.event.value == "called"]
            assert (row.caller, row.actor) == (f"run:{run_id}", "agent"), name
            assert fd.usage(name).callers == {"run_js": 1}
        assert fd.usage("later").failures == {"not_active": 1}
        run = fd.registry.code_run(run_id)
        assert run is not None
        assert run.inner_calls == 4
