"""Where each MCP client keeps its server list, in which shape, and how an entry is merged in.

``toolfoundry mcp install CLIENT`` writes the entry that starts ``toolfoundry serve`` into the
client's own file, with absolute paths (a desktop client starts servers without the shell's
``PATH`` and from a directory of its choosing), keeping every other entry and key and a
backup of the file as it was.

| client | scope | file | servers under |
|---|---|---|---|
| Claude Desktop | user | ``claude_desktop_config.json`` in the app's folder | ``mcpServers`` |
| Claude Code | project | ``.mcp.json`` (``claude mcp add --scope project``) | ``mcpServers`` |
| Claude Code | user | ``~/.claude.json`` (``claude mcp add --scope user``) | ``mcpServers`` |
| Cursor | project / user | ``.cursor/mcp.json`` / ``~/.cursor/mcp.json`` | ``mcpServers`` |
| VS Code | project / user | ``.vscode/mcp.json`` / the profile's ``User/mcp.json`` | ``servers`` |
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NotRequired, TypedDict

CLIENTS = ("claude-desktop", "claude-code", "cursor", "vscode")
SCOPES = ("project", "user")
_NAMES = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "cursor": "Cursor",
    "vscode": "VS Code",
}


class ConfigProblem(RuntimeError):
    """The client's file cannot be merged into (not JSON, not an object); nothing was written."""


@dataclass(frozen=True)
class ServerEntry:
    """How the client starts the server: an absolute command and its arguments."""

    command: str
    args: tuple[str, ...]

    def shown(self) -> str:
        """The command line, quoted for a POSIX shell."""
        return shlex.join([self.command, *self.args])


@dataclass(frozen=True)
class ClientFile:
    """One client's configuration file.

    Attributes:
        client: one of :data:`CLIENTS`.
        path: the file.
        key: the object that holds the servers (``mcpServers``, or ``servers`` for VS Code).
        typed: whether an entry names its transport (``"type": "stdio"``).
    """

    client: str
    path: Path
    key: str
    typed: bool

    @property
    def client_name(self) -> str:
        """The client as people call it."""
        return _NAMES[self.client]


def serve_entry(options: Sequence[str]) -> ServerEntry:
    """``toolfoundry serve OPTIONS`` as this installation runs it: the console script beside
    the interpreter (a virtualenv's ``bin/``), else ``python -m toolfoundry``."""
    scripts = Path(sys.executable).parent
    for name in ("toolfoundry", "toolfoundry.exe"):
        script = scripts / name
        if script.is_file() and os.access(script, os.X_OK):
            return ServerEntry(str(script), ("serve", *options))
    return ServerEntry(sys.executable, ("-m", "toolfoundry", "serve", *options))


def client_file(
    client: str,
    scope: str,
    *,
    cwd: Path,
    home: Path,
    platform: str = sys.platform,
    environ: dict[str, str] | None = None,
) -> ClientFile:
    """The file ``client`` reads for ``scope`` on ``platform`` (``sys.platform``'s values).

    Raises:
        ConfigProblem: a scope the client does not have (Claude Desktop has no project file).
    """
    env = os.environ if environ is None else environ
    if client == "claude-desktop":
        if scope != "user":
            raise ConfigProblem("Claude Desktop has one configuration, for the user: --scope user")
        return ClientFile(
            client, _app_dir("Claude", platform, home, env) / _DESKTOP, "mcpServers", False
        )
    if client == "claude-code":
        path = cwd / ".mcp.json" if scope == "project" else home / ".claude.json"
        return ClientFile(client, path, "mcpServers", True)
    if client == "cursor":
        base = cwd if scope == "project" else home
        return ClientFile(client, base / ".cursor" / "mcp.json", "mcpServers", False)
    if client == "vscode":
        if scope == "project":
            return ClientFile(client, cwd / ".vscode" / "mcp.json", "servers", True)
        path = _app_dir("Code", platform, home, env) / "User" / "mcp.json"
        return ClientFile(client, path, "servers", True)
    raise ConfigProblem(f"unknown client {client!r}: one of {', '.join(CLIENTS)}")


_DESKTOP = "claude_desktop_config.json"


def _app_dir(app: str, platform: str, home: Path, env: Any) -> Path:
    """An Electron app's folder: Application Support on macOS, %APPDATA% on Windows, and the
    XDG config folder elsewhere (where Claude Desktop's Linux builds and VS Code keep theirs)."""
    if platform == "darwin":
        return home / "Library" / "Application Support" / app
    if platform == "win32":
        return Path(env.get("APPDATA") or home / "AppData" / "Roaming") / app
    return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / app


class EntryJson(TypedDict):
    """One server entry as a client's file holds it (``type`` only where the client wants it)."""

    type: NotRequired[str]
    command: str
    args: list[str]


def entry_json(target: ClientFile, entry: ServerEntry) -> EntryJson:
    """The entry as the client's file holds it."""
    data: EntryJson = {"command": entry.command, "args": list(entry.args)}
    if target.typed:
        return {"type": "stdio", **data}
    return data


def merged(target: ClientFile, name: str, entry: ServerEntry) -> tuple[dict[str, Any], bool]:
    """The file's content with the entry ``name`` set, and whether that changes it.

    Raises:
        ConfigProblem: the file is not a JSON object, or its server list is not an object
            (VS Code allows comments in its file; one that has them is left alone).
    """
    data: dict[str, Any] = {}
    if target.path.exists():
        try:
            loaded = json.loads(target.path.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConfigProblem(
                f"{target.path} is not plain JSON ({exc}; comments?), so it was left as it is"
            ) from None
        if not isinstance(loaded, dict):
            raise ConfigProblem(f"{target.path} is not a JSON object, so it was left as it is")
        data = loaded
    servers = data.setdefault(target.key, {})
    if not isinstance(servers, dict):
        raise ConfigProblem(
            f"{target.path}: {target.key!r} is not an object, so it was left as it is"
        )
    wanted = entry_json(target, entry)
    if servers.get(name) == wanted:
        return data, False
    servers[name] = wanted
    return data, True


def write_with_backup(
    path: Path, data: dict[str, Any], *, now: datetime | None = None
) -> Path | None:
    """Write ``data`` to ``path`` (atomically), first copying what was there beside it as
    ``NAME.YYYYmmdd-HHMMSS.bak``; returns the backup's path (None when there was no file)."""
    backup = None
    if path.exists():
        stamp = (now or datetime.now()).strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.{stamp}.bak")
        backup.write_bytes(path.read_bytes())
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.tmp")
    partial.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return backup


def claude_add_command(scope: str, name: str, entry: ServerEntry) -> str:
    """The ``claude mcp add`` line that records the same entry (Claude Code's own way)."""
    return shlex.join(
        ["claude", "mcp", "add", "--scope", scope, name, "--", entry.command, *entry.args]
    )
