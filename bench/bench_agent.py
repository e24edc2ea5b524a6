"""Agent loop benchmark: what one tool-using turn costs besides the model.

    .venv/bin/python bench/bench_agent.py [--runs 40]

A loopback HTTP server answers in each vendor's wire format (a tool call to ``add``, then a
final text once the tool result is back). For every provider kind it prints the median wall
time of one two-turn run through the official SDK, the real loop, sandbox and registry
(transcript stored each turn). Inside each run the provider's ``complete`` (the SDK request
to the server) and ``Foundry.call`` (the tool) are timed as they happen, so the loop's own
share of that very run is run - time in requests - time in tool calls: never negative, and
free of the noise of baselines measured at another moment. Medians over ``--runs``.
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

from harness import goal_line
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


class Stopwatch:
    """Time spent inside wrapped callables, summed since the last ``reset``."""

    def __init__(self) -> None:
        self.spent = 0.0

    def reset(self) -> None:
        self.spent = 0.0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - started

        return timed


class TimedProvider:
    """A provider whose ``complete`` (one model request) is timed; the rest passes through."""

    def __init__(self, provider: Any, watch: Stopwatch) -> None:
        self._provider = provider
        self.complete = watch.wrap(provider.complete)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._provider, name)


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
        requests, tools = Stopwatch(), Stopwatch()
        fd.call = tools.wrap(fd.call)  # type: ignore[method-assign]
        head = f"{'kind':18} {'run p50':>10} {'requests p50':>13} {'tool p50':>10}"
        print(head + f" {'loop share p50':>15} {'share of run':>13}")
        for kind in ("openai", "openai-responses", "anthropic", "compat"):
            base = url if kind == "anthropic" else f"{url}/v1"
            provider = TimedProvider(
                provider_for(f"{kind}:m", base_url=base, api_key="k", max_retries=0), requests
            )
            run_agent("add 2 and 40", provider, fd)  # warm up (imports, connections, module)
            total, asked, called, share = [], [], [], []
            for _ in range(runs):
                requests.reset()
                tools.reset()
                started = time.perf_counter()
                run_agent("add 2 and 40", provider, fd)
                took = time.perf_counter() - started
                total.append(took * 1000)
                asked.append(requests.spent * 1000)
                called.append(tools.spent * 1000)
                share.append((took - requests.spent - tools.spent) * 1000)
            run_ms, loop_ms = statistics.median(total), statistics.median(share)
            print(
                f"{kind:18} {run_ms:7.1f} ms {statistics.median(asked):10.1f} ms"
                f" {statistics.median(called):7.1f} ms {loop_ms:12.1f} ms"
                f" {loop_ms / run_ms:12.0%}"
            )
            goal_line(f"the loop's own share of a two-turn {kind} run", loop_ms / run_ms * 100, "%")
        fd.close()
    server.shutdown()


if __name__ == "__main__":
    main()
