"""A hostile ``pattern`` cannot hold the server: the real HTTP API (uvicorn on loopback).

Before base/json_schema.py, Python's ``re`` validated ``^(a+)+$`` against the arguments, could
not be interrupted and held the GIL: one 30-character argument froze every other request for
minutes. Patterns are now matched in linear time, so the hostile call is refused in
milliseconds and the server keeps answering everyone else.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from toolfoundry import Foundry

from .test_server_web_support import compose, serve

HOSTILE = "^(a+)+$"
EVIL = "a" * 30 + "!"


@pytest.fixture
def base(tmp_path: Path) -> Iterator[str]:
    with Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}") as fd:
        draft = {
            "name": "letters",
            "description": "Count the words made of a's.",
            "parameters": {
                "type": "object",
                "properties": {"words": {"type": "array", "items": {"pattern": HOSTILE}}},
                "required": ["words"],
            },
            "code": "export function handler({ words }) { return words.length }",
            "tests": [{"input": {"words": ["aa", "a"]}, "expected": 2}],
        }
        assert fd.create_tool(draft).status == "active"
        with serve(compose(fd)) as url:
            yield url


def test_other_requests_are_answered_while_a_hostile_pattern_is_validated(base: str) -> None:
    # each word alone took Python's re minutes; the request's own work stays small on purpose
    hostile = {"args": {"words": [EVIL] * 100 + ["a" * 200_000 + "!"]}}
    answers: list[tuple[int, float, dict[str, Any]]] = []

    def attack() -> None:
        with httpx.Client(base_url=base, timeout=60) as client:
            for _ in range(5):
                started = time.perf_counter()
                r = client.post("/api/tools/letters/call", json=hostile)
                answers.append((r.status_code, time.perf_counter() - started, r.json()))

    attacker = threading.Thread(target=attack)
    attacker.start()
    latencies: list[float] = []
    with httpx.Client(base_url=base, timeout=60) as client:
        while attacker.is_alive() or not latencies:
            started = time.perf_counter()
            assert client.get("/api/tools").status_code == 200
            latencies.append(time.perf_counter() - started)
    attacker.join()
    assert len(answers) == 5
    assert max(latencies) < 1.0, (latencies, [elapsed for _, elapsed, _ in answers])
    for status, elapsed, body in answers:
        assert status == 422
        assert body["error"]["kind"] == "invalid_arguments"
        assert body["error"]["problems"][0]["path"] == "$.words[0]"
        assert elapsed < 1.0, elapsed


def test_the_hostile_input_validates_in_milliseconds(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as client:
        started = time.perf_counter()
        r = client.post("/api/tools/letters/call", json={"args": {"words": [EVIL]}})
        elapsed = time.perf_counter() - started
        assert r.status_code == 422
        assert r.json()["error"]["problems"] == [
            {"path": "$.words[0]", "message": f"{EVIL!r} does not match {HOSTILE!r}"}
        ]
        ok = client.post("/api/tools/letters/call", json={"args": {"words": ["aaa"]}})
        assert ok.json()["value"] == 1
    assert elapsed < 0.5, elapsed


def test_a_hostile_output_schema_is_decided_in_milliseconds() -> None:
    from toolfoundry.server.mcp.results import call_tool_result
    from toolfoundry.spec import CallResult

    returns = {"type": "object", "properties": {"word": {"type": "string", "pattern": HOSTILE}}}
    started = time.perf_counter()
    result = call_tool_result(CallResult.success({"word": EVIL}), returns)
    assert time.perf_counter() - started < 0.5
    assert result.is_error is True
    assert result.structured_content is not None
    error = result.structured_content["error"]
    assert error["kind"] == "runtime_error"
    assert f"$.word: {EVIL!r} does not match {HOSTILE!r}" in error["message"]
    assert call_tool_result(CallResult.success({"word": "aaa"}), returns).is_error is False
    # a schema stored before create time compiled it: a clear error, not a crash
    stored = {"type": "string", "pattern": "(?=a)"}
    old = call_tool_result(CallResult.success("a"), stored)
    assert old.is_error is True
    assert "cannot be used" in old.structured_content["error"]["message"]
