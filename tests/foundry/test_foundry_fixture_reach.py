"""Create refuses a fixture the call-time fetch policy would refuse, located, naming the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from tests.shared_drafts import network_draft

from toolfoundry import Foundry
from toolfoundry.config import parse_config
from toolfoundry.foundry.create import CreateResult

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit


def open_foundry(db_url: str, fetch: dict[str, Any] | None = None) -> Foundry:
    return Foundry.open(db_url, config=parse_config({"fetch": fetch} if fetch else {}))


def located(result: CreateResult, path: str) -> str:
    [message] = [f.message for f in result.findings if f.path == path]
    return message


def test_a_plain_http_fixture_is_refused_at_create_naming_allow_http(
    db_url: str, kit: type[Kit]
) -> None:
    with open_foundry(db_url) as fd:
        before = kit.snapshot(fd)
        result = fd.create_tool(network_draft("weather", "api.example.com:80", scheme="http"))
        assert result.status == "rejected"
        assert result.step.blockers == ("invalid_draft",)
        message = located(result, "$.fixtures[0].url")
        assert "[fetch] allow_http" in message
        assert "add 'api.example.com' there" in message
        assert kit.snapshot(fd) == before


def test_allow_http_lets_the_same_draft_through(db_url: str) -> None:
    with open_foundry(db_url, {"allow_http": ["api.example.com:80"]}) as fd:
        result = fd.create_tool(network_draft("weather", "api.example.com:80", scheme="http"))
        assert result.status == "pending_approval", result.findings


def test_a_test_case_fixture_is_located_in_its_test(db_url: str) -> None:
    draft = network_draft("weather", "api.example.com:80", scheme="http")
    draft["tests"][0]["fixtures"] = draft.pop("fixtures")
    with open_foundry(db_url) as fd:
        result = fd.create_tool(draft)
        assert "[fetch] allow_http" in located(result, "$.tests[0].fixtures[0].url")


def test_a_private_address_is_refused_naming_allow_private(db_url: str) -> None:
    with open_foundry(db_url) as fd:
        result = fd.create_tool(network_draft("weather", "127.0.0.1:8443"))
        message = located(result, "$.fixtures[0].url")
        assert "loopback" in message
        assert "[fetch] allow_private" in message
    with open_foundry(db_url, {"allow_private": ["127.0.0.1"]}) as fd:
        assert fd.create_tool(network_draft("weather", "127.0.0.1:8443")).status == (
            "pending_approval"
        )


def test_a_host_outside_the_configured_allowlist_is_refused_naming_allow(db_url: str) -> None:
    with open_foundry(db_url, {"allow": ["api.github.com"]}) as fd:
        result = fd.create_tool(network_draft("weather", "api.example.com"))
        assert "[fetch] allow" in located(result, "$.fixtures[0].url")


def test_a_pattern_without_a_port_means_443_for_fixtures_as_for_calls(db_url: str) -> None:
    # plain http on port 80 needs the port named, in the capability as in allow_http
    draft = network_draft("weather", "api.example.com", scheme="http")
    with open_foundry(db_url, {"allow_http": ["api.example.com"]}) as fd:
        result = fd.create_tool(draft)
        assert "capabilities.network" in located(result, "$.fixtures[0].url")


@pytest.mark.parametrize(
    ("capability", "fixture_host"),
    [("bücher.example", "xn--bcher-kva.example"), ("xn--bcher-kva.example", "Bücher.example")],
)
def test_idn_hosts_match_in_either_form(db_url: str, capability: str, fixture_host: str) -> None:
    draft = network_draft("books", capability)
    draft["fixtures"] = [{"url": f"https://{fixture_host}/w?city=Oslo", "body": '{"temp": -3}'}]
    with open_foundry(db_url, {"allow": [fixture_host]}) as fd:
        result = fd.create_tool(draft)
        assert result.status == "pending_approval", result.findings


def test_the_cli_prints_the_located_refusal(db_url: str, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from toolfoundry.cli import main

    path = tmp_path / "weather.json"
    path.write_text(json.dumps(network_draft("weather", "api.example.com:80", scheme="http")))
    result = CliRunner().invoke(main, ["create", str(path), "--json", "--db", db_url])
    body = json.loads(result.stdout)
    assert body["status"] == "rejected"
    [finding] = [f for f in body["findings"] if f["path"] == "$.fixtures[0].url"]
    assert "[fetch] allow_http" in finding["message"]
