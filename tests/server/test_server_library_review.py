"""The last review of the library over the HTTP API and on the page (``GET /api/review``,
``/ui/review``, the line on ``/ui/``): what ``serve``'s schedule stored, as stored."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from toolfoundry import Foundry
from toolfoundry.config import ReviewSettings
from toolfoundry.foundry.library_review import review_library

from .test_server_web_api import Api
from .test_server_web_support import compose


@pytest.fixture
def client(fd: Foundry) -> Iterator[TestClient]:
    with TestClient(compose(fd), base_url="http://127.0.0.1:8000") as made:
        yield made


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def store_review(fd: Foundry, trigger: str = "first") -> None:
    """One review of ``fd``'s library, claimed and finished as the schedule does."""
    found = review_library(fd, ReviewSettings())
    runtime = {"toolfoundry": "1", "guest": "g", "wasmtime": "w"}
    claimed = fd.registry.claim_review(
        lambda _last, _now: trigger, runner="test:1", fingerprint="f" * 64, runtime=runtime
    )
    assert claimed is not None
    fd.registry.finish_review(claimed.id, found.summary, {**found.findings, "runtime_changes": []})


def test_before_any_review_the_api_says_so_and_the_page_explains(
    client: TestClient, fd: Foundry
) -> None:
    api = Api(client)
    assert api.get("/api/review", 404)["error"]["kind"] == "not_found"
    page = _text(client.get("/ui/review").text)
    assert "No review has finished yet" in page
    assert "Library reviewed" not in _text(client.get("/ui/").text)


def test_the_stored_review_is_served_as_stored(client: TestClient, fd: Foundry) -> None:
    store_review(fd)
    api = Api(client)
    served = api.get("/api/review")  # checked against the OpenAPI document, every key
    assert served["trigger"] == "first"
    assert served["running"] is False
    assert served["summary"]["verified"] == 1  # shout, the one active tool seeded
    waiting = {(w["name"], w["version"]) for w in served["findings"]["waiting"]}
    assert waiting == {("weather", 1), ("news", 1)}
    held = {(c["name"], c["status"]) for c in served["findings"]["capabilities"]}
    assert held == {("news", "pending_approval"), ("weather", "pending_approval")}
    page = _text(client.get("/ui/review").text)
    assert "Last review" in page
    assert "the first" in page
    assert "Versions waiting (2)" in page
    assert "Library reviewed" in _text(client.get("/ui/").text)
    assert client.get("/api/review").headers["cache-control"] == "no-store"
