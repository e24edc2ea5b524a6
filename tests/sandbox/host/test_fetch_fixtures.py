"""FixtureFetch: deterministic answers for network tools under test, never a socket."""

from __future__ import annotations

import base64
import json
import time
from typing import TYPE_CHECKING, Any

import pytest

from toolfoundry.sandbox.host.fixtures import FixtureError, FixtureFetch

if TYPE_CHECKING:
    from tests.sandbox.host.conftest import LoopbackServer


def _handle(provider: FixtureFetch, url: str, method: str = "GET") -> dict[str, Any]:
    handler = provider.handler(deadline=time.monotonic() + 1, tool="t")
    return handler.handle({"url": url, "method": method, "headers": [], "body": None})


def test_matching_fixture_answers_and_network_stays_untouched(canary: LoopbackServer) -> None:
    provider = FixtureFetch(
        [
            {
                "url": f"http://127.0.0.1:{canary.port}/weather?city=Oslo",
                "status": 200,
                "headers": {"Content-Type": "text/plain"},
                "body": "sunny",
            }
        ]
    )
    out = _handle(provider, f"http://127.0.0.1:{canary.port}/weather?city=Oslo")
    assert out["status"] == 200
    assert out["statusText"] == "OK"
    assert ["Content-Type", "text/plain"] in out["headers"]
    assert base64.b64decode(out["body"]) == b"sunny"
    assert canary.hits == []


@pytest.mark.parametrize(
    "spelling",
    [
        "https://API.Example.com/x?q=1",
        "https://api.example.com./x?q=1",
        "https://api.example.com:443/x?q=1",
        "https://api.example.com/x?q=1#section",
        "HTTPS://api.example.com/x?q=1",
    ],
)
def test_urls_match_after_canonicalisation(spelling: str) -> None:
    provider = FixtureFetch([{"url": "https://api.example.com/x?q=1", "body": "hit"}])
    assert base64.b64decode(_handle(provider, spelling)["body"]) == b"hit"


def test_method_is_part_of_the_match() -> None:
    provider = FixtureFetch(
        [
            {"url": "https://api.example.com/items", "method": "POST", "status": 201},
            {"url": "https://api.example.com/items", "body": "[]"},
        ]
    )
    assert _handle(provider, "https://api.example.com/items", "post")["status"] == 201
    assert _handle(provider, "https://api.example.com/items")["status"] == 200
    out = _handle(provider, "https://api.example.com/items", "DELETE")
    assert out["error"]["kind"] == "capability_denied"


def test_unmatched_request_lists_the_fixtures() -> None:
    provider = FixtureFetch(
        [{"url": "https://a.example/1"}, {"url": "https://b.example/2", "method": "PUT"}]
    )
    out = _handle(provider, "https://a.example/other")
    assert out["error"]["kind"] == "capability_denied"
    message = out["error"]["message"]
    assert "GET https://a.example/other" in message
    assert "GET https://a.example/1" in message
    assert "PUT https://b.example/2" in message


def test_no_fixtures_means_the_network_is_cut() -> None:
    out = _handle(FixtureFetch([]), "https://api.example.com/")
    assert out["error"]["kind"] == "capability_denied"
    assert "network is cut" in out["error"]["message"]


def test_json_body_is_serialised_with_a_content_type() -> None:
    provider = FixtureFetch([{"url": "https://api.example.com/j", "body": {"temp": 21.5}}])
    out = _handle(provider, "https://api.example.com/j")
    assert json.loads(base64.b64decode(out["body"])) == {"temp": 21.5}
    assert ["Content-Type", "application/json"] in out["headers"]


def test_hostile_urls_get_the_same_refusals_as_real_fetch() -> None:
    provider = FixtureFetch([{"url": "https://api.example.com/"}])
    for url in ("file:///etc/passwd", "http://2130706433/", "https://u@api.example.com/"):
        assert _handle(provider, url)["error"]["kind"] == "capability_denied"


def test_request_cap_applies() -> None:
    provider = FixtureFetch([{"url": "https://api.example.com/"}], max_requests=1)
    handler = provider.handler(deadline=time.monotonic() + 1, tool="t")
    request = {"url": "https://api.example.com/", "method": "GET", "headers": []}
    assert handler.handle(request)["status"] == 200
    assert handler.handle(request)["error"]["kind"] == "capability_denied"


@pytest.mark.parametrize(
    ("fixtures", "where"),
    [
        ("not a list", "list of objects"),
        ([42], r"fixtures\[0\] must be an object"),
        ([{"url": "ftp://x/"}], r"fixtures\[0\]\.url"),
        ([{"url": "https://x.test/", "method": "TRACE"}], r"fixtures\[0\]\.method"),
        ([{"url": "https://x.test/", "status": 999}], r"fixtures\[0\]\.status"),
        ([{"url": "https://x.test/", "status": True}], r"fixtures\[0\]\.status"),
        ([{"url": "https://x.test/", "headers": "x"}], r"fixtures\[0\]\.headers"),
        ([{"url": "https://x.test/", "headers": {"a": 1}}], r"fixtures\[0\]\.headers"),
        ([{"url": "https://x.test/", "bogus": 1}], "unknown keys"),
        ([{"url": "https://x.test/"}, {"url": "https://X.test/"}], r"fixtures\[1\] repeats"),
    ],
)
def test_malformed_fixtures_are_reported_with_their_place(fixtures: Any, where: str) -> None:
    with pytest.raises(FixtureError, match=where):
        FixtureFetch(fixtures)
