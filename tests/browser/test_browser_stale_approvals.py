"""A person opens the approvals queue in a real browser: a version superseded by a newer one
and a version of a disabled tool say so before the click, offer no Approve button, and can
still be rejected (registry/holds.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from playwright.async_api import Page, async_playwright, expect
from tests.foundry.test_foundry_stale_approvals import disabled_with_pending, pure_temp
from tests.shared_drafts import network_draft

from toolfoundry import Foundry

from .conftest import CHROMIUM_ARGS

pytestmark = [pytest.mark.slow, pytest.mark.browser]


async def _queue(page: Page, base: str) -> None:
    await page.goto(base + "/ui/")
    await page.get_by_role("link", name="Approvals").first.click()
    queue = page.locator("table.grid")
    await expect(queue).to_contain_text("superseded by v3: reject it")
    await expect(queue).to_contain_text("tool disabled: enable it first")

    await page.get_by_role("link", name="other", exact=True).click()
    await expect(page.get_by_role("heading", name="other v2")).to_be_visible()
    await expect(page.locator("#approval-hold")).to_contain_text("superseded")
    assert await page.get_by_role("button", name="Approve v2").count() == 0
    reject = page.locator("form", has=page.get_by_role("button", name="Reject v2"))
    await reject.get_by_label("Your name").fill("alice")
    await reject.get_by_label("Reason (required)").fill("v3 replaced it")
    await reject.get_by_role("button", name="Reject v2").click()
    await expect(page.get_by_role("status")).to_contain_text("Rejected")

    await page.goto(base + "/ui/tools/temp/v/2")
    await expect(page.locator("#approval-hold")).to_contain_text("disabled (by 'carol')")
    assert await page.get_by_role("button", name="Approve v2").count() == 0


def test_the_queue_says_superseded_and_disabled_before_the_click(
    tmp_path: Path, chromium: Path, artifacts: Path, serve_http: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url) as fd:
        disabled_with_pending(fd)  # temp: v1 active, v2 pending, disabled by carol
        other = {**pure_temp(), "name": "other"}  # not a duplicate of a disabled tool
        assert fd.create_tool(other).status == "active"
        assert fd.create_tool(network_draft("other", "api.example.com")).version == 2
        newer = {**other, "description": "Temperature of a city"}
        assert fd.create_tool(newer).version == 3  # active: other v2 is superseded
    served = serve_http(url, tmp_path)

    async def scenario() -> None:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(15_000)
            try:
                await _queue(page, served.base)
            except BaseException:
                artifacts.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=str(artifacts / "failure.png"), full_page=True)
                raise
            finally:
                await browser.close()

    anyio.run(scenario)
    with Foundry.open(url) as fd:
        assert fd.show("other").version == 3
        assert fd.show("other", 2).status.value == "rejected"
        assert fd.show("temp").status.value == "disabled"
