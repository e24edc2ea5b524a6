"""One HostPattern for the forge, the foundry and the fetch policy: parse, matches, covers."""

from __future__ import annotations

import pytest

import toolfoundry.sandbox.host.fetch as fetch_module
from toolfoundry.forge import CapabilityPolicy
from toolfoundry.sandbox.host.fetch import FetchPolicy
from toolfoundry.sandbox.host.hosts import (
    HostPattern,
    HostPatternError,
    pattern_covered,
    pattern_problem,
)
from toolfoundry.sandbox.host.netguard import parse_url
from toolfoundry.spec import Capabilities


def test_the_fetch_policy_uses_the_one_pattern_type() -> None:
    assert fetch_module.HostPattern is HostPattern


@pytest.mark.parametrize(
    ("outer", "inner", "covered"),
    [
        ("api.example.com", "api.example.com", True),
        ("api.example.com", "api.example.com:443", True),  # no port means 443
        ("api.example.com", "api.example.com:8443", False),
        ("api.example.com:8443", "api.example.com", False),
        ("*.example.com", "api.example.com", True),
        ("*.example.com", "*.api.example.com", True),
        ("*.example.com", "*.example.com", True),
        ("*.example.com", "example.com", False),
        ("api.example.com", "*.example.com", False),
        ("*.example.com", "badexample.com", False),
        ("Bücher.example", "xn--bcher-kva.example", True),
        ("[::1]:8080", "[0:0::1]:8080", True),
    ],
)
def test_covers(outer: str, inner: str, covered: bool) -> None:
    assert HostPattern.parse(outer).covers(HostPattern.parse(inner)) is covered
    assert pattern_covered(inner, [outer]) is covered


@pytest.mark.parametrize(
    "text", ["https://api.example.com", "a/b", "user@host", "*", "*.", "host:0", "host:x", ""]
)
def test_not_patterns(text: str) -> None:
    with pytest.raises(HostPatternError):
        HostPattern.parse(text)
    assert pattern_problem(text)


@pytest.mark.parametrize(
    ("pattern", "url"),
    [
        ("bücher.example", "https://xn--bcher-kva.example/x"),
        ("xn--bcher-kva.example", "https://BÜCHER.example/x"),
        ("*.bücher.example", "https://shop.xn--bcher-kva.example/x"),
    ],
)
def test_idn_hosts_match_in_either_form_at_call_time(pattern: str, url: str) -> None:
    assert FetchPolicy(allow=(pattern,)).allows(parse_url(url))


def test_idn_hosts_match_in_either_form_in_the_approval_policy() -> None:
    policy = CapabilityPolicy(auto_approve_network=("bücher.example",))
    assert not policy.decide(Capabilities(network=("xn--bcher-kva.example",))).needs_approval
