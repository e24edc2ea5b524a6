"""Tools that use tools on the HTTP API and the review page: a tool's detail and a version's
review say what it calls and what calls it (every response checked against the OpenAPI
document), and a reviewer approving a new version of a network tool sees which tools will
reach it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.testclient import TestClient

from toolfoundry import Foundry

from .test_server_web_api import Api
from .test_server_web_support import compose, network_draft

CARD: dict[str, Any] = {
    "name": "city_card",
    "description": "A city's name with its temperature.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    "code": "export default async ({ city }) => `${city}: ${await tools.weather({ city })}`;",
    "tests": [
        {
            "input": {"city": "Oslo"},
            "expected": "Oslo: -3",
            "fixtures": [{"tool": "weather", "args": {"city": "Oslo"}, "value": -3}],
        }
    ],
}


@pytest.fixture
def client(foundry: Foundry) -> Iterator[TestClient]:
    """weather v1 approved and called by city_card; weather v2 (a second host) waiting."""
    assert foundry.create_tool(network_draft("weather")).status == "pending_approval"
    assert foundry.approve("weather", by="alice").status == "active"
    made = foundry.create_tool(CARD)
    assert made.status == "active", made.to_dict()
    v2 = network_draft("weather")
    v2["capabilities"] = {"network": ["api.example.com", "backup.example.com"]}
    made = foundry.create_tool(v2)
    assert made.status == "pending_approval", made.to_dict()
    assert "the suites of 1 tool(s) that call it pass against it" in made.step.message
    with TestClient(compose(foundry), base_url="http://127.0.0.1:8000") as client:
        yield client


def test_the_api_says_what_a_tool_calls_and_what_calls_it(client: TestClient) -> None:
    api = Api(client)
    card = api.get("/api/tools/city_card")
    assert card["uses"] == [
        {
            "tool": "weather",
            "tested_against": 1,
            "found": "code",
            "status": "active",
            "current_version": 1,
        }
    ]
    assert card["used_by"] == []
    weather = api.get("/api/tools/weather")
    assert weather["used_by"] == [
        {
            "name": "city_card",
            "version": 1,
            "status": "active",
            "current": True,
            "tested_against": 1,
        }
    ]
    review = api.get("/api/tools/weather/versions/2")
    assert [d["name"] for d in review["used_by"]] == ["city_card"]
    assert review["uses"] == []


def test_the_reviewer_of_a_network_tool_sees_who_will_call_it(client: TestClient) -> None:
    page = client.get("/ui/tools/weather/v/2")
    assert page.status_code == 200
    assert "Approving this version lets 1 tool(s) whose code calls weather reach it" in page.text
    assert 'href="/ui/tools/city_card/v/1">city_card v1</a>' in page.text
    card = client.get("/ui/tools/city_card")
    assert 'id="uses"><a href="/ui/tools/weather">weather</a>' in card.text
    assert "tested against v1" in card.text
