"""Allowed fetches over real loopback servers: HTTP, HTTPS with pinning, headers, limits, audit."""

from __future__ import annotations

import base64
import json
import ssl
import time
from typing import TYPE_CHECKING, Any

import pytest

from toolfoundry.sandbox.host.fetch import FetchPolicy, FetchRecord

if TYPE_CHECKING:
    from tests.sandbox.host.conftest import FetchCall, LoopbackServer


def _policy(server: LoopbackServer, **extra: Any) -> FetchPolicy:
    return FetchPolicy(
        allow=(f"127.0.0.1:{server.port}",),
        allow_http=("127.0.0.1",),
        allow_private=("127.0.0.1",),
        **extra,
    )


def _json(out: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(base64.b64decode(out["body"]))
    return answer


def test_get_returns_status_headers_body_and_canonical_url(
    allowed: LoopbackServer, fetch: FetchCall
) -> None:
    out = fetch(_policy(allowed), f"http://127.0.0.1:{allowed.port}/echo?q=1#frag")
    assert out["status"] == 200
    assert out["statusText"] == "OK"
    assert out["url"] == f"http://127.0.0.1:{allowed.port}/echo?q=1"
    assert ["Content-Type", "application/json"] in out["headers"]
    echo = _json(out)
    assert echo["path"] == "/echo?q=1"
    assert echo["headers"]["Host"] == f"127.0.0.1:{allowed.port}"


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE", "post"])
def test_methods_with_bodies(allowed: LoopbackServer, fetch: FetchCall, method: str) -> None:
    body = base64.b64encode(b'{"a": 1}').decode()
    out = fetch(
        _policy(allowed),
        f"{allowed.base}/echo",
        method=method,
        headers=[("Content-Type", "application/json"), ("Content-Length", "999")],
        body=body,
    )
    echo = _json(out)
    assert echo["method"] == method.upper()
    assert base64.b64decode(echo["body"]) == b'{"a": 1}'
    assert echo["headers"]["Content-Length"] == "8"  # the host's count, not the script's


def test_head_has_no_body(allowed: LoopbackServer, fetch: FetchCall) -> None:
    out = fetch(_policy(allowed), f"{allowed.base}/echo", method="HEAD")
    assert out["status"] == 200
    assert out["body"] == ""


@pytest.mark.parametrize("method", ["TRACE", "CONNECT", "OPTIONS", "PROPFIND", "GET\r\nX: y"])
def test_other_methods_are_refused(allowed: LoopbackServer, fetch: FetchCall, method: str) -> None:
    out = fetch(_policy(allowed), f"{allowed.base}/echo", method=method)
    assert out["error"]["kind"] == "capability_denied"
    assert allowed.hits == []


def test_path_is_sent_as_parsed_with_unsafe_characters_escaped(
    allowed: LoopbackServer, fetch: FetchCall
) -> None:
    out = fetch(_policy(allowed), f"{allowed.base}/a b/ü?x=<y>")
    assert _json(out)["path"] == "/a%20b/%C3%BC?x=%3Cy%3E"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("Host", "evil.test"),
        ("host", "127.0.0.1"),
        ("X-Forwarded-For", "127.0.0.1"),
        ("X-Forwarded-Host", "internal"),
        ("Forwarded", "for=127.0.0.1"),
        ("X-Real-IP", "10.0.0.1"),
        ("Proxy-Authorization", "Basic x"),
        ("Proxy-Connection", "keep-alive"),
        ("Connection", "close"),
        ("Transfer-Encoding", "chunked"),
        ("Upgrade", "websocket"),
        ("TE", "trailers"),
        ("Expect", "100-continue"),
        ("X-Ok", "a\r\nX-Injected: 1"),
        ("X-Ok", "a\nb"),
        ("X-Ok", "a\0b"),
        ("X-Bad\r\nX-Injected", "1"),
        ("X Bad", "1"),
        ("", "1"),
    ],
)
def test_forbidden_or_injected_headers_are_refused(
    allowed: LoopbackServer, fetch: FetchCall, name: str, value: str
) -> None:
    out = fetch(_policy(allowed), f"{allowed.base}/echo", headers=[(name, value)])
    assert out["error"]["kind"] == "capability_denied"
    assert allowed.hits == []


@pytest.mark.parametrize(
    "request_",
    [
        "not an object",
        {"url": 42},
        {"url": "http://127.0.0.1/", "headers": "X-A: 1"},
        {"url": "http://127.0.0.1/", "headers": [["X-A"]]},
        {"url": "http://127.0.0.1/", "headers": [["X-A", 1]]},
        {"url": "http://127.0.0.1/", "method": "POST", "body": "not base64!"},
        {"url": "http://127.0.0.1/", "method": "GET", "body": "aGk="},
    ],
)
def test_malformed_requests_get_structured_errors(
    allowed: LoopbackServer, request_: str | dict[str, Any]
) -> None:
    policy = _policy(allowed)
    if isinstance(request_, dict) and isinstance(request_.get("url"), str):
        request_["url"] = f"http://127.0.0.1:{allowed.port}/"
    out = policy.handler(deadline=time.monotonic() + 5, tool="t").handle(request_)  # type: ignore[arg-type]
    assert out["error"]["kind"] in ("runtime_error", "capability_denied")
    assert out["error"]["message"]
    assert allowed.hits == []


def test_https_connects_to_the_pinned_address_with_sni_and_cert_on_the_name(
    tls_server: LoopbackServer, client_tls: ssl.SSLContext, fetch: FetchCall
) -> None:
    policy = FetchPolicy(
        allow=(f"secure.test:{tls_server.port}",),
        allow_private=("secure.test",),
        resolver=lambda host: ["127.0.0.1"],
        ssl_context=client_tls,
    )
    out = fetch(policy, f"https://secure.test:{tls_server.port}/echo")
    assert out["status"] == 200
    assert _json(out)["headers"]["Host"] == f"secure.test:{tls_server.port}"


def test_https_certificate_for_another_name_fails(
    tls_server: LoopbackServer, client_tls: ssl.SSLContext, fetch: FetchCall
) -> None:
    policy = FetchPolicy(
        allow=(f"other.test:{tls_server.port}",),
        allow_private=("127.0.0.1",),
        resolver=lambda host: ["127.0.0.1"],
        ssl_context=client_tls,
    )
    out = fetch(policy, f"https://other.test:{tls_server.port}/echo")
    assert out["error"]["kind"] == "runtime_error"
    assert "certificate" in out["error"]["message"].lower()
    assert tls_server.hits == []


def test_https_untrusted_certificate_fails_with_default_trust(
    tls_server: LoopbackServer, fetch: FetchCall
) -> None:
    policy = FetchPolicy(
        allow=(f"secure.test:{tls_server.port}",),
        allow_private=("127.0.0.1",),
        resolver=lambda host: ["127.0.0.1"],
    )
    out = fetch(policy, f"https://secure.test:{tls_server.port}/echo")
    assert out["error"]["kind"] == "runtime_error"
    assert "certificate" in out["error"]["message"].lower()
    assert tls_server.hits == []


def test_response_size_cap(allowed: LoopbackServer, fetch: FetchCall) -> None:
    policy = _policy(allowed, max_response_bytes=1000)
    assert base64.b64decode(fetch(policy, f"{allowed.base}/bytes?n=1000")["body"]) == b"x" * 1000
    out = fetch(policy, f"{allowed.base}/bytes?n=1001")
    assert out["error"]["kind"] == "runtime_error"
    assert "1000-byte limit" in out["error"]["message"]


def test_gzip_is_decoded_and_a_compression_bomb_stops_at_the_cap(
    allowed: LoopbackServer, fetch: FetchCall
) -> None:
    policy = _policy(allowed, max_response_bytes=100_000)
    small = fetch(policy, f"{allowed.base}/gzip?n=5000")
    assert base64.b64decode(small["body"]) == b"\0" * 5000
    assert not any(k.lower() == "content-encoding" for k, _ in small["headers"])
    started = time.monotonic()
    out = fetch(policy, f"{allowed.base}/gzip?n=50000000")
    assert out["error"]["kind"] == "runtime_error"
    assert "limit" in out["error"]["message"]
    assert time.monotonic() - started < 2


def test_read_timeout(allowed: LoopbackServer, fetch: FetchCall) -> None:
    policy = _policy(allowed, read_timeout=0.3)
    started = time.monotonic()
    out = fetch(policy, f"{allowed.base}/slow?s=1.5")
    elapsed = time.monotonic() - started
    assert out["error"]["kind"] == "timeout"
    assert 0.25 < elapsed < 1.0


def test_call_deadline_bounds_every_request(allowed: LoopbackServer, fetch: FetchCall) -> None:
    started = time.monotonic()
    out = fetch(_policy(allowed), f"{allowed.base}/slow?s=1.5", budget=0.3)
    assert out["error"]["kind"] == "timeout"
    assert time.monotonic() - started < 1.0


def test_total_timeout_stops_a_slow_drip(allowed: LoopbackServer, fetch: FetchCall) -> None:
    policy = _policy(allowed, total_timeout=0.5, read_timeout=5)
    started = time.monotonic()
    out = fetch(policy, f"{allowed.base}/drip?s=0.05")
    assert out["error"]["kind"] == "timeout"
    assert time.monotonic() - started < 1.3


def test_spent_budget_fails_fast(allowed: LoopbackServer, fetch: FetchCall) -> None:
    out = fetch(_policy(allowed), f"{allowed.base}/echo", budget=-1)
    assert out["error"]["kind"] == "timeout"
    assert allowed.hits == []


def test_dns_timeout(fetch: FetchCall) -> None:
    def hung(host: str) -> list[str]:
        time.sleep(3)
        return ["127.0.0.1"]

    policy = FetchPolicy(allow=("slow-dns.test",), dns_timeout=0.2, resolver=hung)
    started = time.monotonic()
    out = fetch(policy, "https://slow-dns.test/")
    assert out["error"]["kind"] == "timeout"
    assert "resolving slow-dns.test" in out["error"]["message"]
    assert time.monotonic() - started < 1.0


def test_resolver_failure_and_garbage_answers(fetch: FetchCall) -> None:
    def broken(host: str) -> list[str]:
        raise OSError("no such host")

    out = fetch(FetchPolicy(allow=("gone.test",), resolver=broken), "https://gone.test/")
    assert out["error"] == {"kind": "runtime_error", "message": "could not resolve gone.test"}
    out = fetch(
        FetchPolicy(allow=("odd.test",), resolver=lambda h: ["0x7f.1"]), "https://odd.test/"
    )
    assert out["error"]["kind"] == "runtime_error"
    out = fetch(FetchPolicy(allow=("none.test",), resolver=lambda h: []), "https://none.test/")
    assert out["error"]["kind"] == "runtime_error"


def test_request_cap_per_call(allowed: LoopbackServer) -> None:
    policy = _policy(allowed, max_requests=2)
    handler = policy.handler(deadline=time.monotonic() + 5, tool="t")
    request = {"url": f"{allowed.base}/echo", "method": "GET", "headers": []}
    assert handler.handle(request)["status"] == 200
    assert handler.handle(request)["status"] == 200
    third = handler.handle(request)
    assert third["error"]["kind"] == "capability_denied"
    assert len(allowed.hits) == 2
    # A new call gets a fresh count.
    assert policy.handler(deadline=time.monotonic() + 5, tool="t").handle(request)["status"] == 200


def test_connection_refused_is_a_runtime_error(canary: LoopbackServer, fetch: FetchCall) -> None:
    policy = FetchPolicy(
        allow=("127.0.0.1:1",), allow_http=("127.0.0.1",), allow_private=("127.0.0.1",)
    )
    out = fetch(policy, "http://127.0.0.1:1/")
    assert out["error"]["kind"] == "runtime_error"
    assert "could not connect" in out["error"]["message"]


def test_proxy_environment_is_ignored(
    allowed: LoopbackServer,
    canary: LoopbackServer,
    fetch: FetchCall,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{canary.port}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    out = fetch(_policy(allowed), f"{allowed.base}/echo")
    assert out["status"] == 200
    assert canary.hits == []
    assert len(allowed.hits) == 1


def test_every_request_is_audited(allowed: LoopbackServer, canary: LoopbackServer) -> None:
    records: list[FetchRecord] = []
    policy = _policy(allowed, audit=records.append)
    handler = policy.handler(deadline=time.monotonic() + 5, tool="weather")
    handler.handle({"url": f"{allowed.base}/bytes?n=10", "method": "GET", "headers": []})
    handler.handle({"url": f"http://127.0.0.1:{canary.port}/", "method": "POST", "headers": []})
    handler.handle({"url": "ftp://x/", "headers": []})
    ok, refused, bad = records
    assert (ok.tool, ok.method, ok.host, ok.port, ok.status, ok.error, ok.bytes) == (
        "weather",
        "GET",
        "127.0.0.1",
        allowed.port,
        200,
        None,
        10,
    )
    assert ok.address == "127.0.0.1"
    assert ok.duration_ms > 0
    assert (refused.method, refused.host, refused.status, refused.error) == (
        "POST",
        "127.0.0.1",
        None,
        "capability_denied",
    )
    assert bad.error == "capability_denied"
    assert bad.host is None
    fields = {"tool", "method", "host", "status", "error", "bytes", "duration_ms"}
    assert set(ok.to_dict()) >= fields
    assert canary.hits == []


def test_a_failing_auditor_does_not_change_the_answer(
    allowed: LoopbackServer, fetch: FetchCall
) -> None:
    def explode(record: FetchRecord) -> None:
        raise RuntimeError("audit store down")

    assert fetch(_policy(allowed, audit=explode), f"{allowed.base}/echo")["status"] == 200


def test_redirect_status_comes_back_as_is(allowed: LoopbackServer, fetch: FetchCall) -> None:
    out = fetch(_policy(allowed), f"{allowed.base}/redirect?to=/echo", redirect="follow")
    assert out["status"] == 302
    assert ["Location", "/echo"] in out["headers"]
    assert [h.path for h in allowed.hits] == ["/redirect?to=/echo"]


def test_ssl_context_default_verifies(fetch: FetchCall) -> None:
    from toolfoundry.sandbox.host.fetch import default_ssl_context

    context = default_ssl_context()
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
