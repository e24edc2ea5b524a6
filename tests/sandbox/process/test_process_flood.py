"""A Python tool flooding the fetch-request pipe: the call still ends by its deadline.

The runner is not a boundary, so a tool can write fetch frames to its request pipe as fast as
the kernel takes them and never read an answer. The host reads one request at a time (the next
once the last answer is in the pipe), so the flood stalls the tool, not the host; a tool that
sends twice its ``[fetch] max_requests`` is ended as a flood (``fetch_frames_cap``), whatever
that limit is configured to. Surfaces: ``toolfoundry executor run`` (no network capability:
each frame is refused), the executors with fixtures answering, and a registered tool's
``Foundry.call`` on SQLite and PostgreSQL.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from toolfoundry import Foundry
from toolfoundry.config import parse_config
from toolfoundry.registry import NewVersion, Registry, VersionStatus
from toolfoundry.sandbox.host.fixtures import FixtureFetch
from toolfoundry.sandbox.process.bwrap import BwrapExecutor
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.pool import WarmPool
from toolfoundry.sandbox.process.watch import fetch_frames_cap
from toolfoundry.spec import Capabilities
from toolfoundry.spec.limits import FETCH_REQUESTS, FETCH_REQUESTS_BOUND

BUDGET_S = 3.0
# The flood's call must end within half a second of its budget (measured: 3.00 s; the host
# answering every frame into one growing bytes object took 3.7-10.8 s for this 3 s budget).
ENDS_BY_S = BUDGET_S + 0.5

# Writes minimal fetch frames to the request pipe (argv[2]) and never reads an answer.
FLOOD = """
def handler(a):
    os = __import__('os', {})
    fd = int(__import__('sys', {}).argv[2])
    chunk = (b'TFR1' + (2).to_bytes(8, 'big') + b'{}') * 4096  # 4681 requests in a pipe's 64 KiB
    while True:
        os.write(fd, chunk)
"""

# Plain code: fetch in a loop, each refusal caught (the fixtures allow 20 requests).
POLITE_FLOOD = """
def handler(a):
    refused = 0
    while True:
        try:
            fetch('https://api.example.com/x')
        except Exception:
            refused += 1
"""


def test_a_flood_through_the_cli_ends_at_its_budget(tmp_path: Path) -> None:
    tool = tmp_path / "flood.py"
    tool.write_text(FLOOD)
    command = ["executor", "run", str(tool), "--timeout", str(BUDGET_S), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "toolfoundry", *command],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    # no network: each frame is refused at once, and the default limit's flood ends it
    assert result["error"]["kind"] == "runtime_error"
    assert f"more than {fetch_frames_cap(FETCH_REQUESTS)} fetch" in result["error"]["message"]
    assert result["duration_ms"] <= ENDS_BY_S * 1000, result


@pytest.fixture(params=["cold", "warm"])
def executor(request: pytest.FixtureRequest, cold: BwrapExecutor, pool: WarmPool) -> Any:
    return cold if request.param == "cold" else pool


def test_a_flood_answered_by_fixtures_ends_at_its_budget(executor: Any) -> None:
    # the highest limit: its flood's cap lies past what the answer pipe holds, so it stalls
    most = int(FETCH_REQUESTS_BOUND.high)
    fixtures = FixtureFetch([{"url": "https://api.example.com/x", "body": "ok"}], max_requests=most)
    started = time.monotonic()
    out = executor.run(FLOOD, {}, ProcessLimits(timeout_s=BUDGET_S), fetch=fixtures)
    elapsed = time.monotonic() - started
    assert out.error is not None
    assert out.error.kind.value == "timeout"
    assert elapsed <= ENDS_BY_S, f"a {BUDGET_S} s call took {elapsed:.2f} s"
    # one request at a time: only what fits the answer pipe was answered, not the flood
    assert out.details["fetches"] < 5000


def test_a_tool_that_keeps_asking_meets_the_frame_cap(cold: BwrapExecutor) -> None:
    fixtures = FixtureFetch([{"url": "https://api.example.com/x", "body": "ok"}])
    out = cold.run(POLITE_FLOOD, {}, ProcessLimits(timeout_s=60), fetch=fixtures)
    assert out.error is not None
    assert out.error.kind.value == "runtime_error"
    cap = fetch_frames_cap(fixtures.max_requests)
    assert f"more than {cap} fetch requests" in out.error.message
    assert f"after its limit of {fixtures.max_requests}" in out.error.message
    assert out.details["fetches"] == cap
    assert out.duration_ms < 30_000


# Asks `n` times for a host it was not approved for: each request counts, and is refused.
ASKS_ELSEWHERE = """
def handler(a):
    refused = 0
    for _ in range(a['n']):
        try:
            fetch('https://elsewhere.example/x')
        except Exception:
            refused += 1
    return refused
"""


def test_the_configured_max_requests_is_the_tier_s_own(db_url: str) -> None:
    """``[fetch] max_requests`` past the default holds on the Python tier as on the
    JavaScript one: a tool allowed 5000 requests makes 4500 (refused, here) and goes on."""
    registry = Registry.open(db_url)
    registry.add_version(
        NewVersion(
            name="asker",
            code=ASKS_ELSEWHERE,
            description="Asks a host it may not reach, n times",
            parameters={"type": "object"},
            status=VersionStatus.PENDING_APPROVAL,
            language="python",
            capabilities=Capabilities(network=("api.example.com",)),
        )
    )
    config = parse_config({"fetch": {"max_requests": 5000}, "limits": {"timeout_s": 60}})
    with Foundry(registry, config=config) as fd:
        assert fd.approve("asker", by="alice").status == "active"
        out = fd.call("asker", {"n": 4500})
        assert out.ok, out.to_dict()
        assert out.value == 4500
        # a tool that asks on after its refusals still meets the flood's end, from that limit
        flood = fd.call("asker", {"n": 10_001})
    assert flood.error is not None
    assert flood.error.kind.value == "runtime_error"
    assert "5000" in flood.error.message


def test_a_registered_flooding_tool_ends_by_its_budget_on_each_store(db_url: str) -> None:
    # the static check refuses this code, so it is registered through the registry's own API
    # (as a row written by an older build or by hand would be), then approved by a person
    registry = Registry.open(db_url)
    registry.add_version(
        NewVersion(
            name="flood",
            code=FLOOD,
            description="Floods its fetch-request pipe",
            parameters={"type": "object"},
            status=VersionStatus.PENDING_APPROVAL,
            language="python",
        )
    )
    config = parse_config({"limits": {"timeout_s": BUDGET_S}})
    with Foundry(registry, config=config) as fd:
        assert fd.approve("flood", by="alice").status == "active"
        started = time.monotonic()
        out = fd.call("flood", {})
        elapsed = time.monotonic() - started
    assert out.error is not None
    assert out.error.kind.value == "runtime_error"  # no network: the default limit's flood
    assert f"more than {fetch_frames_cap(FETCH_REQUESTS)} fetch" in out.error.message
    # the first Python call of this foundry starts its pool: the call's own time is the bound
    assert out.duration_ms <= ENDS_BY_S * 1000, f"a {BUDGET_S} s call took {elapsed:.2f} s"
