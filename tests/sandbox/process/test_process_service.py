"""The executor as a service: ``toolfoundry executor serve`` and its HttpExecutor client, over
real loopback HTTP, plus the one-off ``toolfoundry executor run``."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from tests.server.test_server_web_support import serve

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.config import Config
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.pool import WarmPool
from toolfoundry.sandbox.process.remote import HttpExecutor
from toolfoundry.sandbox.process.service import executor_app
from toolfoundry.sandbox.process.wire import limits_from_dict, limits_to_dict

from .test_process_foundry import STATS

TOKEN = "t0ken-for-tests"


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    """A real executor service on a loopback port, backed by a warm pool."""
    with WarmPool(2) as pool, serve(executor_app(pool, TOKEN, ProcessLimits(timeout_s=1.0))) as url:
        yield url


def test_remote_call(service: str) -> None:
    client = HttpExecutor(service, TOKEN)
    out = client.run(
        "def handler(a):\n    print('hi')\n    return a['x'] + 1\n", {"x": 1}, ProcessLimits()
    )
    client.close()
    assert out.ok, out
    assert out.value == 2
    assert out.logs == ("hi",)


def test_remote_errors_keep_their_kind(service: str) -> None:
    with_client = HttpExecutor(service, TOKEN)
    mem = with_client.run(
        "def handler(a):\n    return len(bytearray(8 * 1024 ** 3))\n", {}, ProcessLimits()
    )
    assert mem.error is not None
    assert mem.error.kind.value == "memory_limit"


def test_the_token_is_required(service: str) -> None:
    wrong = HttpExecutor(service, "nope").run(
        "def handler(a):\n    return 1\n", {}, ProcessLimits()
    )
    assert wrong.error is not None
    assert "401" in wrong.error.message
    bare = httpx.post(service + "/v1/run", json={"code": "def handler(a):\n    return 1\n"})
    assert bare.status_code == 401


def test_limits_are_no_looser_than_the_service(service: str) -> None:
    started = time.monotonic()
    out = HttpExecutor(service, TOKEN).run(
        "def handler(a):\n    while True:\n        pass\n", {}, ProcessLimits(timeout_s=60)
    )
    assert out.error is not None
    assert out.error.kind.value == "timeout"
    assert time.monotonic() - started < 10


def test_an_inner_call_s_wait_in_line_crosses_the_wire(service: str) -> None:
    # code mode gives an inner call queue_s (what is left of its outer call's deadline)
    sent = limits_to_dict(ProcessLimits(queue_s=0.5))
    assert limits_from_dict(sent, ProcessLimits()).queue_s == 0.5
    assert limits_from_dict(sent, ProcessLimits(queue_s=0.2)).queue_s == 0.2  # never looser
    assert limits_from_dict(limits_to_dict(ProcessLimits()), ProcessLimits()).queue_s is None
    out = HttpExecutor(service, TOKEN).run(
        "def handler(a):\n    return 1\n", {}, ProcessLimits(queue_s=0.5)
    )
    assert out.ok, out


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "Expecting value"),
        (b'{"args": {}}', "needs code"),
        (b'{"code": "x", "limits": {"cpu_s": -1}}', "positive"),
        (b'{"code": "x", "limits": {"root": true}}', "unknown limits"),
        (b'{"code": "x", "limits": {"queue_s": 0}}', "queue_s must be a positive number or null"),
        (b'{"code": "x", "limits": {"allowed_packages": ["numpy"]}}', "does not offer"),
        (
            b'{"code": "x", "args": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "nests deeper",
        ),  # the gate measures depth (was a RecursionError)
    ],
)
def test_bad_requests_are_400(service: str, body: bytes, message: str) -> None:
    response = httpx.post(
        service + "/v1/run", content=body, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_foundry_on_a_remote_executor(service: str, tmp_path: Path) -> None:
    client = HttpExecutor(service, TOKEN)
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}", config=Config(), executor=client) as fd:
        created = fd.create_tool(STATS)
        assert created.status == "pending_approval", created.to_dict()
        fd.approve("csv_stats", created.version, by="bob")
        out = fd.call("csv_stats", {"csv": "v\n2\n4\n", "column": "v"})
        assert out.ok
        assert out.value == {"mean": 3, "max": 4}
    client.close()


def test_unreachable_service_is_a_runtime_error() -> None:
    out = HttpExecutor("http://127.0.0.1:9", TOKEN).run(
        "def handler(a):\n    return 1\n", {}, ProcessLimits()
    )
    assert out.error is not None
    assert out.error.kind.value == "runtime_error"
    assert "unreachable" in out.error.message


def test_cli_serve_subprocess(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "TOOLFOUNDRY_EXECUTOR_TOKEN": TOKEN}
    process = subprocess.Popen(
        [sys.executable, "-m", "toolfoundry", "executor", "serve", "--http", f"127.0.0.1:{port}"],
        env=env,
        stderr=subprocess.PIPE,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        out = HttpExecutor(url, TOKEN).run(
            "def handler(a):\n    return sorted(a)\n", {"b": 1, "a": 2}, ProcessLimits()
        )
        assert out.ok, out
        assert out.value == ["a", "b"]
    finally:
        process.terminate()
        process.wait(10)


def test_cli_serve_needs_a_token_and_an_address() -> None:
    runner = CliRunner()
    no_token = runner.invoke(
        main,
        ["executor", "serve", "--http", "127.0.0.1:8700"],
        env={"TOOLFOUNDRY_EXECUTOR_TOKEN": ""},
    )
    assert no_token.exit_code == 2
    assert "token is required" in no_token.output
    bad = runner.invoke(main, ["executor", "serve", "--http", "nowhere", "--token", "x"])
    assert bad.exit_code == 2
    assert "HOST:PORT" in bad.output


def test_cli_run(tmp_path: Path) -> None:
    tool = tmp_path / "words.py"
    tool.write_text("import re\ndef handler(a):\n    return len(re.findall(r'\\w+', a['t']))\n")
    runner = CliRunner()
    ok = runner.invoke(main, ["executor", "run", str(tool), "--args", '{"t": "a b c"}'])
    assert ok.exit_code == 0
    assert ok.output.strip() == "3"
    as_json = runner.invoke(main, ["executor", "run", str(tool), "--args", '{"t": "x"}', "--json"])
    assert json.loads(as_json.output)["value"] == 1
    hostile = tmp_path / "evil.py"
    hostile.write_text("def handler(a):\n    return open('/etc/shadow').read()\n")
    refused = runner.invoke(main, ["executor", "run", str(hostile)])
    assert refused.exit_code == 1
    assert "error (runtime_error): FileNotFoundError" in refused.output
    bad = runner.invoke(main, ["executor", "run", str(tool), "--args", "{"])
    assert bad.exit_code == 2
    assert "not valid JSON" in bad.output
