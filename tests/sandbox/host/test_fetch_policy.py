"""URL canonicalisation, address classes and policy construction (CLI flags, [fetch] table)."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest

from toolfoundry.sandbox.host.credentials import Credential
from toolfoundry.sandbox.host.fetch import FetchPolicy, FetchPolicyError, HostPattern
from toolfoundry.sandbox.host.netguard import (
    FetchError,
    address_problem,
    local_addresses,
    parse_url,
)


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("https://Example.COM/", "https://example.com/"),
        ("https://example.com./a", "https://example.com/a"),
        ("https://example.com", "https://example.com/"),
        ("https://example.com?x=1", "https://example.com/?x=1"),
        ("https://example.com:443/a#frag", "https://example.com/a"),
        ("http://example.com:80/", "http://example.com/"),
        ("https://example.com:8443/", "https://example.com:8443/"),
        ("https://bücher.example/", "https://xn--bcher-kva.example/"),
        ("https://ＥＸＡＭＰＬＥ。com/", "https://example.com/"),
        ("https://%65xample.com/", "https://example.com/"),
        ("https://[2606:4700::1111]/", "https://[2606:4700::1111]/"),
        ("https://[2606:4700:0:0:0:0:0:1111]:8443/", "https://[2606:4700::1111]:8443/"),
        ("https://1.1.1.1/dns", "https://1.1.1.1/dns"),
        ("https://my_host.example/", "https://my_host.example/"),
    ],
)
def test_urls_are_canonicalised(url: str, canonical: str) -> None:
    assert str(parse_url(url)) == canonical


@pytest.mark.parametrize(
    "url",
    [
        "https://exa mple.com/",
        "https://example.com\r\n/",
        "https://[::1%25eth0]/",
        "https://[::1/",
        "https://[::1]x/",
        "https://ex..ample.com/",
        "https://-example.com/",
        "https://exa$mple.com/",
        "https://%25%36%35xample.com/",
        "https://%ff.example/",
        "https://" + "a" * 64 + ".example/",
        "https://example.com/" + "a" * 9000,
        "https:///path",
    ],
)
def test_malformed_urls_are_refused(url: str) -> None:
    with pytest.raises(FetchError) as caught:
        parse_url(url)
    assert caught.value.kind == "capability_denied"


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("93.184.216.34", True),
        ("1.1.1.1", True),
        ("2606:4700::1111", True),
        ("::ffff:93.184.216.34", True),
        ("127.0.0.1", False),
        ("169.254.169.254", False),
        ("100.100.100.200", False),  # Alibaba metadata, in CGNAT space
        ("192.0.2.1", False),
        ("198.18.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("2001:db8::1", False),
        ("100::1", False),
        ("3fff::1", False),  # documentation (RFC 9637)
        ("4000::1", False),  # outside global unicast
    ],
)
def test_address_classes(address: str, public: bool) -> None:
    assert (address_problem(ipaddress.ip_address(address)) is None) is public


def test_own_interface_addresses_include_loopback() -> None:
    mine = local_addresses()
    assert ipaddress.ip_address("127.0.0.1") in mine


@pytest.mark.parametrize(
    ("pattern", "host", "port", "matches"),
    [
        ("api.example.com", "api.example.com", 443, True),
        ("api.example.com", "api.example.com", 8443, False),
        ("api.example.com:8443", "api.example.com", 8443, True),
        ("*.example.com", "a.b.example.com", 443, True),
        ("*.example.com", "example.com", 443, False),
        ("*.example.com", "badexample.com", 443, False),
        ("API.Example.COM.", "api.example.com", 443, True),
        ("[::1]:8080", "::1", 8080, True),
    ],
)
def test_host_patterns(pattern: str, host: str, port: int, matches: bool) -> None:
    assert HostPattern.parse(pattern).matches(host, port) is matches


@pytest.mark.parametrize(
    "pattern", ["*", "*.1.2.3.4", "a.*.example.com", "0x7f000001", "", "host:99999", "ex ample"]
)
def test_bad_host_patterns(pattern: str) -> None:
    with pytest.raises(FetchPolicyError):
        FetchPolicy(allow=(pattern,))


def test_from_cli() -> None:
    policy = FetchPolicy.from_cli(
        allow_hosts=["api.example.com", "http://127.0.0.1:8000", "https://*.example.org"],
        allow_private=["127.0.0.1", "10.0.0.0/8", "intranet.example"],
        credentials=["api.example.com:Authorization:EXAMPLE_TOKEN"],
        max_requests=5,
    )
    assert policy.allow == ("api.example.com", "127.0.0.1:8000", "*.example.org")
    assert policy.allow_http == ("127.0.0.1:8000",)
    assert policy.credentials == (Credential("api.example.com", "Authorization", "EXAMPLE_TOKEN"),)
    assert policy.max_requests == 5
    assert policy.allows(parse_url("http://127.0.0.1:8000/x"))
    assert not policy.allows(parse_url("http://api.example.com/"))
    assert policy.allows(parse_url("https://www.example.org/"))
    assert policy.private_allowed("x", ipaddress.ip_address("10.9.8.7"))
    assert policy.private_allowed("intranet.example", ipaddress.ip_address("192.168.0.4"))
    assert not policy.private_allowed("x", ipaddress.ip_address("192.168.0.4"))


def test_from_config() -> None:
    policy = FetchPolicy.from_config(
        {
            "allow": ["api.github.com", "http://localhost:8080"],
            "allow_private": ["localhost"],
            "credentials": [
                {"host": "api.github.com", "header": "Authorization", "env": "GITHUB_TOKEN"},
                "api.example.com:X-Key:EXAMPLE_KEY",
            ],
            "read_timeout": 3,
            "max_response_bytes": 1000,
        }
    )
    assert policy.allow_http == ("localhost:8080",)
    assert policy.read_timeout == 3
    assert [c.env for c in policy.credentials] == ["GITHUB_TOKEN", "EXAMPLE_KEY"]


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"allowed": []}, "unknown keys"),
        ({"allow": "api.example.com"}, "list of strings"),
        ({"allow": ["ftp://x"]}, "only http:// or https://"),
        ({"read_timeout": "fast"}, "must be a number"),
        ({"read_timeout": -1}, "positive"),
        ({"max_requests": 1.5}, "integer"),
        ({"credentials": [{"host": "x.test", "header": "A"}]}, r"credentials\[0\]"),
        ({"credentials": [{"host": "x.test", "header": "A", "env": "E", "x": 1}]}, "unknown"),
        ({"credentials": "x"}, "must be a list"),
        ({"allow_private": ["10.0.0.0/33"]}, "CIDR"),
    ],
)
def test_bad_config_tables(table: dict[str, Any], message: str) -> None:
    with pytest.raises(FetchPolicyError, match=message):
        FetchPolicy.from_config(table)


def test_scheme_in_a_plain_pattern_gets_a_pointed_message() -> None:
    with pytest.raises(FetchPolicyError, match="allow_http"):
        FetchPolicy(allow=("http://127.0.0.1:8000",))
