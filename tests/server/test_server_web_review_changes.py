"""What else a reviewer needs besides the code's diff: the description's and the parameters'
diffs, whether each credential resolves now, and one test count on every surface (create,
the approval queue, the review page, the CLI and the audit)."""

from __future__ import annotations

import html as html_lib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from toolfoundry import Foundry
from toolfoundry.cli import main

from .test_server_web_api import Api
from .test_server_web_support import compose

ADD: dict[str, Any] = {
    "name": "add",
    "description": "Add two numbers.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    },
    "code": "export const handler = ({ a, b }) => a + b;\n",
    "tests": [{"name": "small", "input": {"a": 1, "b": 2}, "expected": 3}],
}
# v2: another description and parameter text, and a credential for each of two hosts
ADD_V2: dict[str, Any] = {
    **ADD,
    "description": "Add two numbers, then report the sum upstream.",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number", "description": "2nd"}},
        "required": ["a", "b"],
    },
    "capabilities": {
        "network": ["api.example.com", "other.example.com"],
        "credentials": ["api.example.com", "other.example.com"],
    },
    "tests": [{"name": "big", "input": {"a": 10, "b": 20}, "expected": 30}],
}
CONFIG = """
[[fetch.credentials]]
host = "api.example.com"
header = "Authorization"
env = "TF_REVIEW_TOKEN"
"""


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    monkeypatch.delenv("TF_REVIEW_TOKEN", raising=False)
    config = tmp_path / "toolfoundry.toml"
    config.write_text(CONFIG, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url, config=config) as fd:
        assert fd.create_tool(ADD).status == "active"
        made = fd.create_tool(ADD_V2)
        assert made.status == "pending_approval"
        assert made.step.message.startswith("all 2 test(s) passed (1 own, 1 from earlier versions)")
    return url, config


@pytest.fixture
def client(db: tuple[str, Path]) -> Iterator[TestClient]:
    url, config = db
    with (
        Foundry.open(url, config=config) as fd,
        TestClient(compose(fd), base_url="http://127.0.0.1:8000") as c,
    ):
        yield c


def page_text(html: str) -> str:
    return re.sub(r"\s+", " ", html_lib.unescape(re.sub(r"<[^>]+>", " ", html)))


def test_the_description_and_parameters_are_diffed_like_the_code(client: TestClient) -> None:
    review = Api(client).get("/api/tools/add/versions/2")
    assert review["description_diff"] == (
        "--- a/description\n+++ b/description\n@@ -1 +1 @@\n"
        "-Add two numbers.\n+Add two numbers, then report the sum upstream."
    )
    assert '+      "description": "2nd",' in review["parameters_diff"].splitlines()
    assert review["parameters_diff"].startswith("--- a/parameters.json\n+++ b/parameters.json")
    first = Api(client).get("/api/tools/add/versions/1")  # the current one, made from nothing
    assert (first["description_diff"], first["parameters_diff"]) == (None, None)
    shown = page_text(client.get("/ui/tools/add/v/2").text)
    assert re.search(r"Description .*?-Add two numbers\. .*?\+Add two numbers, then report", shown)
    assert re.search(r'Parameters .*?\+ "description": "2nd", .*? Code ', shown)


def test_each_credential_says_whether_it_resolves_now(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def credentials() -> dict[str, tuple[bool, str]]:
        review = Api(client).get("/api/tools/add/versions/2")
        return {
            c["value"]: (c["resolves"], c["resolution"])
            for c in review["capability_details"]
            if c["capability"] == "credentials"
        }

    nothing = (
        False,
        "no credential is configured for other.example.com ([[fetch.credentials]] in "
        "toolfoundry.toml): its requests go without one",
    )
    assert credentials() == {
        "api.example.com": (
            False,
            "does not resolve now: credential for api.example.com is not set (environment "
            "variable TF_REVIEW_TOKEN is empty)",
        ),
        "other.example.com": nothing,
    }
    shown = page_text(client.get("/ui/tools/add/v/2").text)
    assert "does not resolve now: credential for api.example.com is not set" in shown
    monkeypatch.setenv("TF_REVIEW_TOKEN", "Bearer s3cret-value")
    assert credentials() == {
        "api.example.com": (
            True,
            "resolves now: the Authorization header from environment variable TF_REVIEW_TOKEN",
        ),
        "other.example.com": nothing,
    }
    page = client.get("/ui/tools/add/v/2").text
    assert "resolves now: the Authorization header" in page_text(page)
    assert "s3cret-value" not in page  # the value itself is never shown


def test_one_test_count_everywhere(db: tuple[str, Path], client: TestClient) -> None:
    url, config = db
    tally = {"passed": 2, "total": 2, "own": 1, "earlier": 1}
    assert Api(client).get("/api/tools/add/versions/2")["test_tally"] == tally
    queue = page_text(client.get("/ui/approvals").text)
    assert "2/2 passed" in queue
    assert "2/2 test(s) passed (1 own, 1 from earlier versions)" in page_text(
        client.get("/ui/tools/add/v/2").text
    )
    listed = CliRunner().invoke(main, ["approvals", "list", "--db", url, "--config", str(config)])
    assert "2/2 passed" in listed.stdout
    shown = CliRunner().invoke(
        main, ["approvals", "show", "add@2", "--db", url, "--config", str(config)]
    )
    assert "  tests: 2/2 passed (1 own, 1 from earlier versions)" in shown.stdout.splitlines()
    with Foundry.open(url, config=config) as fd:
        tested = [e.detail for e in fd.audit("add") if e.event.value == "tested"]
    assert tested == [{"passed": 1, "total": 1, "own": 1, "earlier": 0}, tally]
