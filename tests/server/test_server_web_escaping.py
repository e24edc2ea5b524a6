"""The review page shows what a model wrote, never lets it act: HTML is escaped by Jinja's
autoescape, and control characters and bidi overrides (Trojan Source) are shown as escapes in
every text and in the highlighted code and diff views."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from tests.shared_drafts import network_draft

from toolfoundry import Foundry

from .test_server_web_support import compose

# a bidi override that would hide the exfiltrating call, an ESC sequence, HTML
HOSTILE = "\u202e }; fetch(evil) \u2066 \x1b[2K <script>alert(1)</script>"
RAW = ("\u202e", "\u2066", "\x1b", "<script>")


@pytest.fixture
def page(tmp_path: Path) -> Iterator[TestClient]:
    foundry = Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}")
    draft = network_draft("weather", "api.example.com", description=f"Weather {HOSTILE}")
    draft["code"] = f"// {HOSTILE}\n" + draft["code"]
    draft["tests"][0]["name"] = f"oslo {HOSTILE}"
    assert foundry.create_tool(draft).status == "pending_approval"
    with TestClient(compose(foundry), base_url="http://127.0.0.1:8000") as client:
        yield client
    foundry.close()


@pytest.mark.parametrize(
    "path", ["/ui/", "/ui/approvals", "/ui/tools/weather", "/ui/tools/weather/v/1"]
)
def test_pages_show_control_characters_as_escapes(page: TestClient, path: str) -> None:
    html = page.get(path).text
    for raw in RAW:
        assert raw not in html, (path, raw)
    assert "\\u202e" in html
    if path.endswith("/v/1"):  # the code view and the test name too
        assert len(re.findall(r"\\u202e", html)) >= 3
        assert "\\x1b[2K" in html
        assert "&lt;script&gt;" in html
