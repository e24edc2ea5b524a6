"""``toolfoundry serve`` reviews the library by itself, and a person reads it in a browser.

A ``serve --http`` with ``[review] every = "2s"`` reviews at start, then on its schedule; the
review page shows the last one. Stopped, its stored review is made to look as if it ran under
another guest and wasmtime (a runtime change, simulated by changing the stored fingerprint) and
the limits shrink so that one tool's own test fails; started again with a daily schedule, it
reviews at once because the runtime changed, and the page flags the tool, which stays active.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from playwright.async_api import Page, async_playwright, expect
from sqlalchemy import update
from tests.foundry.test_foundry_review_schedule import HOG
from tests.server.mcp.test_mcp_support import serve_http
from tests.shared_drafts import WORD_COUNT

from toolfoundry import Foundry
from toolfoundry.foundry.runtime_identity import RuntimeIdentity
from toolfoundry.registry.schema import reviews

from .conftest import CHROMIUM_ARGS

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WAIT_S = 60.0


def wait_for_line(log: Path, text: str) -> str:
    """The first stderr line of ``serve`` containing ``text``."""
    deadline = time.monotonic() + WAIT_S
    while True:
        lines = log.read_text().splitlines()
        found = [line for line in lines if text in line]
        if found:
            return found[0]
        assert time.monotonic() < deadline, f"no {text!r} in {lines}"
        time.sleep(0.1)


async def look(page: Page, base: str, checks: Any) -> None:
    await page.goto(base + "/ui/")
    await page.get_by_role("link", name="Review", exact=True).click()
    await expect(page.get_by_role("heading", name="Library review")).to_be_visible()
    await checks(page)


def browse(chromium: Path, artifacts: Path, base: str, checks: Any, shot: str) -> None:
    async def scenario() -> None:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(15_000)
            try:
                await look(page, base, checks)
            except BaseException:
                artifacts.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=str(artifacts / shot), full_page=True)
                raise
            finally:
                await browser.close()

    anyio.run(scenario)


def test_serve_reviews_the_library_by_itself_and_the_page_shows_it(
    tmp_path: Path, chromium: Path, artifacts: Path
) -> None:
    config = tmp_path / "toolfoundry.toml"
    config.write_text('[review]\nevery = "2s"\n')
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url, config=config) as fd:
        assert fd.create_tool(WORD_COUNT).status == "active"
        assert fd.create_tool(HOG).status == "active"

    async def scheduled(page: Page) -> None:
        await expect(page.locator("#last-review")).to_contain_text("as scheduled")
        heading = page.get_by_role("heading", name="Failing their own tests (0)")
        await expect(heading).to_be_visible()
        await expect(page.get_by_text("Every suite run passed.")).to_be_visible()

    with serve_http(url, tmp_path) as port:
        base = f"http://127.0.0.1:{port}"
        log = tmp_path / f"serve-{port}.log"
        first = wait_for_line(log, "library reviewed (first review)")
        assert "2 suite(s) run; 0 failing" in first
        wait_for_line(log, "library reviewed (scheduled)")  # by itself, again
        browse(chromium, artifacts, base, scheduled, "scheduled.png")
        api = httpx.get(base + "/api/review", timeout=10).json()
        assert api["trigger"] == "schedule"
        assert api["summary"]["passed"] == 2

    # stopped; the runtime changes (simulated) and the limits shrink: hog's own test fails now
    now = RuntimeIdentity.current()
    with Foundry.open(url) as fd:
        last = fd.registry.last_review()
        assert last is not None
        with fd.registry.engine.begin() as conn:
            conn.execute(
                update(reviews)
                .where(reviews.c.id == last.id)
                .values(runtime={**last.runtime, "wasmtime": "0.0.1"}, fingerprint="f" * 64)
            )
    config.write_text('[review]\nevery = "1d"\n\n[limits]\nmemory_mib = 8\n')

    async def flagged(page: Page) -> None:
        await expect(page.locator("#last-review")).to_contain_text(
            f"because the runtime changed: wasmtime 0.0.1 -> {now.wasmtime}"
        )
        failing = page.locator("#review-failing")
        await expect(failing).to_contain_text("hog v1")
        await expect(failing).to_contain_text("memory")
        await expect(page.get_by_text("They stay enabled")).to_be_visible()
        await page.get_by_role("link", name="Tools", exact=True).first.click()
        await expect(page.locator("#review-line")).to_contain_text(
            "1 tool(s) failing their own tests"
        )
        row = page.locator("tr", has=page.get_by_role("link", name="hog", exact=True))
        await expect(row).to_contain_text("active")  # flagged, not disabled

    with serve_http(url, tmp_path) as port:
        line = wait_for_line(tmp_path / f"serve-{port}.log", "library reviewed (runtime changed")
        assert f"wasmtime 0.0.1 -> {now.wasmtime}" in line
        assert "1 failing (hog)" in line
        browse(chromium, artifacts, f"http://127.0.0.1:{port}", flagged, "runtime-changed.png")
