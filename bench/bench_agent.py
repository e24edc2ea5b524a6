"""Agent loop benchmark: what one tool-using turn costs besides the model.

    .venv/bin/python bench/bench_agent.py [--runs 40]

A loopback HTTP server answers in each vendor's wire format (a tool call to ``add``, then a
final text once the tool result is back). For every provider kind it prints the median wall
time of one two-turn run through the official SDK, the real loop, sandbox and registry
(transcript stored each turn), next to two baselines measured in the same process: one bare SDK
request to the same server, and one bare ``Foundry.call`` of the tool. The loop's own share is
run - 2 x request - call.
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from toolfoundry import Foundry
from toolfoundry.agent import provider_for, run_agent

ARGS = {"a": 2, "b": 40}
DRAFT = {
    "name": "add",
    "description": "Add two integers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "required": ["a", "b"],
    },
    "code": "export function handler({ a, b }) { return a + b; }",
    "tests": [{"input": {"a": 1, "b": 2}, "expected": 3}],
}
USAGE_CHAT = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}


def chat(body: dict[str, Any]) -> dict[str, Any]:
    done = body["messages"][-1]["role"] == "tool"
    message: dict[str, Any] = {"role": "assistant", "content": "42" if done else None}
    if not done:
        message["tool_calls"] = [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "add", "arguments": json.dumps(ARGS)},
            }
        ]
    choice = {"index": 0, "message": message, "finish_reason": "stop" if done else "tool_calls"}
    return {
        "id": "c",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [choice],
        "usage": USAGE_CHAT,
    }


def responses(body: dict[str, Any]) -> dict[str, Any]:
    done = body["input"][-1].get("type") == "function_call_output"
    item = (
        {
            "type": "message",
            "id": "msg_1",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "42", "annotations": []}],
        }
        if done
        else {
            "type": "function_call",
            "id": "fc_1",
            "call_id": "call_1",
            "name": "add",
            "arguments": json.dumps(ARGS),
            "status": "completed",
        }
    )
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "status": "completed",
        "model": "m",
        "output": [item],
        "usage": {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15},
    }


def messages(body: dict[str, Any]) -> dict[str, Any]:
    last = body["messages"][-1]["content"]
    done = isinstance(last, list) and any(b.get("type") == "tool_result" for b in last)
    block = (
        {"type": "text", "text": "42"}
        if done
        else {"type": "tool_use", "id": "toolu_1", "name": "add", "input": ARGS}
    )
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [block],
        "stop_reason": "end_turn" if done else "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


ROUTES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "/v1/chat/completions": chat,
    "/v1/responses": responses,
    "/v1/messages": messages,
}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # headers and body go out as two writes: without this, Nagle + delayed ACK add ~40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        data = json.dumps(ROUTES[self.path](body)).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm up (imports, connections, compiled module)
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    runs = parser.parse_args().runs
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    with tempfile.TemporaryDirectory() as tmp:
        fd = Foundry.open(f"sqlite:///{Path(tmp) / 'bench.db'}")
        assert fd.create_tool(DRAFT).status == "active"
        call_ms = median_ms(lambda: fd.call("add", ARGS), runs)
        print(f"bare Foundry.call(add): {call_ms:.2f} ms p50")
        print(f"{'kind':18} {'run p50':>10} {'request p50':>12} {'loop share':>11}")
        for kind in ("openai", "openai-responses", "anthropic", "compat"):
            base = url if kind == "anthropic" else f"{url}/v1"
            provider = provider_for(f"{kind}:m", base_url=base, api_key="k", max_retries=0)
            first = _first_request()
            request_ms = median_ms(lambda p=provider, m=first: p.complete(m, []), runs)
            run_ms = median_ms(lambda p=provider: run_agent("add 2 and 40", p, fd), runs)
            share = run_ms - 2 * request_ms - call_ms
            print(f"{kind:18} {run_ms:8.1f} ms {request_ms:9.1f} ms {share:8.1f} ms")
        fd.close()
    server.shutdown()


def _first_request() -> list[Any]:
    from toolfoundry.agent.providers import Message

    return [Message("system", "s"), Message("user", "add 2 and 40")]


if __name__ == "__main__":
    main()
