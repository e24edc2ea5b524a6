"""One draft contract: the same minimal draft (no ``parameters``) is accepted through every door
(MCP with the official client, the HTTP API, the CLI and the Python API), each taking its
fields and defaults from the one declaration (toolfoundry/forge/draft_json.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client
from starlette.testclient import TestClient

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.forge.draft_json import DRAFT_DEFAULTS, DRAFT_FIELDS, draft_json_schema
from toolfoundry.server.mcp.server import build_mcp_server

from .mcp.test_mcp_support import by_name, structured
from .test_server_web_support import compose

# No parameters, language, capabilities or fixtures: each takes its declared default.
MINIMAL: dict[str, Any] = {
    "name": "forty_two",
    "description": "The answer, whatever the question.",
    "code": "export function handler() {\n  return 42;\n}\n",
    "tests": [{"name": "answer", "input": {}, "expected": 42}],
}


@pytest.fixture
def fd(foundry: Foundry) -> Foundry:
    return foundry


def created_as_declared(fd: Foundry) -> None:
    """The version the draft became has the declared defaults."""
    version = fd.show("forty_two")
    assert (version.version, version.status.value) == (1, "active")
    assert version.parameters == DRAFT_DEFAULTS["parameters"]
    assert version.language == DRAFT_DEFAULTS["language"]
    assert version.capabilities.to_dict() == {}
    assert fd.call("forty_two", {}).value == 42


def test_python_api(fd: Foundry) -> None:
    result = fd.create_tool(dict(MINIMAL))
    assert result.status == "active", result.to_dict()
    created_as_declared(fd)


def test_cli(fd: Foundry, tmp_path: Path) -> None:
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(MINIMAL), encoding="utf-8")
    url = str(fd.registry.engine.url)
    out = CliRunner().invoke(main, ["create", str(path), "--json", "--db", url])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["status"] == "active"
    created_as_declared(fd)


def test_http_api(fd: Foundry) -> None:
    client = TestClient(compose(fd), base_url="http://127.0.0.1:8000")
    made = client.post("/api/tools", json=MINIMAL)
    assert made.status_code == 201, made.text
    assert made.json()["status"] == "active"
    created_as_declared(fd)


def test_mcp_with_the_official_client(fd: Foundry) -> None:
    async def scenario() -> None:
        async with Client(build_mcp_server(fd, poll_interval_s=0.05), mode="legacy") as client:
            create = by_name(await client.list_tools())["create_tool"]
            declared = draft_json_schema()
            # what the model is shown is the declaration: fields, order, required, defaults
            assert tuple(create.input_schema["properties"]) == DRAFT_FIELDS
            assert create.input_schema["required"] == declared["required"]
            assert "parameters" not in create.input_schema["required"]
            for name, schema in create.input_schema["properties"].items():
                assert schema == declared["properties"][name], name
            made = await client.call_tool("create_tool", MINIMAL)
            assert made.is_error is False
            assert structured(made)["status"] == "active"
            listed = by_name(await client.list_tools())["forty_two"]
            assert listed.input_schema == DRAFT_DEFAULTS["parameters"]

    anyio.run(scenario)
    created_as_declared(fd)
