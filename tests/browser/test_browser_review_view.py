"""A reviewer in a real browser finds a tool's pending version from the tools list, sees which
capabilities are new since the approved version and every test with its input, expected value
and canned answer, then approves it (``toolfoundry serve --http``, Debian's chromium)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from playwright.async_api import async_playwright, expect
from tests.server.test_server_web_review import FEED_CODE, feed

from toolfoundry import Foundry

from .conftest import CHROMIUM_ARGS

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WAIT_S = 15.0


def test_a_pending_version_is_reviewed_against_the_approved_one(
    tmp_path: Path, chromium: Path, artifacts: Path, serve_http: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url) as fd:
        assert fd.create_tool(feed()).status == "pending_approval"
        assert fd.approve("feed", 1, by="alice").status == "active"
        v2 = feed(
            code="// v2\n" + FEED_CODE,
            capabilities={"network": ["a.example.com", "c.example.com"]},
            tests=[{"name": "bergen", "input": {"city": "Bergen"}, "expected": -3}],
            fixtures=[
                {"url": "https://a.example.com/w?city=Bergen", "body": '{"temp": -3}'},
                {"url": "https://a.example.com/w?city=Oslo", "body": '{"temp": -3}'},
            ],
        )
        assert fd.create_tool(v2).status == "pending_approval"
    served = serve_http(url, tmp_path)

    async def scenario() -> None:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(WAIT_S * 1000)
            try:
                await page.goto(served.base + "/ui/")
                await page.get_by_role("link", name="v2 pending").click()
                await expect(page.get_by_role("heading", name="feed v2")).to_be_visible()
                caps = page.locator("table.capabilities tbody tr")
                await expect(caps.filter(has_text="c.example.com")).to_contain_text("new since v1")
                await expect(caps.filter(has_text="a.example.com")).to_contain_text("held by v1")
                await expect(caps.filter(has_text="b.example.com")).to_contain_text(
                    "removed since v1"
                )
                tests = page.locator("table.tests tbody tr")
                await expect(tests).to_have_count(2)
                oslo = tests.filter(has_text="v1:oslo")
                await expect(oslo).to_contain_text('"city": "Oslo"')
                await expect(oslo).to_contain_text("passed")
                await expect(page.locator(".fixtures")).to_contain_text(
                    "GET https://a.example.com/w?city=Bergen"
                )
                await page.get_by_role("button", name="Approve v2").click()
                await expect(page.get_by_role("status")).to_contain_text("Approved")
                await page.goto(served.base + "/ui/")
                await expect(page.get_by_role("link", name="v2 pending")).to_have_count(0)
            except BaseException:
                artifacts.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=str(artifacts / "failure.png"), full_page=True)
                raise
            finally:
                await browser.close()

    anyio.run(scenario)
