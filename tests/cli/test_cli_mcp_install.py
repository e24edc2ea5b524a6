"""``toolfoundry mcp install CLIENT``: each client's file written, merged, backed up, and the
server it names starts (the official MCP client runs it)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner, Result

from toolfoundry.cli import main
from toolfoundry.cli.client_configs import client_file

TOOLFOUNDRY = str(Path(sys.executable).parent / "toolfoundry")


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project directory and a home of their own (the clients' user files live there)."""
    (tmp_path / "home").mkdir()
    (tmp_path / "project").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("TOOLFOUNDRY_DB", raising=False)
    monkeypatch.chdir(tmp_path / "project")
    return tmp_path


def install(*args: str) -> Result:
    return CliRunner().invoke(main, ["mcp", "install", *args])


def read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


# client, scope -> (the file under the test's place, the key of its servers, whether typed)
FILES = {
    ("claude-desktop", "user"): (
        "home/.config/Claude/claude_desktop_config.json",
        "mcpServers",
        False,
    ),
    ("claude-code", "project"): ("project/.mcp.json", "mcpServers", True),
    ("claude-code", "user"): ("home/.claude.json", "mcpServers", True),
    ("cursor", "project"): ("project/.cursor/mcp.json", "mcpServers", False),
    ("cursor", "user"): ("home/.cursor/mcp.json", "mcpServers", False),
    ("vscode", "project"): ("project/.vscode/mcp.json", "servers", True),
    ("vscode", "user"): ("home/.config/Code/User/mcp.json", "servers", True),
}


@pytest.mark.parametrize(("client", "scope"), sorted(FILES))
def test_each_client_gets_its_own_file_with_absolute_paths(
    place: Path, client: str, scope: str
) -> None:
    relative, key, typed = FILES[client, scope]
    result = install(client, "--scope", scope)
    assert result.exit_code == 0, result.output
    registry = place / "project" / ".toolfoundry" / "registry.db"
    expected: dict[str, Any] = {"type": "stdio"} if typed else {}
    expected |= {"command": TOOLFOUNDRY, "args": ["serve", "--db", f"sqlite:///{registry}"]}
    assert read(place / relative) == {key: {"toolfoundry": expected}}
    assert registry.parent.is_dir()  # the default registry's folder, made for the server
    lines = result.stdout.splitlines()
    assert lines[0] == f"toolfoundry: wrote {place / relative}"
    assert lines[1].endswith(f"starts: {TOOLFOUNDRY} serve --db sqlite:///{registry}")


def test_claude_desktop_is_user_only_and_the_default_scope_is_the_project(place: Path) -> None:
    refused = install("claude-desktop", "--scope", "project")
    assert refused.exit_code == 2
    assert refused.stderr.splitlines()[-1] == (
        "Error: Claude Desktop has one configuration, for the user: --scope user"
    )
    assert install("cursor").exit_code == 0
    assert (place / "project" / ".cursor" / "mcp.json").is_file()


def test_claude_code_names_the_claude_mcp_add_line(place: Path) -> None:
    registry = place / "project" / ".toolfoundry" / "registry.db"
    command = f"{TOOLFOUNDRY} serve --db sqlite:///{registry}"
    result = install("claude-code")
    assert result.stdout.splitlines()[2] == (
        f"  (the same as: claude mcp add --scope project toolfoundry -- {command})"
    )
    printed = install("claude-code", "--scope", "user", "--print")
    assert printed.stderr.splitlines()[-1] == (
        f"# or: claude mcp add --scope user toolfoundry -- {command}"
    )


def test_an_existing_file_is_merged_and_kept_as_a_backup(place: Path) -> None:
    config = place / "home" / ".config" / "Claude" / "claude_desktop_config.json"
    config.parent.mkdir(parents=True)
    before = {
        "globalShortcut": "Ctrl+Space",
        "mcpServers": {
            "files": {"command": "npx", "args": ["-y", "server-filesystem", "/tmp"]},
            "toolfoundry": {"command": "/old/venv/bin/toolfoundry", "args": ["serve"]},
        },
    }
    original = json.dumps(before, indent=4)
    config.write_text(original, encoding="utf-8")
    result = install("claude-desktop", "--db", "tools.db")
    assert result.exit_code == 0, result.output
    backups = list(config.parent.glob("claude_desktop_config.json.*.bak"))
    assert len(backups) == 1
    assert backups[0].read_text(encoding="utf-8") == original  # byte for byte
    assert result.stdout.splitlines()[0] == (
        f"toolfoundry: wrote {config} (the file as it was: {backups[0]})"
    )
    after = read(config)
    assert after["globalShortcut"] == "Ctrl+Space"
    assert after["mcpServers"]["files"] == before["mcpServers"]["files"]  # type: ignore[index]
    assert after["mcpServers"]["toolfoundry"] == {
        "command": TOOLFOUNDRY,
        "args": ["serve", "--db", f"sqlite:///{place / 'project' / 'tools.db'}"],
    }
    again = install("claude-desktop", "--db", "tools.db")
    assert again.stdout == (
        f"toolfoundry: {config} already starts toolfoundry this way; nothing written\n"
    )
    assert len(list(config.parent.glob("*.bak"))) == 1  # nothing written, nothing backed up


def test_a_file_that_is_not_plain_json_is_left_alone(place: Path) -> None:
    config = place / "project" / ".vscode" / "mcp.json"
    config.parent.mkdir()
    jsonc = '{\n  // my servers\n  "servers": {}\n}\n'
    config.write_text(jsonc, encoding="utf-8")
    result = install("vscode")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[-1] == (
        f"Error: {config} is not plain JSON (Expecting property name enclosed in double "
        "quotes: line 2 column 3 (char 4); comments?), so it was left as it is"
    )
    assert config.read_text(encoding="utf-8") == jsonc
    assert list(config.parent.iterdir()) == [config]  # no backup either


def test_print_writes_nothing(place: Path) -> None:
    result = install("cursor", "--scope", "user", "--print", "--name", "tf")
    assert result.exit_code == 0, result.output
    registry = place / "project" / ".toolfoundry" / "registry.db"
    assert json.loads(result.stdout) == {
        "mcpServers": {
            "tf": {"command": TOOLFOUNDRY, "args": ["serve", "--db", f"sqlite:///{registry}"]}
        }
    }
    assert result.stderr.splitlines()[0] == f"# {place / 'home' / '.cursor' / 'mcp.json'}"
    assert not (place / "home" / ".cursor").exists()
    assert not registry.parent.exists()


def test_the_registry_and_configuration_are_absolute(place: Path) -> None:
    (place / "project" / "toolfoundry.toml").write_text("", encoding="utf-8")
    result = install("cursor", "--db", "sqlite:///data/tools.db")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: the directory of the SQLite database does not exist: "
        f"{place / 'project' / 'data'} (create it first, or give another path)"
    )
    (place / "project" / "data").mkdir()
    assert install("cursor", "--db", "sqlite:///data/tools.db").exit_code == 0
    entry = read(place / "project" / ".cursor" / "mcp.json")["mcpServers"]["toolfoundry"]
    assert entry["args"] == [
        "serve",
        "--db",
        f"sqlite:///{place / 'project' / 'data' / 'tools.db'}",
        "--config",
        str(place / "project" / "toolfoundry.toml"),  # the project's policy, wherever started
    ]
    postgres = install("cursor", "--db", "postgres://tf@db.example/tools", "--print")
    args = json.loads(postgres.stdout)["mcpServers"]["toolfoundry"]["args"]
    assert args[:3] == ["serve", "--db", "postgresql+psycopg://tf@db.example/tools"]
    mysql = install("cursor", "--db", "mysql://db.example/tools")
    assert mysql.exit_code == 2
    assert "mysql:// is not a store toolfoundry keeps its registry in" in mysql.stderr


@pytest.mark.parametrize(
    ("client", "platform", "environ", "expected"),
    [
        (
            "claude-desktop",
            "darwin",
            {},
            "H/Library/Application Support/Claude/claude_desktop_config.json",
        ),
        ("claude-desktop", "win32", {"APPDATA": "A"}, "A/Claude/claude_desktop_config.json"),
        (
            "claude-desktop",
            "linux",
            {"XDG_CONFIG_HOME": "X"},
            "X/Claude/claude_desktop_config.json",
        ),
        ("vscode", "darwin", {}, "H/Library/Application Support/Code/User/mcp.json"),
        ("vscode", "win32", {"APPDATA": "A"}, "A/Code/User/mcp.json"),
        ("vscode", "linux", {}, "H/.config/Code/User/mcp.json"),
        ("cursor", "win32", {"APPDATA": "A"}, "H/.cursor/mcp.json"),
    ],
)
def test_user_files_per_platform(
    client: str, platform: str, environ: dict[str, str], expected: str
) -> None:
    found = client_file(
        client, "user", cwd=Path("P"), home=Path("H"), platform=platform, environ=environ
    )
    assert found.path == Path(expected)


async def serves(command: str, args: list[str], cwd: Path) -> tuple[set[str], Any]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {k: v for k, v in os.environ.items() if k != "TOOLFOUNDRY_DB"}
    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))
    async with (
        stdio_client(params) as (read_stream, write_stream),
        ClientSession(read_stream, write_stream) as session,
    ):
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
        ran = await session.call_tool("run_js", {"code": "export default 6 * 7"})
        return names, ran


def test_the_written_server_starts_from_anywhere(place: Path) -> None:
    assert install("claude-desktop").exit_code == 0
    config = read(place / "home" / ".config" / "Claude" / "claude_desktop_config.json")
    entry = config["mcpServers"]["toolfoundry"]
    elsewhere = place / "elsewhere"
    elsewhere.mkdir()
    names, ran = anyio.run(serves, entry["command"], entry["args"], elsewhere)
    assert {"create_tool", "search_tools", "run_js"} <= names
    assert ran.structured_content["value"] == 42
    assert (place / "project" / ".toolfoundry" / "registry.db").is_file()  # the one named
    assert not (elsewhere / ".toolfoundry").exists()
