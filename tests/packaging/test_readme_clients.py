"""README's Install and "Use it from your MCP client" sections say what the code does.

Each client configuration is loaded as that client would read it, its placeholders filled in,
and its command started with the official MCP client: it must serve the meta-tools and run a
call in the sandbox.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import tomllib
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from toolfoundry.base.extras import MissingExtra

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CLIENTS = ("Claude Desktop", "Claude Code", "Cursor", "VS Code", "MCP Inspector")
INSPECTOR = "npx @modelcontextprotocol/inspector"


def section(title: str, text: str = README, level: str = "##") -> str:
    match = re.search(
        rf"^{level} {re.escape(title)}\n(.*?)(?=^#{{2,{len(level)}}} |\Z)", text, re.S | re.M
    )
    assert match, f"README has no {level} {title}"
    return match.group(1)


def first_block(text: str) -> tuple[str, str]:
    match = re.search(r"```(\w+)\n(.*?)```", text, re.S)
    assert match, "no code block"
    return match.group(1), match.group(2)


def client_command(
    client: str, registry: Path, workspace: Path
) -> tuple[str, list[str], dict[str, str]]:
    """The (command, args, env) the client would start, placeholders replaced."""
    kind, block = first_block(section(client, section("Use it from your MCP client"), "###"))
    executable = str(Path(sys.executable).parent / "toolfoundry")
    block = (
        block.replace("/path/to/venv/bin/toolfoundry", executable)
        .replace("/path/to/registry", str(registry))
        .replace("${workspaceFolder}", str(workspace))
    )
    if kind == "json":
        data = json.loads(block)
        servers = data.get("mcpServers") or data["servers"]  # VS Code names it "servers"
        entry: dict[str, Any] = servers["toolfoundry"]
        assert entry.get("type", "stdio") == "stdio"
        return entry["command"], list(entry.get("args", [])), dict(entry.get("env", {}))
    assert kind == "sh"
    assert block.startswith(INSPECTOR), block
    words = shlex.split(block[len(INSPECTOR) :])
    return words[0], words[1:], {}


async def serves(command: str, args: list[str], env: dict[str, str], cwd: Path) -> Any:
    base = {k: v for k, v in os.environ.items() if k not in ("TOOLFOUNDRY_DB", "TOOLFOUNDRY_TOKEN")}
    params = StdioServerParameters(command=command, args=args, env={**base, **env}, cwd=str(cwd))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        ran = await session.call_tool("run_js", {"code": "export default 6 * 7"})
        return names, ran


@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_configuration_starts_the_server(client: str, tmp_path: Path) -> None:
    registry, workspace, elsewhere = tmp_path / "registry", tmp_path / "ws", tmp_path / "cwd"
    for directory in (registry, workspace / ".toolfoundry", elsewhere):
        directory.mkdir(parents=True)
    command, args, env = client_command(client, registry, workspace)
    assert Path(command).is_absolute()  # desktop apps do not see the shell's PATH
    names, ran = anyio.run(serves, command, args, env, elsewhere)
    assert {"create_tool", "search_tools", "run_js"} <= names
    assert not ran.is_error
    assert ran.structured_content["value"] == 42
    made = list(registry.glob("*.db")) + list((workspace / ".toolfoundry").glob("*.db"))
    assert made, "the configured registry was not used"
    assert not (elsewhere / ".toolfoundry").exists()  # not the working directory's default


def test_the_extras_table_lists_every_extra() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    rows = [line for line in section("Install").splitlines() if line.startswith("| `")]
    listed = {name for row in rows for name in re.findall(r"`([a-z-]+)`", row.split("|")[1])}
    assert listed == set(declared)


def test_the_missing_extra_message_is_the_code_s() -> None:
    shown = " ".join(section("Install").split())
    message = str(MissingExtra("server", "toolfoundry serve", "mcp"))
    assert f"`{message}`" in shown
