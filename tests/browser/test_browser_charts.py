"""The tool page's charts in a real browser: drawn by the server as SVG under the page's CSP
(no script), with bars where there were calls, durations and failures, and a screenshot of
each that is not blank (``toolfoundry serve --http``, Debian's chromium)."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import anyio
import pytest
from playwright.async_api import async_playwright, expect
from tests.factories import error_of

from toolfoundry import Foundry

from .conftest import CHROMIUM_ARGS

pytestmark = [pytest.mark.slow, pytest.mark.browser]

WAIT_S = 15.0
SQUARE = {
    "name": "square",
    "description": "Square a number; refuses negative ones.",
    "parameters": {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]},
    "code": "export function handler({ n }) { if (n < 0) throw Error('negative'); return n * n }",
    "tests": [{"input": {"n": 3}, "expected": 9}],
}


def colours(png: bytes) -> set[tuple[int, int, int]]:
    """The distinct colours of a screenshot (decoded by Pillow, which matplotlib brings)."""
    image_module = pytest.importorskip("PIL.Image")
    image = image_module.open(io.BytesIO(png)).convert("RGB")
    return set(image.getdata())


def test_the_tool_page_draws_usage_latency_and_failures(
    tmp_path: Path, chromium: Path, artifacts: Path, serve_http: Any
) -> None:
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url) as fd:
        assert fd.create_tool(SQUARE).status == "active"
        for n in range(12):
            assert fd.call("square", {"n": n}).ok
        assert error_of(fd.call("square", {"n": -1})).kind.value == "runtime_error"
        assert error_of(fd.call("square", {"n": "x"})).kind.value == "invalid_arguments"
    served = serve_http(url, tmp_path)
    errors: list[str] = []

    async def scenario() -> None:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS)
            page = await browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(WAIT_S * 1000)
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            try:
                response = await page.goto(served.base + "/ui/tools/square")
                assert response is not None
                assert "script-src" in (response.headers.get("content-security-policy") or "")
                charts = page.locator("section.charts svg.chart")
                await expect(charts).to_have_count(3)
                calls, latency, failures = (charts.nth(i) for i in range(3))
                await expect(calls).to_have_attribute(
                    "aria-label", "14 call(s) in the last 30 days"
                )
                await expect(failures).to_have_attribute(
                    "aria-label", "invalid_arguments: 1, runtime_error: 1"
                )
                assert await calls.locator("rect.bar").count() == 30  # a bar per day
                assert await latency.locator("rect.bar").count() >= 1
                await expect(failures.locator("rect.bar")).to_have_count(2)
                await expect(failures.locator("text.chart-label")).to_have_text(
                    ["invalid_arguments", "runtime_error"]
                )
                assert await page.locator("section.charts script").count() == 0
                for chart in (calls, latency, failures):
                    box = await chart.bounding_box()
                    assert box is not None
                    assert 360 <= box["width"] <= 362  # its viewBox, and the border
                    shot = await chart.screenshot()
                    # drawn, not blank: the paper, the bars' colour, the text and the axis
                    assert len(colours(shot)) > 8
                (artifacts.parent / "charts").mkdir(parents=True, exist_ok=True)
                await page.locator("section.charts").screenshot(
                    path=str(artifacts.parent / "charts" / "tool-page-charts.png")
                )
            except Exception:
                artifacts.mkdir(parents=True, exist_ok=True)
                await page.screenshot(path=str(artifacts / "page.png"), full_page=True)
                raise
            finally:
                await browser.close()

    anyio.run(scenario)
    assert [e for e in errors if "Content Security Policy" in e] == []
