"""A person reviews tools in a real browser while an MCP client is connected.

Chromium opens the review page served by ``toolfoundry serve --http``, finds a pending
network tool, reads its diff, approves it; the MCP client (official SDK, Streamable HTTP)
receives ``notifications/tools/list_changed`` and calls the tool, which reaches a real
loopback server. Another tool is rejected with a reason, which the audit log then shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from playwright.async_api import Page, async_playwright, expect
from tests.shared_drafts import network_draft

from toolfoundry import Foundry

from .conftest import CHROMIUM_ARGS

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WAIT_S = 15.0


def _network_tool(name: str, host: str) -> dict[str, Any]:
    return network_draft(
        name, host, scheme="http", description=f"Current temperature for a city ({name})"
    )


class ListChanged:
    """Counts ``notifications/tools/list_changed`` from the server."""

    def __init__(self) -> None:
        self.count = 0
        self.event = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self.event.set()

    async def wait(self, seen: int) -> None:
        with anyio.fail_after(WAIT_S):
            while self.count <= seen:
                await self.event.wait()
                self.event = anyio.Event()


async def _review(page: Page, base: str, session: ClientSession, notes: ListChanged) -> None:
    await page.goto(base + "/ui/")
    await expect(page.get_by_role("link", name="2 versions waiting for approval")).to_be_visible()
    await page.get_by_role("link", name="Approvals").first.click()
    await expect(page.get_by_role("heading", name="Pending approvals")).to_be_visible()
    await page.get_by_role("link", name="weather", exact=True).click()

    # The reviewer reads what the tool would do before deciding.
    await expect(page.get_by_role("heading", name="weather v1")).to_be_visible()
    diff = page.locator("#diff + .hl")
    await expect(diff).to_contain_text("+  const r = await fetch(")
    await expect(page.get_by_text("may send HTTP requests to 127.0.0.1")).to_be_visible()
    await expect(page.get_by_text("passed", exact=True)).to_be_visible()

    tools = {t.name for t in (await session.list_tools()).tools}
    assert "weather" not in tools
    seen = notes.count
    approve = page.locator("form", has=page.get_by_role("button", name="Approve v1"))
    await approve.get_by_label("Your name").fill("alice")
    await approve.get_by_role("button", name="Approve v1").click()
    await expect(page.get_by_role("status")).to_contain_text("Approved")
    await expect(page.get_by_text("Approved by alice")).to_be_visible()

    await notes.wait(seen)
    tools = {t.name for t in (await session.list_tools()).tools}
    assert "weather" in tools
    result = await session.call_tool("weather", {"city": "Bergen"})
    assert not result.is_error, result
    assert result.structured_content == {"result": 6}

    # Rejecting needs a reason: the browser refuses to submit the form without one.
    await page.goto(base + "/ui/tools/news/v/1")
    reject = page.locator("form", has=page.get_by_role("button", name="Reject v1"))
    await reject.get_by_role("button", name="Reject v1").click()
    await expect(page.get_by_role("heading", name="news v1")).to_be_visible()
    assert page.url.endswith("/ui/tools/news/v/1")
    await reject.get_by_label("Your name").fill("bob")
    await reject.get_by_label("Reason (required)").fill("reads from a host nobody vetted")
    await reject.get_by_role("button", name="Reject v1").click()
    await expect(page.get_by_role("status")).to_contain_text("Rejected")

    await page.get_by_role("link", name="Audit log").first.click()
    first = page.locator("table.audit tbody tr").first
    await expect(first).to_contain_text("rejected")
    await expect(first).to_contain_text("bob")
    await expect(first).to_contain_text("reads from a host nobody vetted")


def test_review_in_the_browser_while_an_mcp_client_watches(
    tmp_path: Path, chromium: Path, artifacts: Path, weather_server: str, serve_http: Any
) -> None:
    (tmp_path / "toolfoundry.toml").write_text(
        f'[fetch]\nallow_http = ["{weather_server}"]\nallow_private = ["127.0.0.1"]\n'
    )
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url, config=tmp_path / "toolfoundry.toml") as fd:
        assert fd.create_tool(_network_tool("weather", weather_server)).status == (
            "pending_approval"
        )
        assert fd.create_tool(_network_tool("news", weather_server)).status == "pending_approval"
    served = serve_http(url, tmp_path)

    async def scenario() -> None:
        notes = ListChanged()
        client = httpx2.AsyncClient(timeout=httpx2.Timeout(30, read=300))
        async with (
            client,
            streamable_http_client(served.base + "/mcp", http_client=client) as (read, write),
            ClientSession(read, write, message_handler=notes) as session,
            async_playwright() as pw,
        ):
            await session.initialize()
            browser = await pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(WAIT_S * 1000)
            try:
                await _review(page, served.base, session, notes)
            except BaseException:
                artifacts.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=str(artifacts / "failure.png"), full_page=True)
                raise
            finally:
                await browser.close()

    anyio.run(scenario)


def test_token_login_then_approve_with_the_session_cookie(
    tmp_path: Path, chromium: Path, artifacts: Path, serve_http: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url) as fd:
        # https: a plain-http fixture for a host [fetch] does not allow is refused at create
        draft = network_draft("weather", "api.example.com", description="Current temperature")
        assert fd.create_tool(draft).status == "pending_approval"
    served = serve_http(url, tmp_path, "--token", "browser-secret")

    async def scenario() -> None:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
            context = await browser.new_context()
            page = await context.new_page()
            page.set_default_timeout(WAIT_S * 1000)
            try:
                refused = await page.goto(served.base + "/ui/")
                assert refused is not None
                assert refused.status == 401
                await expect(page.get_by_text("needs the server's token")).to_be_visible()

                await page.goto(served.base + "/ui/tools/weather/v/1?token=browser-secret")
                assert page.url == served.base + "/ui/tools/weather/v/1"  # token gone from URL
                cookies = {c["name"]: c for c in await context.cookies()}
                session = cookies["tf_session"]
                assert session["httpOnly"] is True
                assert session["sameSite"] == "Strict"

                await page.get_by_role("button", name="Approve v1").click()
                await expect(page.get_by_role("status")).to_contain_text("Approved")
            except BaseException:
                artifacts.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=str(artifacts / "failure.png"), full_page=True)
                raise
            finally:
                await browser.close()

    anyio.run(scenario)
    with Foundry.open(url) as fd:
        assert fd.show("weather").status.value == "active"
        assert fd.audit("weather")[-1].actor == "web reviewer"
