"""A refused fetch names the toolfoundry.toml key that would allow it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolfoundry.sandbox.host.fetch import FetchPolicy

if TYPE_CHECKING:
    from tests.sandbox.host.conftest import FetchCall, LoopbackServer

DENIED = "capability_denied"


def test_plain_http_names_allow_http(canary: LoopbackServer, fetch: FetchCall) -> None:
    policy = FetchPolicy(allow=(f"127.0.0.1:{canary.port}",), allow_private=("127.0.0.1",))
    out = fetch(policy, f"http://127.0.0.1:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    message = out["error"]["message"]
    assert "[fetch] allow_http of toolfoundry.toml" in message
    assert f"add '127.0.0.1:{canary.port}' there" in message
    assert "or use https" in message
    assert canary.hits == []


def test_a_private_address_names_allow_private(canary: LoopbackServer, fetch: FetchCall) -> None:
    policy = FetchPolicy(allow=(f"127.0.0.1:{canary.port}",), allow_http=("127.0.0.1",))
    out = fetch(policy, f"http://127.0.0.1:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    message = out["error"]["message"]
    assert "loopback" in message
    assert "[fetch] allow_private of toolfoundry.toml" in message
    assert "add '127.0.0.1' there" in message
    assert canary.hits == []
