"""The evaluation through the real provider adapters and SDKs, against a loopback server.

The server speaks the OpenAI Chat Completions and Anthropic Messages wire formats; as the
"model" it applies a scripted policy to the prompt it receives, so the whole path is real:
prompt -> official SDK -> HTTP -> tool call on the wire -> adapter -> structural score.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from click.testing import CliRunner

from toolfoundry.agent.evaluation.scripted import POLICIES
from toolfoundry.cli import main

BLOCK = re.compile(r"```json\n(.*?)\n```", re.DOTALL)


class VendorHandler(BaseHTTPRequestHandler):
    requests: list[dict[str, Any]]

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append({"path": self.path, "body": body})
        if body["model"] == "broken-model":
            error = {"type": "invalid_request_error", "message": "model is broken"}
            self._send(400, {"type": "error", "error": error})
            return
        policy = POLICIES[body["model"].removesuffix("-model")]
        if self.path.endswith("/chat/completions"):
            prompt = body["messages"][-1]["content"]
        else:
            content = body["messages"][-1]["content"]
            prompt = content if isinstance(content, str) else content[0]["text"]
        blocks = BLOCK.findall(prompt)
        answer = policy(json.loads(blocks[0]), json.loads(blocks[-1]))
        assert answer is not None
        name, arguments = answer
        if self.path.endswith("/chat/completions"):
            self._send(200, chat_completion(name, arguments))
        else:
            self._send(200, anthropic_message(name, arguments))

    def _send(self, status: int, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


def chat_completion(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    call = {"id": "call_1", "type": "function"}
    call["function"] = {"name": name, "arguments": json.dumps(arguments)}  # type: ignore[assignment]
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920},
    }


def anthropic_message(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": name, "input": arguments}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 900, "output_tokens": 20},
    }


@pytest.fixture
def vendor(
    loopback_http: Callable[[type[BaseHTTPRequestHandler]], str],
) -> tuple[str, list[dict[str, Any]]]:
    requests: list[dict[str, Any]] = []
    handler = type("Handler", (VendorHandler,), {"requests": requests})
    return f"http://{loopback_http(handler)}", requests


def run_eval(model: str, env: dict[str, str], *extra: str) -> tuple[int, str]:
    result = CliRunner(env=env).invoke(
        main, ["eval", "degradation", "--model", model, "--json", *extra]
    )
    return result.exit_code, result.output


def test_openai_chat(vendor: tuple[str, list[dict[str, Any]]]) -> None:
    url, requests = vendor
    env = {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": f"{url}/v1"}
    code, out = run_eval("openai:correct-model", env)
    assert code == 0, out
    assert json.loads(out)["overall"] == {"correct": 16, "total": 16, "share": 1.0}
    first = requests[0]["body"]
    assert requests[0]["path"] == "/v1/chat/completions"
    assert first["tool_choice"] == "required"
    assert [t["function"]["name"] for t in first["tools"]][:2] == ["gather_input", "leave_step"]
    assert len(first["tools"]) == 7
    assert "describe JSON" in first["messages"][-1]["content"]
    code, out = run_eval("openai:naive-model", env)
    assert json.loads(out)["by_status"]["skipped"]["share"] == 0.0


def test_anthropic_messages(vendor: tuple[str, list[dict[str, Any]]]) -> None:
    url, requests = vendor
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": url}
    code, out = run_eval("anthropic:correct-model", env)
    assert code == 0, out
    assert json.loads(out)["overall"]["share"] == 1.0
    assert requests[0]["path"] == "/v1/messages"
    assert {t["name"] for t in requests[0]["body"]["tools"]} >= {"gather_input", "stop"}
    code, out = run_eval("anthropic:naive-model", env, "--status", "blocked")
    data = json.loads(out)
    assert data["overall"] == {"correct": 0, "total": 4, "share": 0.0}


def test_vendor_refusals_are_scored_and_a_run_with_no_answer_fails(
    vendor: tuple[str, list[dict[str, Any]]],
) -> None:
    url, _ = vendor
    env = {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": f"{url}/v1"}
    args = ["eval", "degradation", "--model", "openai:broken-model", "--status", "empty"]
    as_json, as_table = (
        CliRunner(env=env).invoke(main, args + extra) for extra in (["--json"], [])
    )
    for result in (as_json, as_table):
        # every call failed: not a 0 % score, but an error with the reason, exit 1
        assert result.exit_code == 1, result.output
        # the SDK's words for the refusal: recent openai releases give the error's message,
        # older ones (the lowest [agents] allows) the whole error body, which holds it
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith(
            "Error: every call to openai:broken-model failed (4 of 4), so nothing was scored: "
            "Error code: 400 - "
        ), last
        assert "model is broken" in last
    data = json.loads(as_json.stdout)
    assert {s["outcome"] for s in data["scenarios"]} == {"provider_error"}  # each one scored
    assert "model is broken" in data["scenarios"][0]["detail"]
    assert as_table.stdout == ""  # no table of 0 %


def test_missing_key_is_a_usage_error() -> None:
    result = CliRunner(env={"OPENAI_API_KEY": ""}).invoke(
        main, ["eval", "degradation", "--model", "openai:gpt-4o-mini"]
    )
    assert result.exit_code == 2
    assert "OPENAI_API_KEY" in result.output
