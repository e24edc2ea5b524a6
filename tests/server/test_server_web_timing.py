"""How long the page and the API take with many tools (slow; prints its figures).

.venv/bin/pytest -m slow tests/server/test_server_web_timing.py -s
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from toolfoundry import Foundry
from toolfoundry.registry import NewVersion, VersionStatus

from .test_server_web_support import SHOUT, compose

pytestmark = pytest.mark.slow

TOOLS = 200
CALLS_PER_TOOL = 20


def _median_ms(action: Callable[[], object], runs: int = 15) -> float:
    action()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def test_page_and_api_latency_with_many_tools(tmp_path: Path) -> None:
    with Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}") as fd:
        for i in range(TOOLS):
            fd.registry.add_version(
                NewVersion(
                    name=f"tool_{i:03d}",
                    code=SHOUT["code"],
                    description=f"Tool number {i}",
                    parameters=SHOUT["parameters"],
                    status=VersionStatus.ACTIVE if i % 10 else VersionStatus.PENDING_APPROVAL,
                    tests=SHOUT["tests"],
                )
            )
        for i in range(1, TOOLS, 10):
            for n in range(CALLS_PER_TOOL):
                fd.call(f"tool_{i:03d}", {"text": "x"} if n % 4 else {"text": 1})
        client = TestClient(compose(fd), base_url="http://127.0.0.1:8000")
        figures = {
            "GET /ui/ (tools list)": _median_ms(lambda: client.get("/ui/")),
            "GET /api/tools": _median_ms(lambda: client.get("/api/tools")),
            "GET /ui/approvals": _median_ms(lambda: client.get("/ui/approvals")),
            "GET /ui/tools/tool_001/v/1": _median_ms(lambda: client.get("/ui/tools/tool_001/v/1")),
            "GET /api/tools/tool_001": _median_ms(lambda: client.get("/api/tools/tool_001")),
            "GET /ui/audit": _median_ms(lambda: client.get("/ui/audit")),
            "GET /api/openapi.json": _median_ms(lambda: client.get("/api/openapi.json")),
        }
    print(f"\nmedian over 15 requests, {TOOLS} tools, {TOOLS // 10 * CALLS_PER_TOOL} calls:")
    for what, ms in figures.items():
        print(f"  {what:32} {ms:8.1f} ms")
    # Generous bounds: a regression to per-tool N+1 work of seconds would trip them.
    assert figures["GET /ui/ (tools list)"] < 1000
    assert figures["GET /ui/tools/tool_001/v/1"] < 500
