"""Credentials: added by the host for one exact host, never visible to the script or the audit."""

from __future__ import annotations

import base64
import json
import logging
import ssl
import time
from typing import TYPE_CHECKING, Any

import pytest

from toolfoundry.sandbox.host.credentials import Credential, CredentialError
from toolfoundry.sandbox.host.fetch import FetchPolicy, FetchPolicyError, FetchRecord

if TYPE_CHECKING:
    from tests.sandbox.host.conftest import FetchCall, LoopbackServer

SECRET = "Bearer s3cr3t-7f1c9a"
ENV = "TF_FETCH_TEST_TOKEN"


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ENV, SECRET)
    return SECRET


def _policy(
    server: LoopbackServer, records: list[FetchRecord] | None = None, **extra: Any
) -> FetchPolicy:
    hosts = ("api.test", "other.test", "sub.api.test")
    return FetchPolicy(
        allow=tuple(f"{h}:{server.port}" for h in (*hosts, "*.api.test")),
        allow_http=(*hosts, "*.api.test"),
        allow_private=("127.0.0.1",),
        credentials=extra.pop("credentials", (Credential("api.test", "Authorization", env=ENV),)),
        resolver=lambda host: ["127.0.0.1"],
        audit=None if records is None else records.append,
        **extra,
    )


def _leaks(answer: dict[str, Any]) -> bool:
    text = json.dumps(answer)
    body = base64.b64decode(answer.get("body", "")) if "body" in answer else b""
    return SECRET in text or SECRET.encode() in body or "s3cr3t" in text


def test_credential_arrives_at_its_host(
    allowed: LoopbackServer, fetch: FetchCall, token: str
) -> None:
    out = fetch(_policy(allowed), f"http://api.test:{allowed.port}/echo")
    assert out["status"] == 200
    assert allowed.hits[0].headers["Authorization"] == SECRET
    assert not _leaks(out)  # the echoed request is redacted on the way back


def test_credential_is_not_sent_to_other_hosts(
    allowed: LoopbackServer, fetch: FetchCall, token: str
) -> None:
    for host in ("other.test", "sub.api.test", "x.api.test"):
        out = fetch(_policy(allowed), f"http://{host}:{allowed.port}/echo")
        assert out["status"] == 200
    assert [h.headers.get("Authorization") for h in allowed.hits] == [None, None, None]


def test_script_value_for_the_credential_header_is_replaced(
    allowed: LoopbackServer, fetch: FetchCall, token: str
) -> None:
    headers = [("authorization", "Bearer attacker"), ("AUTHORIZATION", "x")]
    fetch(_policy(allowed), f"http://api.test:{allowed.port}/echo", headers=headers)
    raw = allowed.hits[0].headers
    assert raw["Authorization"] == SECRET
    assert "attacker" not in json.dumps(raw)


def test_script_may_send_its_own_authorization_elsewhere(
    allowed: LoopbackServer, fetch: FetchCall, token: str
) -> None:
    headers = [("Authorization", "Bearer mine")]
    fetch(_policy(allowed), f"http://other.test:{allowed.port}/echo", headers=headers)
    assert allowed.hits[0].headers["Authorization"] == "Bearer mine"


def test_reflected_secret_is_stripped_from_headers_and_body(
    allowed: LoopbackServer, fetch: FetchCall, token: str
) -> None:
    out = fetch(_policy(allowed), f"http://api.test:{allowed.port}/echo-auth")
    assert out["status"] == 200
    assert not any(k.lower() == "x-seen-auth" for k, _ in out["headers"])
    assert base64.b64decode(out["body"]) == b"you sent [redacted]"
    assert not _leaks(out)


def test_credential_with_port_binding(
    allowed: LoopbackServer, fetch: FetchCall, token: str
) -> None:
    bound = (Credential(f"api.test:{allowed.port + 1}", "X-Api-Key", env=ENV),)
    fetch(_policy(allowed, credentials=bound), f"http://api.test:{allowed.port}/echo")
    assert "X-Api-Key" not in allowed.hits[0].headers
    bound = (Credential(f"api.test:{allowed.port}", "X-Api-Key", env=ENV),)
    fetch(_policy(allowed, credentials=bound), f"http://api.test:{allowed.port}/echo")
    assert allowed.hits[1].headers["X-Api-Key"] == SECRET


def test_secret_store_lookup(allowed: LoopbackServer, fetch: FetchCall) -> None:
    store = {"github": SECRET}
    policy = _policy(
        allowed,
        credentials=(Credential("api.test", "Authorization", secret="github"),),
        secret_store=store.get,
    )
    fetch(policy, f"http://api.test:{allowed.port}/echo")
    assert allowed.hits[0].headers["Authorization"] == SECRET


def test_missing_credential_refuses_and_names_only_the_source(
    allowed: LoopbackServer, fetch: FetchCall, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    out = fetch(_policy(allowed), f"http://api.test:{allowed.port}/echo")
    assert out["error"]["kind"] == "capability_denied"
    assert ENV in out["error"]["message"]
    assert allowed.hits == []


def test_credential_with_line_breaks_is_refused_without_echo(
    allowed: LoopbackServer, fetch: FetchCall, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV, "abc\r\nX-Injected: 1")
    out = fetch(_policy(allowed), f"http://api.test:{allowed.port}/echo")
    assert out["error"]["kind"] == "capability_denied"
    assert "Injected" not in out["error"]["message"]
    assert allowed.hits == []


def test_errors_after_the_credential_is_added_do_not_quote_it(
    allowed: LoopbackServer, fetch: FetchCall, token: str
) -> None:
    policy = _policy(allowed, read_timeout=0.2, max_response_bytes=10)
    slow = fetch(policy, f"http://api.test:{allowed.port}/slow?s=1")
    big = fetch(policy, f"http://api.test:{allowed.port}/echo")
    for out in (slow, big):
        assert "error" in out
        assert not _leaks(out)


def test_audit_and_logs_never_hold_the_secret(
    allowed: LoopbackServer, fetch: FetchCall, token: str, caplog: pytest.LogCaptureFixture
) -> None:
    records: list[FetchRecord] = []
    caplog.set_level(logging.DEBUG)
    fetch(_policy(allowed, records), f"http://api.test:{allowed.port}/echo")
    fetch(_policy(allowed, records), f"http://api.test:{allowed.port}/slow?s=5", budget=0.2)
    assert [r.credential for r in records] == [True, True]
    assert SECRET not in repr(records)
    assert SECRET not in json.dumps([r.to_dict() for r in records])
    assert SECRET not in caplog.text


def test_credential_is_added_only_after_the_address_check(
    canary: LoopbackServer, fetch: FetchCall, token: str
) -> None:
    policy = FetchPolicy(
        allow=(f"api.test:{canary.port}",),
        allow_http=("api.test",),
        credentials=(Credential("api.test", "Authorization", env=ENV),),
        resolver=lambda host: ["127.0.0.1"],  # not covered by allow_private
    )
    out = fetch(policy, f"http://api.test:{canary.port}/")
    assert out["error"]["kind"] == "capability_denied"
    assert canary.hits == []


def test_credential_over_tls(
    tls_server: LoopbackServer, client_tls: ssl.SSLContext, fetch: FetchCall, token: str
) -> None:
    policy = FetchPolicy(
        allow=(f"secure.test:{tls_server.port}",),
        allow_private=("secure.test",),
        credentials=(Credential("secure.test", "Authorization", env=ENV),),
        resolver=lambda host: ["127.0.0.1"],
        ssl_context=client_tls,
    )
    out = fetch(policy, f"https://secure.test:{tls_server.port}/echo")
    assert out["status"] == 200
    assert tls_server.hits[0].headers["Authorization"] == SECRET
    assert not _leaks(out)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"host": "*.api.test", "header": "Authorization", "env": "X"}, "exact host"),
        ({"host": "api.test", "header": "Host", "env": "X"}, "reserved"),
        ({"host": "api.test", "header": "Proxy-Authorization", "env": "X"}, "reserved"),
        ({"host": "api.test", "header": "Bad Header", "env": "X"}, "invalid header"),
        ({"host": "api.test", "header": "Authorization"}, "exactly one"),
        ({"host": "api.test", "header": "A", "env": "X", "secret": "k"}, "exactly one"),
        ({"host": "api.test", "header": "A", "env": "1BAD"}, "environment variable"),
        ({"host": "0x7f000001", "header": "A", "env": "X"}, "non-canonical"),
    ],
)
def test_malformed_credentials(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(CredentialError, match=message):
        Credential(**kwargs)


def test_cli_credential_form() -> None:
    cred = Credential.parse("API.Example.com.:8443:X-Api-Key:EXAMPLE_KEY")
    assert cred.header == "X-Api-Key"
    assert cred.env == "EXAMPLE_KEY"
    assert cred.applies_to("api.example.com", 8443)
    assert not cred.applies_to("api.example.com", 443)
    with pytest.raises(CredentialError, match="HOST:HEADER:ENV_VAR"):
        Credential.parse("api.example.com:Authorization")
    with pytest.raises(FetchPolicyError, match="HOST:HEADER:ENV_VAR"):
        FetchPolicy.from_cli(credentials=["nope"])


def test_handler_never_raises_even_for_garbage(allowed: LoopbackServer, token: str) -> None:
    policy = _policy(allowed)
    handler = policy.handler(deadline=time.monotonic() + 5, tool="t")
    junks: list[Any] = [None, 42, [], {"url": None}, {"url": "http://api.test/", "method": 7}]
    for junk in junks:
        out = handler.handle(junk)
        assert out["error"]["kind"] in ("runtime_error", "capability_denied")
