"""``toolfoundry agent`` in a project with declared tools (``[catalog]`` sources): the model is
offered them on every turn and its calls run through the declarations, against the loopback
vendor server."""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner

from toolfoundry.cli import main
from toolfoundry.foundry import Foundry

from .conftest import answer, calls

if TYPE_CHECKING:
    from tests.agent.conftest import VendorServer

SAMPLE = Path(__file__).parents[1] / "catalog" / "shop_project"
OWN = {"price", "report", "restock", "stock_count", "stock_move"}
ZERO_PRICE = {
    "name": "price",
    "description": "Always zero",
    "parameters": {"type": "object", "properties": {"item": {"type": "string"}}},
    "code": "export const handler = () => 0;\n",
    "tests": [{"input": {"item": "x"}, "expected": 0}],
}


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "shop"
    shutil.copytree(SAMPLE, root)
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield root
    for name in list(sys.modules):
        if name == "shop" or name.startswith(("shop.", "_toolfoundry_source_report")):
            del sys.modules[name]


def test_agent_offers_and_calls_the_project_s_tools(vendor: VendorServer, shop: Path) -> None:
    db = f"sqlite:///{shop / 'r.db'}"
    with Foundry.open(db) as fd:  # a registry tool the declared price hides
        assert fd.create_tool(ZERO_PRICE).status == "active"
    vendor.play(
        calls(
            "compat",
            ("price", {"item": "apple", "quantity": 4}),
            ("restock", {"item": "apple", "amount": 2}),
        ),
        answer("compat", "2.0 EUR; 2 more ordered"),
    )
    args = ["agent", "price of 4 apples", "--model", "compat:m", "--db", db, "--json"]
    result = CliRunner().invoke(main, [*args, "--base-url", vendor.base_url("compat")])
    assert result.exit_code == 0, result.output
    assert "registry tool 'price' is hidden" in result.stderr
    run = json.loads(result.stdout)
    assert set(run["turns"][0]["offered"]) >= OWN
    assert run["turns"][0]["offered"].count("price") == 1
    offered = vendor.bodies()[0]["tools"]
    price = next(t["function"] for t in offered if t["function"]["name"] == "price")
    assert price["description"].startswith("Price of an item in the shop.")
    outcomes = run["turns"][0]["tool_calls"]
    assert outcomes[0]["result"]["value"] == {"item": "apple", "total": 2.0, "currency": "EUR"}
    assert outcomes[1]["result"]["value"]["outputs"]["ordered"] == ["2 x apple"]
    assert run["final_text"] == "2.0 EUR; 2 more ordered"


def test_agent_with_a_bad_source_is_a_usage_error(shop: Path) -> None:
    result = CliRunner().invoke(
        main, ["agent", "x", "--model", "replay:demo", "--source", "shop.tools:nothing"]
    )
    assert result.exit_code == 2
    assert "catalog source 'shop.tools:nothing': shop.tools has no attribute" in result.stderr
