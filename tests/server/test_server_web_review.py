"""What a reviewer sees of a version, through the HTTP API (checked against the OpenAPI
document) and the page: capabilities marked against the approved version, the suite the
version was gated by with inputs, expected values and canned answers, "identical to vN",
and tools with a pending version flagged in the listing."""

from __future__ import annotations

import copy
import html as html_lib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from toolfoundry import Foundry

from .test_server_web_api import Api
from .test_server_web_support import compose

FEED_CODE = (
    "export async function handler({ city }) {\n"
    "  const r = await fetch('https://a.example.com/w?city=' + encodeURIComponent(city));\n"
    "  return (await r.json()).temp;\n"
    "}\n"
)


def feed(**changes: Any) -> dict[str, Any]:
    """A network tool: v1 holds a.example.com and b.example.com."""
    draft: dict[str, Any] = {
        "name": "feed",
        "description": "Current temperature for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "city name"}},
            "required": ["city"],
        },
        "code": FEED_CODE,
        "capabilities": {"network": ["a.example.com", "b.example.com"]},
        "fixtures": [{"url": "https://a.example.com/w?city=Oslo", "body": '{"temp": -3}'}],
        "tests": [{"name": "oslo", "input": {"city": "Oslo"}, "expected": -3}],
    }
    draft.update(copy.deepcopy(changes))
    return draft


ADD = {
    "name": "add",
    "description": "Add two numbers",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
    "code": "export function handler({ a, b }) { return a + b; }\n",
    "tests": [{"name": "small", "input": {"a": 1, "b": 2}, "expected": 3}],
}


@pytest.fixture
def fd(foundry: Foundry) -> Foundry:
    assert foundry.create_tool(feed()).status == "pending_approval"
    assert foundry.approve("feed", 1, by="alice").status == "active"
    v2 = feed(
        code="// v2: also reads c\n" + FEED_CODE,
        capabilities={"network": ["a.example.com", "c.example.com"], "storage": True},
        tests=[
            {
                "name": "bergen",
                "input": {"city": "Bergen"},
                "expected": 7,
                "fixtures": [{"url": "https://a.example.com/w?city=Bergen", "body": '{"temp": 7}'}],
            },
            {"name": "no city", "input": {"city": ""}, "error": "fetch"},
        ],
        fixtures=[],
    )
    created = foundry.create_tool(v2)
    assert created.status == "pending_approval", created
    assert foundry.create_tool(ADD).status == "active"
    bigger = {
        **ADD,
        "code": "export function handler({ a, b }) { return Number(a) + Number(b); }\n",
        "tests": [{"name": "negative", "input": {"a": -1, "b": -2}, "expected": -3}],
    }
    assert foundry.create_tool(bigger).status == "active"
    # the same code and parameters as v2, another description: a new version, an empty diff
    assert foundry.create_tool({**bigger, "description": "Add two numbers (a + b)"}).version == 3
    return foundry


@pytest.fixture
def client(fd: Foundry) -> Iterator[TestClient]:
    with TestClient(compose(fd), base_url="http://127.0.0.1:8000") as c:
        yield c


def page_text(html: str) -> str:
    """The visible text of a page: tags removed, entities decoded, whitespace collapsed."""
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", html)))


def test_capabilities_are_marked_against_the_approved_version(client: TestClient) -> None:
    review = Api(client).get("/api/tools/feed/versions/2")
    changes = {
        (c["capability"], str(c["value"])): c["change"] for c in review["capability_details"]
    }
    assert changes == {
        ("network", "a.example.com"): "kept",
        ("network", "c.example.com"): "added",
        ("storage", "tool"): "added",
    }
    assert review["capability_changes"]["against"] == 1
    assert [(c["capability"], c["value"]) for c in review["capability_changes"]["removed"]] == [
        ("network", "b.example.com")
    ]
    first = Api(client).get("/api/tools/feed/versions/1")  # the approved one itself: a new tool
    assert first["capability_changes"] == {"against": None, "removed": []}
    assert {c["change"] for c in first["capability_details"]} == {"added"}

    shown = page_text(client.get("/ui/tools/feed/v/2").text)
    assert re.search(r"c\.example\.com .*? new since v1", shown)
    assert re.search(r"storage tool .*? new since v1", shown)
    assert re.search(r"a\.example\.com .*? held by v1", shown)
    assert re.search(r"b\.example\.com .*? removed since v1", shown)


def test_every_test_of_the_suite_is_shown_with_input_expected_and_fixtures(
    client: TestClient,
) -> None:
    suite = Api(client).get("/api/tools/feed/versions/2")["suite"]
    assert [t["label"] for t in suite["tests"]] == ["v1:oslo", "bergen", "no city"]
    oslo, bergen, no_city = suite["tests"]
    assert (oslo["version"], oslo["input"], oslo["expected"]) == (1, {"city": "Oslo"}, -3)
    assert oslo["result"]["passed"] is True
    assert bergen["fixtures"][0]["url"] == "https://a.example.com/w?city=Bergen"
    assert bergen["result"]["passed"] is True
    assert no_city["error"] == "fetch"
    assert "expected" not in no_city
    assert suite["retired"] == []

    shown = page_text(client.get("/ui/tools/feed/v/2").text)
    assert re.search(r'v1:oslo \(from v1\) \{ "city": "Oslo" \} -3 none passed', shown), shown
    assert re.search(
        r'bergen \{ "city": "Bergen" \} 7 GET https://a\.example\.com/w\?city=Bergen → 200 '
        r'\{"temp": 7\} passed',
        shown,
    )
    assert re.search(r'no city \{ "city": "" \} an error containing "fetch"', shown)
    # v1's page lists its draft-wide canned answer
    first = page_text(client.get("/ui/tools/feed/v/1").text)
    assert "Canned HTTP answers for every test" in first
    assert 'GET https://a.example.com/w?city=Oslo → 200 {"temp": -3}' in first


def test_a_version_identical_to_another_says_so(client: TestClient) -> None:
    api = Api(client)
    assert api.get("/api/tools/add/versions/3")["identical_to"] == 2
    assert api.get("/api/tools/add/versions/2")["identical_to"] == 3
    assert api.get("/api/tools/add/versions/1")["identical_to"] is None
    shown = page_text(client.get("/ui/tools/add/v/3").text)
    assert re.search(r"The code and parameters are identical to v2 ?: the diff is empty", shown)
    assert "identical to" not in page_text(client.get("/ui/tools/add/v/1").text)
    # v2's suite: v1's test, then its own
    suite = api.get("/api/tools/add/versions/2")["suite"]
    assert [t["label"] for t in suite["tests"]] == ["v1:small", "negative"]


def test_the_tools_list_flags_a_pending_version(client: TestClient) -> None:
    rows = {r["name"]: r for r in Api(client).get("/api/tools")}
    assert (rows["feed"]["version"], rows["feed"]["pending_versions"]) == (1, [2])
    assert rows["add"]["pending_versions"] == []
    html = client.get("/ui/").text
    row = re.search(r'<tr>\s*<td><a href="/ui/tools/feed">.*?</tr>', html, re.S)
    assert row
    assert 'href="/ui/tools/feed/v/2">v2 pending</a>' in row.group(0)
    other = re.search(r'<tr>\s*<td><a href="/ui/tools/add">.*?</tr>', html, re.S)
    assert other
    assert "pending" not in other.group(0)


def test_hostile_test_values_and_fixtures_are_shown_escaped(tmp_path: Path) -> None:
    hostile = "\u202e</pre><script>alert(1)</script>\x1b[2K"
    fd = Foundry.open(f"sqlite:///{tmp_path / 'hostile.db'}")
    draft = feed(
        tests=[
            {
                "name": "oslo",
                "input": {"city": hostile},
                "expected": -3,
                "fixtures": [
                    {
                        "url": "https://a.example.com/w?city=" + "x",
                        "headers": {"x-note": hostile},
                        "body": '{"temp": -3, "note": "'
                        + "</pre><img src=x onerror=alert(2)>"
                        + '"}',
                    }
                ],
            }
        ],
        code=FEED_CODE.replace("encodeURIComponent(city)", "'x'"),
    )
    assert fd.create_tool(draft).status == "pending_approval"
    with TestClient(compose(fd), base_url="http://127.0.0.1:8000") as c:
        html = c.get("/ui/tools/feed/v/1").text
    fd.close()
    for raw in ("\u202e", "\x1b", "<script>", "<img"):
        assert raw not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(2)&gt;" in html
    assert "\\u202e" in html
