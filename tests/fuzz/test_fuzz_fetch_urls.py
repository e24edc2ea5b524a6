"""Fuzz the fetch URL and host checks with URLs built from tricky pieces.

Encodings of private addresses (octal, hex, single numbers, IPv4-mapped IPv6, unicode digits
and dots), userinfo, IDNA and fullwidth names, ports, schemes, percent escapes, whitespace.
The resolver is injected and answers with addresses drawn for the example. Oracles: any URL
the policy lets through names an allowlisted host (checked here independently) and resolves
only to public addresses; and a full fetch, whose resolver can only answer non-public
addresses, never reaches the loopback canary.
"""

from __future__ import annotations

import ipaddress
import time
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from toolfoundry.sandbox.host.fetch import FetchPolicy
from toolfoundry.sandbox.host.netguard import (
    FetchError,
    effective_address,
    local_addresses,
    parse_url,
    resolve,
)
from toolfoundry.spec import ErrorKind

from .js_grammar import fuzz_settings

KINDS = {kind.value for kind in ErrorKind}
SCHEMES = ["http://", "https://", "HTTPS://", "hTtP://", "ftp://", "file://", "ws://", "//", ""]
SCHEMES += ["https:", "https:/", "https:\\\\", " https://", "https://\t", "javascript:"]
USERINFO = ["", "user@", "user:pass@", "api.example.com@", "127.0.0.1@", "%40@", "a@b@", ":@"]
NAMES = [
    "api.example.com",
    "API.Example.COM",
    "api.example.com.",
    "api\u3002example\u3002com",
    "api\uff0eexample\uff0ecom",
    "\uff41pi.example.com",
    "api.example.com.evil.net",
    "evil.net#@api.example.com",
    "sub.example.org",
    "deep.sub.example.org",
    "example.org",
    "xn--bcher-kva.example.org",
    "bücher.example.org",
    "ex\u200bample.org",
    "api%2eexample.com",
    "attacker.com",
    "localhost",
    "LOCALHOST.",
    "localhost.example.org",
]
PRIVATE = [
    "127.0.0.1",
    "127.1",
    "0x7f.0.0.1",
    "0177.0.0.1",
    "2130706433",
    "0x7f000001",
    "017700000001",
    "127.0.0.1.",
    "127\u30020\u30020\u30021",
    "\u2460\u2461\u2466.\u24ea.\u24ea.\u2460",
    "%31%32%37.0.0.1",
    "0",
    "0.0.0.0",
    "169.254.169.254",
    "10.0.0.1",
    "192.168.1.1",
    "100.64.0.1",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[0:0:0:0:0:0:0:1]",
    "[::127.0.0.1]",
    "[64:ff9b::7f00:1]",
    "[fe80::1%25eth0]",
    "[::]",
]
PORTS = ["", ":443", ":80", ":0", ":65536", ":99999", ":+443", ": 443", ":0443", ":443abc", ":"]
TAILS = ["", "/", "/x", "?q=1", "#f", "/%2e%2e/", "/\t", " /", "\\\\x", "/@evil.com", "/\u3002"]
WHITESPACE = ["", " ", "\t", "\n", "\r\n", "\x00", "\u00a0"]

PUBLIC_ADDRESSES = ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946", "1.1.1.1"]
NON_PUBLIC_ADDRESSES = [
    "127.0.0.1",
    "127.0.0.2",
    "::1",
    "::ffff:127.0.0.1",
    "10.1.2.3",
    "0.0.0.0",
    "169.254.169.254",
    "fe80::1",
    "fc00::1",
    "100.64.0.1",
    "64:ff9b::7f00:1",
    "2002:7f00:1::",
    "::ffff:10.0.0.1",
]


def piece(clean: str, tricky: list[str]) -> st.SearchStrategy[str]:
    """Mostly the clean piece, so whole URLs that pass every check are common too."""
    return st.one_of(st.just(clean), st.just(clean), st.just(clean), st.sampled_from(tricky))


@st.composite
def urls(draw: st.DrawFn, port: int) -> str:
    host = draw(st.sampled_from(NAMES + PRIVATE))
    clean_port = f":{port}" if host in PRIVATE or "localhost" in host.lower() else ""
    pieces = [
        draw(piece("", WHITESPACE)),
        draw(piece("https://", SCHEMES)),
        draw(piece("", USERINFO)),
        host,
        draw(piece(clean_port, [*PORTS, f":{port}", f":0{port}"])),
        draw(piece("/", TAILS)),
        draw(piece("", WHITESPACE)),
    ]
    if draw(st.integers(0, 5)) == 0:
        # A random splice: one piece replaced by raw text from the same alphabet.
        at = draw(st.integers(0, len(pieces) - 1))
        pieces[at] = draw(st.text(st.sampled_from("".join(NAMES + PRIVATE + PORTS)), max_size=12))
    return "".join(pieces)


def answers_of(pool: list[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(pool), min_size=1, max_size=3)


def policy_for(port: int, resolver: Any) -> FetchPolicy:
    hosts = ("api.example.com", "*.example.org", f"127.0.0.1:{port}", f"localhost:{port}")
    return FetchPolicy(allow=hosts, allow_http=hosts, resolver=resolver, max_requests=1000)


def allowlisted(host: str, port: int, canary_port: int) -> bool:
    """The allowlist, restated without the policy's code."""
    if host in ("127.0.0.1", "localhost"):
        return port == canary_port
    return port in (80, 443) and (host == "api.example.com" or host.endswith(".example.org"))


def public(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Public, restated: globally routable, and so is any IPv4 address it embeds."""
    inner = effective_address(ip)
    if not (ip.is_global and inner.is_global) or inner.is_loopback or inner.is_private:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and (ip.sixtofour or ip.teredo):
        return False
    return effective_address(ip) not in local_addresses()


@fuzz_settings(1000)
@given(data=st.data())
def test_an_allowed_url_names_an_allowlisted_host_and_reaches_only_public_addresses(
    data: st.DataObject,
) -> None:
    canary_port = 8765
    raw = data.draw(urls(canary_port), label="url")
    answers = data.draw(
        answers_of(PUBLIC_ADDRESSES) | answers_of(PUBLIC_ADDRESSES + NON_PUBLIC_ADDRESSES),
        label="resolver answers",
    )
    policy = policy_for(canary_port, lambda host: answers)
    refusal = None
    try:
        url = parse_url(raw)
        policy.check_url(url)
        addresses = [url.ip] if url.ip is not None else resolve(policy.resolver, url.host, 2.0)
        for ip in addresses:
            policy.check_address(url.host, ip)
    except FetchError as refused:
        refusal = refused
    if refusal is not None:
        assert refusal.kind in KINDS
        assert refusal.message
        event("refused")
        return
    event("allowed")
    assert allowlisted(url.host, url.port, canary_port), (raw, url)
    assert all(public(ip) for ip in addresses), (raw, addresses)


@fuzz_settings(300)
@given(data=st.data())
def test_a_fetch_with_only_non_public_answers_never_reaches_the_canary(
    data: st.DataObject, canary: Any
) -> None:
    raw = data.draw(urls(canary.port), label="url")
    answers = data.draw(answers_of(NON_PUBLIC_ADDRESSES), label="resolver answers")
    session = policy_for(canary.port, lambda host: answers).handler(
        deadline=time.monotonic() + 5, tool="fuzz"
    )
    before = len(canary.hits)
    answer = session.handle({"url": raw, "method": "GET"})
    assert "error" in answer, (raw, answer)
    assert answer["error"]["kind"] in KINDS
    assert canary.hits[before:] == [], raw


def test_the_oracles_can_see_both_outcomes(canary: Any) -> None:
    """Controls: a public answer is allowed; a loopback answer is refused; and loopback made
    private-allowed does reach the canary (so the canary can record a hit)."""
    allowed = policy_for(canary.port, lambda host: ["93.184.216.34"])
    url = parse_url("https://api.example.com/")
    allowed.check_url(url)
    allowed.check_address(url.host, resolve(allowed.resolver, url.host, 2.0)[0])
    rebound = policy_for(canary.port, lambda host: ["127.0.0.1"])
    refused = rebound.handler(deadline=time.monotonic() + 5, tool="fuzz")
    assert refused.handle({"url": "https://api.example.com/"})["error"]["kind"] == (
        "capability_denied"
    )
    hosts = (f"127.0.0.1:{canary.port}",)
    granted = FetchPolicy(allow=hosts, allow_http=hosts, allow_private=("127.0.0.1",))
    session = granted.handler(deadline=time.monotonic() + 5, tool="fuzz")
    before = len(canary.hits)
    assert session.handle({"url": f"{canary.url}/hit"})["status"] == 200
    assert canary.hits[before:] == ["GET /hit"]
