"""Approvals and lifecycle through the HTTP API: an approval names its version,
a disabled tool answers at no version, the audit log names who acted."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from starlette.testclient import TestClient
from tests.factories import McpSessionFactory

from toolfoundry import Foundry

from .mcp.test_mcp_support import relaxed_config, text_of
from .test_server_web_api import Api
from .test_server_web_support import SHOUT, compose, network_draft


@pytest.fixture
def api(fd: Foundry) -> Iterator[Api]:
    with TestClient(compose(fd), base_url="http://127.0.0.1:8000") as client:
        yield Api(client)


def test_an_approval_binds_the_version_in_its_path(api: Api, fd: Foundry) -> None:
    later = {**network_draft("weather"), "description": "Temperature from elsewhere"}
    assert api.post("/api/tools", later, 201)["version"] == 2  # arrives after v1 was shown
    done = api.post("/api/tools/weather/versions/1/approve", {"by": "alice"})
    assert (done["version"], done["status"]) == (1, "active")
    assert fd.show("weather", 2).status.value == "pending_approval"
    # there is no way to approve "whatever is newest" over HTTP
    assert api.client.post("/api/tools/weather/approve", json={}).status_code in (404, 405)
    assert fd.show("weather", 2).status.value == "pending_approval"


def test_a_disabled_tool_answers_at_no_version(api: Api, fd: Foundry) -> None:
    assert api.post("/api/tools/shout/disable", {"by": "carol"})["status"] == "disabled"
    for body in ({"args": {"text": "a"}}, {"args": {"text": "a"}, "version": 1}):
        refused = api.post("/api/tools/shout/call", body, 409)["error"]
        assert refused["kind"] == "not_active"
        assert "disabled (by 'carol')" in refused["message"]
    # a person's rollback over the API switches it back on
    assert api.post("/api/tools/shout/rollback", {"version": 1, "by": "dave"})["version"] == 1
    assert api.post("/api/tools/shout/call", {"args": {"text": "a"}})["value"] == "A"


def test_mcp_rollback_tool_cannot_switch_a_disabled_tool_on(
    tmp_path: Path, mcp_session: McpSessionFactory
) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url, config=relaxed_config(tmp_path)) as fd:
        assert fd.create_tool(SHOUT).status == "active"
        assert fd.create_tool({**SHOUT, "description": "Shout it"}).version == 2
        fd.disable("shout", by="carol")

    async def scenario() -> None:
        async with mcp_session(url, tmp_path) as (session, _notes):
            back = await session.call_tool("rollback_tool", {"name": "shout", "version": 1})
            assert back.is_error
            assert "disabled by 'carol'" in text_of(back)
            created = await session.call_tool("create_tool", {**SHOUT, "description": "Again"})
            assert "disabled (by 'carol')" in text_of(created)
            made = await session.call_tool("create_tool", {**SHOUT, "name": "yell"})
            assert not made.is_error

    anyio.run(scenario)
    with Foundry.open(url) as fd:
        assert (fd.show("shout").version, fd.show("shout").status.value) == (2, "disabled")
        assert len(fd.history("shout")) == 2
        assert {e.actor for e in fd.audit("yell")} == {"agent"}  # MCP create: the agent acted


def test_api_create_audits_the_token_holder_not_the_draft_author(api: Api, fd: Foundry) -> None:
    made = api.post("/api/tools", {**SHOUT, "name": "yell", "author": "admin"}, 201)
    assert made["status"] == "active"
    assert {e.actor for e in fd.audit("yell")} == {"api"}
    assert fd.show("yell").author == "admin"
    assert fd.audit("yell")[0].detail["author"] == "admin"


def test_api_create_refuses_lookalike_names(api: Api, fd: Foundry) -> None:
    for name, like in (("Create-Tool", "meta-tool 'create_tool'"), ("SHOUT", "tool 'shout'")):
        refused = api.post("/api/tools", {**SHOUT, "name": name}, 422)
        problem = next(f for f in refused["findings"] if f["path"] == "$.name")
        assert f"looks like the {like}" in problem["message"] or like in problem["message"]
    assert {t.name for t in fd.tools()} == {"shout", "weather", "news"}


def test_api_and_page_show_a_lookalike_host_in_both_forms(api: Api, fd: Foundry) -> None:
    lookalike, punycode = "api.g\u0456thub.com", "api.xn--gthub-n2e.com"
    assert api.post("/api/tools", network_draft("gh", lookalike), 201)["version"] == 1
    detail = api.get("/api/tools/gh/versions/1")["capability_details"][0]
    assert (detail["host"]["unicode"], detail["host"]["ascii"]) == (lookalike, punycode)
    assert "mixes Cyrillic and Latin" in detail["host"]["warning"]
    page = api.client.get("/ui/tools/gh/v/1")
    assert page.status_code == 200
    assert punycode in page.text
    assert lookalike in page.text
    assert 'class="warning">WARNING:' in page.text
    listing = api.client.get("/ui/approvals")
    assert f"{lookalike} (punycode {punycode}) WARNING" in listing.text
    tool_page = api.client.get("/ui/tools/gh")
    assert punycode in tool_page.text
