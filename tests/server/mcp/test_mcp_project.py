"""``toolfoundry serve`` in a project that declares its own tools (``[catalog]`` sources): the
official MCP client lists them next to the meta-tools and the registry's tools, and calls them
over stdio; a registry tool of the same name as a declared tool is hidden, with a warning."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import mcp_types as types
import pytest
from mcp.client.session import ClientSession
from tests.factories import McpSessionFactory

from toolfoundry import Foundry
from toolfoundry.spec.names import META_TOOL_NAMES

from .test_mcp_support import by_name, env, http_session, serve_http, text_of

SAMPLE = Path(__file__).parents[2] / "catalog" / "shop_project"
META = list(META_TOOL_NAMES)
OWN = ["price", "report", "restock", "stock_count", "stock_move"]
NO_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "1"}  # the project's own modules stay as they are

# A registry tool that takes the name of one of the project's declared tools.
PRICE_IN_REGISTRY = {
    "name": "price",
    "description": "Always zero",
    "parameters": {"type": "object", "properties": {"item": {"type": "string"}}},
    "code": "export const handler = () => 0;\n",
    "tests": [{"input": {"item": "x"}, "expected": 0}],
}
DOUBLE = {
    "name": "double",
    "description": "Double a number",
    "parameters": {"type": "object", "properties": {"n": {"type": "number"}}, "required": ["n"]},
    "code": "export const handler = ({ n }) => 2 * n;\n",
    "tests": [{"input": {"n": 2}, "expected": 4}],
}


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, str]:
    """A copy of the sample project with a registry holding ``price`` and ``double``."""
    root = tmp_path / "shop"
    shutil.copytree(SAMPLE, root)
    config = root / "toolfoundry.toml"
    config.write_text(config.read_text() + "\n[limits]\ntimeout_s = 20.0\n")
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    with Foundry.open(url, config=config) as fd:
        for draft in (PRICE_IN_REGISTRY, DOUBLE):
            assert fd.create_tool(draft).status == "active"
    return root, url


def test_declared_tools_are_listed_and_called_over_stdio(
    project: tuple[Path, str], tmp_path: Path, mcp_session: McpSessionFactory
) -> None:
    root, url = project
    errlog = tmp_path / "serve.log"

    async def scenario() -> None:
        async with mcp_session(url, root, environ=NO_BYTECODE, errlog=log) as (session, _):
            await check_declared_tools(session)

    with errlog.open("w") as log:
        anyio.run(scenario)
    warning = "registry tool 'price' is hidden by the project's declared tool of the same name"
    assert errlog.read_text().count(warning) == 1


async def check_declared_tools(session: ClientSession) -> None:
    tools = by_name(await session.list_tools())
    assert sorted(tools) == sorted([*META, *OWN, "double"])
    price = tools["price"]
    # the declaration, not the registry's tool of the same name
    assert price.description is not None
    assert price.description.startswith("Price of an item in the shop.")
    assert price.input_schema["properties"]["currency"]["enum"] == ["EUR", "USD"]
    assert tools["restock"].output_schema is None  # a workflow returns its run, not its state

    called = await session.call_tool("price", {"item": "pear", "quantity": 2})
    assert isinstance(called, types.CallToolResult)
    assert called.is_error is False
    assert json.loads(text_of(called)) == {"item": "pear", "total": 1.5, "currency": "EUR"}

    bad = await session.call_tool("price", {"item": "pear", "currency": "JPY"})
    assert isinstance(bad, types.CallToolResult)
    assert bad.is_error is True
    assert text_of(bad).startswith("invalid_arguments:")

    raised = await session.call_tool("price", {"item": "plum"})
    assert isinstance(raised, types.CallToolResult)
    assert raised.is_error is True
    assert "no such item: plum" in text_of(raised)

    moved = await session.call_tool("stock_move", {"item": "apple", "to": "back"})
    assert isinstance(moved, types.CallToolResult)
    assert json.loads(text_of(moved)) == {"moved": "apple", "to": "back"}

    flow = await session.call_tool("restock", {"item": "apple", "amount": 3})
    assert isinstance(flow, types.CallToolResult)
    assert flow.is_error is False
    assert flow.structured_content is not None
    assert flow.structured_content["outputs"]["ordered"] == ["3 x apple"]

    report = await session.call_tool("report", {})
    assert isinstance(report, types.CallToolResult)
    assert json.loads(text_of(report)) == "sales report for the week"

    doubled = await session.call_tool("double", {"n": 21})  # the registry still serves
    assert isinstance(doubled, types.CallToolResult)
    assert text_of(doubled) == "42"


def test_source_option_and_a_bad_source(
    project: tuple[Path, str], tmp_path: Path, mcp_session: McpSessionFactory
) -> None:
    root, url = project

    async def scenario() -> None:
        extra = ("--source", "shop.cli:build_parser")
        async with mcp_session(url, root, *extra, environ=NO_BYTECODE) as (session, _):
            tools = by_name(await session.list_tools())
            # without the declared price, the registry's price is served again
            expected = [*META, "stock_count", "stock_move", "price", "double"]
            assert sorted(tools) == sorted(expected)
            assert tools["price"].description == "Always zero"

    anyio.run(scenario)
    refused = subprocess.run(
        [sys.executable, "-m", "toolfoundry", "serve", "--db", url, "--source", "shop.gone"],
        cwd=root,
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert "catalog source 'shop.gone': cannot import shop.gone" in refused.stderr
    assert "Traceback" not in refused.stderr


@pytest.mark.slow
def test_declared_tools_over_streamable_http(project: tuple[Path, str]) -> None:
    root, url = project

    async def scenario(port: int) -> None:
        async with http_session(port) as (session, _notes):
            tools = by_name(await session.list_tools())
            assert sorted(tools) == sorted([*META, *OWN, "double"])
            counted = await session.call_tool("stock_count", {"item": "pear"})
            assert isinstance(counted, types.CallToolResult)
            assert json.loads(text_of(counted)) == {"item": "pear", "count": 4}

    with serve_http(url, root) as port:
        anyio.run(scenario, port)
