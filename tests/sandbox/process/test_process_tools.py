"""Well-behaved Python tools: stdlib work, an allowed installed package, async handlers, and
the structured errors of ordinary mistakes, on cold jails and warm workers alike."""

from __future__ import annotations

import time
from typing import Any

import pytest

from toolfoundry.sandbox.process.bwrap import BwrapExecutor
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.pool import WarmPool

STDLIB_TOOL = """
import csv, io, json, re, statistics
from datetime import date, timedelta

def handler(args):
    rows = list(csv.DictReader(io.StringIO(args["csv"])))
    amounts = [float(r["amount"]) for r in rows]
    start = date.fromisoformat(args["start"])
    print(f"{len(rows)} rows")
    return {
        "mean": statistics.mean(amounts),
        "median": statistics.median(amounts),
        "due": (start + timedelta(days=30)).isoformat(),
        "codes": sorted(set(re.findall(r"[A-Z]{3}", args["csv"]))),
        "echo": json.loads(json.dumps(rows[0])),
    }
"""
CSV = "id,amount,currency\n1,10.5,EUR\n2,20,USD\n3,30,EUR\n"


@pytest.fixture(params=["cold", "warm"])
def executor(request: pytest.FixtureRequest, cold: BwrapExecutor, pool: WarmPool) -> Any:
    return cold if request.param == "cold" else pool


def test_stdlib_tool(executor: Any) -> None:
    out = executor.run(STDLIB_TOOL, {"csv": CSV, "start": "2024-01-31"}, ProcessLimits())
    assert out.ok, out
    assert out.value == {
        "mean": pytest.approx(20.1666666),
        "median": 20.0,
        "due": "2024-03-01",
        "codes": ["EUR", "USD"],
        "echo": {"id": "1", "amount": "10.5", "currency": "EUR"},
    }
    assert out.logs == ("3 rows",)
    assert out.duration_ms > 0


def test_async_handler(executor: Any) -> None:
    out = executor.run("async def handler(a):\n    return a['x'] * 2\n", {"x": 21}, ProcessLimits())
    assert out.ok
    assert out.value == 42


def test_allowed_installed_package() -> None:
    code = "import yaml\ndef handler(a):\n    return yaml.safe_load(a['doc'])\n"
    limits = ProcessLimits(allowed_packages=("yaml",))
    with WarmPool(1, packages=("yaml",)) as warm:
        out = warm.run(code, {"doc": "a: [1, 2]\nb: x\n"}, limits)
    assert out.ok, out
    assert out.value == {"a": [1, 2], "b": "x"}
    refused = BwrapExecutor().run(code, {"doc": "a: 1"}, ProcessLimits())
    assert refused.error is not None
    assert refused.error.kind.value == "capability_denied"


def test_unknown_package_is_refused() -> None:
    limits = ProcessLimits(allowed_packages=("no_such_package_xyz",))
    out = BwrapExecutor().run("def handler(a):\n    return 1\n", {}, limits)
    assert out.error is not None
    assert out.error.kind.value == "capability_denied"
    assert "not installed" in out.error.message


@pytest.mark.parametrize(
    ("code", "kind", "text"),
    [
        (
            "def handler(a):\n    return a['missing']\n",
            "runtime_error",
            "KeyError: 'missing' (line 2)",
        ),
        (
            "def handler(a):\n    raise ValueError('bad input')\n",
            "runtime_error",
            "ValueError: bad input",
        ),
        ("def handler(a):\n    return {1, 2}\n", "runtime_error", "not JSON-serialisable"),
        ("def handler(a):\n    return float('nan')\n", "runtime_error", "not JSON-serialisable"),
        ("x = 1\n", "runtime_error", "no handler"),
        ("def handler(a):\n    raise SystemExit(3)\n", "runtime_error", "exited (3)"),
        ("import os\ndef handler(a):\n    return 1\n", "capability_denied", "'os' is not allowed"),
        (
            "from urllib import request\ndef handler(a):\n    return 1\n",
            "capability_denied",
            "urllib",
        ),
        ("def handler(a):\n    return handler(a)\n", "runtime_error", "RecursionError"),
        ("def handler(a)\n", "runtime_error", "SyntaxError"),
    ],
)
def test_mistakes_are_structured(cold: BwrapExecutor, code: str, kind: str, text: str) -> None:
    out = cold.run(code, {}, ProcessLimits())
    assert not out.ok
    assert out.error is not None
    assert out.error.kind.value == kind
    assert text in out.error.message


def test_arguments_must_be_json(cold: BwrapExecutor) -> None:
    out = cold.run("def handler(a):\n    return 1\n", {"x": object()}, ProcessLimits())
    assert out.error is not None
    assert out.error.kind.value == "invalid_arguments"


def test_pool_refills_off_the_call_path(pool: WarmPool) -> None:
    assert pool.wait_ready(30)
    assert pool.idle() == pool.size
    started = time.monotonic()
    for n in range(4):
        assert pool.run("def handler(a):\n    return a\n", n, ProcessLimits()).value == n
    assert pool.wait_ready(30), "the pool did not refill"
    assert time.monotonic() - started < 30


def test_parallel_calls(pool: WarmPool) -> None:
    from concurrent.futures import ThreadPoolExecutor

    code = (
        "import hashlib\ndef handler(a):\n    return hashlib.sha256(str(a).encode()).hexdigest()\n"
    )
    with ThreadPoolExecutor(4) as threads:
        results = list(threads.map(lambda n: pool.run(code, n, ProcessLimits()), range(8)))
    assert all(r.ok for r in results)
    assert len({r.value for r in results}) == 8


def test_probe_says_whether_jails_work(tmp_path: Any) -> None:
    from toolfoundry.sandbox.process import probe
    from toolfoundry.sandbox.process.jail import JailConfig

    assert probe() is None
    missing = probe(JailConfig(bwrap=str(tmp_path / "no-bwrap")))
    assert missing is not None
    assert "no-bwrap" in missing
    broken = probe(JailConfig(interpreter="/usr/bin/no-such-python"))
    assert broken is not None
    assert "no-such-python" in broken
