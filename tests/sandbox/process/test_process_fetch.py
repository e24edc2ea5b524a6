"""fetch in the Python tier: the jail has no network; the host answers ``fetch()`` under the
tool's FetchPolicy (allowlist, SSRF rules) or the draft's fixtures, over the fetch channel."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from toolfoundry import Foundry
from toolfoundry.config import parse_config
from toolfoundry.sandbox.host.fetch import FetchPolicy
from toolfoundry.sandbox.host.fixtures import FixtureFetch
from toolfoundry.sandbox.process.bwrap import BwrapExecutor
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.pool import WarmPool

from .conftest import SECRET

GET = "def handler(a):\n    r = fetch(a['url'])\n    return [r.status, r.text, r.ok]\n"


def loopback_policy(port: int, **changes: Any) -> FetchPolicy:
    host = f"127.0.0.1:{port}"
    fields: dict[str, Any] = {
        "allow": (host,),
        "allow_http": (host,),
        "allow_private": ("127.0.0.1",),
    }
    return FetchPolicy(**{**fields, **changes})


@pytest.fixture(params=["cold", "warm"])
def executor(request: pytest.FixtureRequest, cold: BwrapExecutor, pool: WarmPool) -> Any:
    return cold if request.param == "cold" else pool


def test_fetch_through_the_host(executor: Any, listener: Any) -> None:
    port, hits = listener
    url = f"http://127.0.0.1:{port}/data"
    out = executor.run(GET, {"url": url}, ProcessLimits(), fetch=loopback_policy(port))
    assert out.ok, out
    assert out.value == [200, SECRET, True]
    assert hits == ["/data"]
    assert out.details["fetches"] == 1


def test_private_addresses_are_refused_by_default(cold: BwrapExecutor, listener: Any) -> None:
    port, hits = listener
    policy = loopback_policy(port, allow_private=())
    out = cold.run(GET, {"url": f"http://127.0.0.1:{port}/x"}, ProcessLimits(), fetch=policy)
    assert out.error is not None
    assert out.error.kind.value == "capability_denied"
    assert hits == []


def test_hosts_outside_the_allowlist_are_refused(cold: BwrapExecutor, listener: Any) -> None:
    port, _ = listener
    out = cold.run(
        GET, {"url": "https://example.com/"}, ProcessLimits(), fetch=loopback_policy(port)
    )
    assert out.error is not None
    assert out.error.kind.value == "capability_denied"
    assert "allowlist" in out.error.message


def test_no_fetch_without_the_capability(cold: BwrapExecutor) -> None:
    out = cold.run(GET, {"url": "https://example.com/"}, ProcessLimits())
    assert out.error is not None
    assert out.error.kind.value == "capability_denied"
    assert "no network capability" in out.error.message


def test_refusals_can_be_caught_by_the_tool(cold: BwrapExecutor) -> None:
    code = (
        "def handler(a):\n    try:\n        fetch('https://example.com/')\n"
        "    except Exception as e:\n        return type(e).__name__\n"
    )
    out = cold.run(code, {}, ProcessLimits())
    assert out.value == "FetchFailed"


def test_fixtures_answer_and_post_bodies_cross(cold: BwrapExecutor) -> None:
    fixtures = FixtureFetch(
        [
            {"url": "https://api.example.com/echo", "method": "POST", "body": {"ok": 1}},
            {
                "url": "https://api.example.com/img",
                "headers": {"Content-Type": "image/png"},
                "body": "PNG",
            },
        ]
    )
    code = (
        "import json\ndef handler(a):\n"
        "    r = fetch('https://api.example.com/echo', method='post', body=json.dumps(a),\n"
        "              headers={'Content-Type': 'application/json'})\n"
        "    img = fetch('https://api.example.com/img')\n"
        "    return [r.json(), img.headers['content-type'], len(img.content)]\n"
    )
    out = cold.run(code, {"q": 1}, ProcessLimits(), fetch=fixtures)
    assert out.ok, out
    assert out.value == [{"ok": 1}, "image/png", 3]


def test_unread_answers_do_not_block_the_host(cold: BwrapExecutor) -> None:
    big = FixtureFetch([{"url": "https://api.example.com/big", "body": "x" * 500_000}])
    code = (
        "def handler(a):\n    os = __import__('os', {})\n    sys = __import__('sys', {})\n"
        "    import json\n"
        "    body = json.dumps({'url': 'https://api.example.com/big', 'method': 'GET',\n"
        "                       'headers': [], 'body': None}).encode()\n"
        "    for _ in range(30):\n"
        "        os.write(int(sys.argv[2]), b'TFR1' + len(body).to_bytes(8, 'big') + body)\n"
        "    return 'sent'\n"
    )
    started = time.monotonic()
    out = cold.run(code, {}, ProcessLimits(timeout_s=5), fetch=big)
    assert out.ok, out
    assert out.value == "sent"
    assert time.monotonic() - started < 4


def test_garbage_on_the_fetch_channel(cold: BwrapExecutor) -> None:
    code = (
        "def handler(a):\n    os = __import__('os', {})\n    sys = __import__('sys', {})\n"
        "    os.write(int(sys.argv[2]), b'GARBAGE' * 10)\n"
        "    return fetch('https://api.example.com/x').text\n"
    )
    out = cold.run(code, {}, ProcessLimits(timeout_s=5), fetch=FixtureFetch([]))
    assert out.error is not None
    assert out.error.kind.value == "runtime_error"
    assert "fetch channel" in out.error.message


def test_network_python_tool_through_the_foundry(tmp_path: Path, listener: Any) -> None:
    port, hits = listener
    host = f"127.0.0.1:{port}"
    draft = {
        "name": "echo_secret",
        "description": "Read the body of the status page.",
        "language": "python",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        "code": (
            f"def handler(args):\n    return fetch('http://{host}' + args['path']).text.upper()\n"
        ),
        "capabilities": {"network": [host]},
        "tests": [{"input": {"path": "/t"}, "expected": "FIXED"}],
        "fixtures": [{"url": f"http://{host}/t", "body": "fixed"}],
    }
    config = parse_config({"fetch": {"allow_http": [host], "allow_private": ["127.0.0.1"]}})
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}", config=config) as fd:
        created = fd.create_tool(draft)
        assert created.status == "pending_approval", created.to_dict()
        assert hits == []  # the forge's tests were answered by the fixtures
        fd.approve("echo_secret", by="alice")
        out = fd.call("echo_secret", {"path": "/live"})
        assert out.ok, out
        assert out.value == SECRET.upper()
        assert hits == ["/live"]
