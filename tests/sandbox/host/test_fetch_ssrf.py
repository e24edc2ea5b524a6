"""Hostile fetch requests at the Python level: each must be refused before any socket opens.

The canary listens on 127.0.0.1 and [::1]; every test asserts it saw nothing. Policies are made
as permissive as possible in every other respect, so the one check under test is what stops the
request.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import pytest

from toolfoundry.sandbox.host.fetch import FetchPolicy

if TYPE_CHECKING:
    from tests.sandbox.host.conftest import FetchCall, LoopbackServer

DENIED = "capability_denied"


def refusing(calls: list[str]) -> Callable[[str], list[str]]:
    """A resolver that notes each name asked and answers no address (never reached here)."""

    def resolve(name: str) -> list[str]:
        calls.append(name)
        return []

    return resolve


def answering(calls: list[str], addresses: list[str]) -> Callable[[str], list[str]]:
    """A resolver that notes each name asked and answers ``addresses``."""

    def resolve(name: str) -> list[str]:
        calls.append(name)
        return addresses

    return resolve


def _loopback_open(port: int) -> FetchPolicy:
    """Allows the canary's canonical address, so only the encoding rule can refuse."""
    return FetchPolicy(
        allow=(f"127.0.0.1:{port}",), allow_http=("127.0.0.1",), allow_private=("127.0.0.0/8",)
    )


@pytest.mark.parametrize(
    "host",
    [
        "2130706433",  # decimal
        "0x7f000001",  # hex
        "0x7F.0.0.1",  # hex first octet
        "0177.0.0.1",  # octal
        "0177.0000.0000.0001",
        "127.1",  # short
        "127.0.1",
        "127.000.000.001",  # zero padded
        "0",
        "0x",
        "1.2.3.4.5",
        "127.0.0.0x1",
    ],
)
def test_non_canonical_ipv4_is_refused(canary: LoopbackServer, fetch: FetchCall, host: str) -> None:
    out = fetch(_loopback_open(canary.port), f"http://{host}:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    assert "non-canonical" in out["error"]["message"]
    assert canary.hits == []


def test_canonical_loopback_reaches_canary_when_explicitly_allowed(
    canary: LoopbackServer, fetch: FetchCall
) -> None:
    # The control for the test above: the same policy does let the dotted form through.
    out = fetch(_loopback_open(canary.port), f"http://127.0.0.1:{canary.port}/probe")
    assert out["status"] == 200
    assert [h.path for h in canary.hits] == ["/probe"]


IPV6_FORMS = [
    ("[::1]", "loopback"),
    ("[0:0:0:0:0:0:0:1]", "loopback"),
    ("[::ffff:127.0.0.1]", "IPv4-mapped 127.0.0.1: loopback"),
    ("[::ffff:7f00:1]", "IPv4-mapped 127.0.0.1: loopback"),
    ("[::127.0.0.1]", "IPv4-compatible"),
    ("[64:ff9b::7f00:1]", "NAT64"),
    ("[2002:7f00:1::]", "6to4"),
    ("[2001:0:4136:e378:8000:63bf:80ff:fffe]", "Teredo"),
    ("[fe80::1]", "link-local"),
    ("[fd00::1]", "unique local"),
    ("[fec0::1]", "site-local"),
    ("[ff02::1]", "multicast"),
    ("[::]", "unspecified"),
    ("[::ffff:169.254.169.254]", "link-local"),
    ("[fd00:ec2::254]", "unique local"),  # AWS IMDS over IPv6
]


@pytest.mark.parametrize(("host", "reason"), IPV6_FORMS)
def test_ipv6_literals_that_reach_private_space_are_refused(
    canary: LoopbackServer, fetch: FetchCall, host: str, reason: str
) -> None:
    policy = FetchPolicy(allow=(f"{host}:{canary.port}",), allow_http=(host,))
    out = fetch(policy, f"http://{host}:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    assert reason in out["error"]["message"]
    assert canary.hits == []


def test_ipv6_loopback_canary_is_reachable_when_allowed(
    canary: LoopbackServer, fetch: FetchCall, has_ipv6: bool
) -> None:
    if not has_ipv6:
        pytest.skip("no IPv6 loopback on this machine")
    policy = FetchPolicy(
        allow=(f"[::1]:{canary.port}",), allow_http=("[::1]",), allow_private=("::1",)
    )
    out = fetch(policy, f"http://[::1]:{canary.port}/v6")
    assert out["status"] == 200
    assert [h.path for h in canary.hits] == ["/v6"]


@pytest.mark.parametrize(
    ("host", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("0.0.0.0", "unspecified"),
        ("169.254.169.254", "link-local"),
        ("10.0.0.1", "private (RFC 1918)"),
        ("172.16.5.4", "private (RFC 1918)"),
        ("192.168.1.1", "private (RFC 1918)"),
        ("100.64.0.1", "carrier-grade NAT"),
        ("192.88.99.1", "6to4 relay"),
        ("224.0.0.1", "multicast"),
        ("255.255.255.255", "broadcast"),
        ("240.0.0.1", "reserved"),
        ("192.0.0.170", "IETF"),
    ],
)
def test_private_ipv4_literals_are_refused_without_allow_private(
    canary: LoopbackServer, fetch: FetchCall, host: str, reason: str
) -> None:
    policy = FetchPolicy(allow=(f"{host}:{canary.port}",), allow_http=(host,))
    out = fetch(policy, f"http://{host}:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    assert reason in out["error"]["message"]
    assert canary.hits == []


@pytest.mark.parametrize(
    "spelling", ["localhost", "LOCALHOST", "localhost.", "LocalHost.", "%6c%6fcalhost"]
)
def test_localhost_in_the_allowlist_is_still_loopback(
    canary: LoopbackServer, fetch: FetchCall, spelling: str
) -> None:
    policy = FetchPolicy(allow=(f"localhost:{canary.port}",), allow_http=("localhost",))
    out = fetch(policy, f"http://{spelling}:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    assert "loopback" in out["error"]["message"]
    assert canary.hits == []


def test_fullwidth_digits_canonicalise_to_loopback(
    canary: LoopbackServer, fetch: FetchCall
) -> None:
    policy = FetchPolicy(allow=(f"127.0.0.1:{canary.port}",), allow_http=("127.0.0.1",))
    out = fetch(policy, f"http://１２７．０．０．１:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    assert "loopback" in out["error"]["message"]
    assert canary.hits == []


@pytest.mark.parametrize(
    ("name", "answer"),
    [
        ("internal.test", ["127.0.0.1"]),
        ("metadata.google.internal", ["169.254.169.254"]),
        ("mixed.test", ["93.184.216.34", "127.0.0.1"]),  # every address is checked
        ("mapped.test", ["::ffff:127.0.0.1"]),
        ("v6.test", ["::1"]),
        ("intranet.test", ["10.1.2.3"]),
    ],
)
def test_allowlisted_name_resolving_to_private_address_is_refused(
    canary: LoopbackServer, fetch: FetchCall, name: str, answer: list[Any]
) -> None:
    policy = FetchPolicy(
        allow=(f"{name}:{canary.port}",), allow_http=(name,), resolver=lambda host: answer
    )
    out = fetch(policy, f"http://{name}:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    assert "resolves to" in out["error"]["message"]
    assert canary.hits == []


def test_allow_private_for_one_address_does_not_cover_another(
    canary: LoopbackServer, fetch: FetchCall
) -> None:
    policy = FetchPolicy(
        allow=(f"svc.test:{canary.port}",),
        allow_http=("svc.test",),
        allow_private=("127.0.0.1",),
        resolver=lambda host: ["127.0.0.1", "10.0.0.7"],
    )
    out = fetch(policy, f"http://svc.test:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    assert "10.0.0.7" in out["error"]["message"]
    assert canary.hits == []


def test_dns_rebinding_uses_the_first_checked_address(
    rebind_pair: tuple[LoopbackServer, LoopbackServer], fetch: FetchCall
) -> None:
    target, bound_canary = rebind_pair
    answers = itertools.chain([["127.0.0.1"]], itertools.repeat(["127.0.0.2"]))
    calls: list[str] = []

    def rebinding(host: str) -> list[str]:
        calls.append(host)
        return next(answers)

    policy = FetchPolicy(
        allow=(f"rebind.test:{target.port}",),
        allow_http=("rebind.test",),
        allow_private=("127.0.0.1",),
        resolver=rebinding,
    )
    handler = policy.handler(deadline=time.monotonic() + 5, tool="t")
    first = handler.handle({"url": f"http://rebind.test:{target.port}/a", "headers": []})
    assert first["status"] == 200
    assert calls == ["rebind.test"]  # resolved once, connected to what was checked
    assert target.hits[0].headers["Host"] == f"rebind.test:{target.port}"
    # The next request resolves again, gets the rebound answer, and that one is checked too.
    second = handler.handle({"url": f"http://rebind.test:{target.port}/b", "headers": []})
    assert second["error"]["kind"] == DENIED
    assert "127.0.0.2" in second["error"]["message"]
    assert [h.path for h in target.hits] == ["/a"]
    assert bound_canary.hits == []


def test_redirect_to_private_address_is_returned_not_followed(
    allowed: LoopbackServer, canary: LoopbackServer, fetch: FetchCall
) -> None:
    policy = FetchPolicy(
        allow=(f"127.0.0.1:{allowed.port}",),
        allow_http=("127.0.0.1",),
        allow_private=("127.0.0.1",),
    )
    target = f"http://127.0.0.1:{canary.port}/stolen"
    out = fetch(policy, f"{allowed.base}/redirect?to={target}", redirect="follow")
    assert out["status"] == 302
    assert ["Location", target] in out["headers"]
    assert canary.hits == []


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "file://localhost/etc/passwd",
        "data:text/plain,hello",
        "blob:https://allowed.test/0b6c1b7e",
        "ftp://allowed.test/file",
        "gopher://127.0.0.1:{port}/_GET%20/",
        "ws://allowed.test/socket",
        "wss://allowed.test/socket",
        "javascript:alert(1)",
        "dict://127.0.0.1:{port}/",
        "//127.0.0.1:{port}/",
        "/relative/path",
        "https:/127.0.0.1:{port}/",
        "https:127.0.0.1:{port}/",
    ],
)
def test_forbidden_schemes_and_forms(canary: LoopbackServer, fetch: FetchCall, url: str) -> None:
    policy = FetchPolicy(
        allow=("allowed.test", f"127.0.0.1:{canary.port}"), allow_private=("127.0.0.1",)
    )
    out = fetch(policy, url.format(port=canary.port))
    assert out["error"]["kind"] == DENIED
    assert canary.hits == []


def test_plain_http_needs_an_opt_in(canary: LoopbackServer, fetch: FetchCall) -> None:
    policy = FetchPolicy(allow=(f"127.0.0.1:{canary.port}",), allow_private=("127.0.0.1",))
    out = fetch(policy, f"http://127.0.0.1:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    assert "plain http" in out["error"]["message"]
    assert canary.hits == []


@pytest.mark.parametrize(
    "url",
    [
        "https://allowed.test:22/",
        "https://allowed.test:8443/",
        "https://allowed.test:0/",
        "https://allowed.test:65536/",
        "https://allowed.test:+443/",
        "https://allowed.test:0x1bb/",
        "https://allowed.test:/",
        "http://allowed.test/",  # port 80 is not the allowed 443
    ],
)
def test_ports_must_match_the_allowlist(fetch: FetchCall, url: str) -> None:
    calls: list[str] = []
    policy = FetchPolicy(
        allow=("allowed.test",), allow_http=("allowed.test",), resolver=refusing(calls)
    )
    out = fetch(policy, url)
    assert out["error"]["kind"] == DENIED
    assert calls == []  # refused before resolution


@pytest.mark.parametrize(
    "url",
    [
        "http://allowed.test@127.0.0.1:{port}/",
        "http://allowed.test:{port}@127.0.0.1:{port}/",
        "http://127.0.0.1:{port}@allowed.test:{port}/",
        "http://user:pass@allowed.test:{port}/",
        "http://allowed.test%40127.0.0.1:{port}/",
        "http://allowed.test\\@127.0.0.1:{port}/",
        "http://allowed.test#@127.0.0.1:{port}/",
        "http://allowed.test\t@127.0.0.1:{port}/",
    ],
)
def test_userinfo_and_parser_confusion(canary: LoopbackServer, fetch: FetchCall, url: str) -> None:
    policy = FetchPolicy(
        allow=(f"allowed.test:{canary.port}",),
        allow_http=("allowed.test",),
        resolver=lambda host: ["127.0.0.1"],
    )
    out = fetch(policy, url.format(port=canary.port))
    assert "error" in out
    assert out["error"]["kind"] == DENIED
    assert canary.hits == []


@pytest.mark.parametrize(
    "host", ["evil-allowed.test", "allowed.test.evil.test", "xallowed.test", "allowed.tes"]
)
def test_wildcards_respect_the_dot_boundary(
    canary: LoopbackServer, fetch: FetchCall, host: str
) -> None:
    calls: list[str] = []
    policy = FetchPolicy(
        allow=(f"*.allowed.test:{canary.port}",),
        allow_http=("*.allowed.test",),
        allow_private=("127.0.0.1",),
        resolver=answering(calls, ["127.0.0.1"]),
    )
    assert fetch(policy, f"http://{host}:{canary.port}/")["error"]["kind"] == DENIED
    assert calls == []
    assert canary.hits == []
    # A real subdomain is allowed (and reaches the canary, standing in for the service).
    assert fetch(policy, f"http://api.allowed.test:{canary.port}/ok")["status"] == 200
    assert [h.headers["Host"] for h in canary.hits] == [f"api.allowed.test:{canary.port}"]


def test_empty_allowlist_refuses_everything(canary: LoopbackServer, fetch: FetchCall) -> None:
    out = fetch(FetchPolicy(allow_private=("127.0.0.1",)), f"https://127.0.0.1:{canary.port}/")
    assert out["error"]["kind"] == DENIED
    assert "allowed: none" in out["error"]["message"]
    assert canary.hits == []
