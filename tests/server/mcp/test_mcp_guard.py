"""``toolfoundry serve --http`` off loopback: refused without a token; with one, every request
without it is refused with 401 and requests with it reach MCP."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import httpx
import mcp_types as types
import pytest
from click.testing import CliRunner

from toolfoundry.cli import main
from toolfoundry.server.app import InsecureBind, check_bind, create_app
from toolfoundry.server.security import is_loopback

from .test_mcp_support import env, http_session, relaxed_config, serve_http


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.9.9.9", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.com", False),
    ],
)
def test_loopback_detection(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_non_loopback_bind_needs_a_token(tmp_path: Path) -> None:
    with pytest.raises(InsecureBind, match="--token"):
        check_bind("0.0.0.0", None)
    with pytest.raises(InsecureBind):
        check_bind("10.0.0.7", "")
    check_bind("0.0.0.0", "s3cret")
    check_bind("127.0.0.1", None)


def test_cli_refuses_public_bind_without_token(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    result = CliRunner().invoke(
        main, ["serve", "--db", url, "--http", "0.0.0.0:8999"], env={"TOOLFOUNDRY_TOKEN": ""}
    )
    assert result.exit_code == 2
    assert "without a token" in result.output
    assert not (tmp_path / "r.db").exists()  # refused before opening anything


@pytest.mark.parametrize("bad", ["8000", "localhost", "host:", "host:http", "h:70000"])
def test_cli_rejects_malformed_http_address(tmp_path: Path, bad: str) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    result = CliRunner().invoke(main, ["serve", "--db", url, "--http", bad])
    assert result.exit_code == 2
    assert "HOST:PORT" in result.output


def test_create_app_refuses_public_bind_without_token(tmp_path: Path) -> None:
    from toolfoundry import Foundry

    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd, pytest.raises(InsecureBind):
        create_app(fd, bind_host="0.0.0.0", token=None)


def test_token_required_on_public_bind(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    relaxed_config(tmp_path)
    with serve_http(url, tmp_path, "0.0.0.0", "--token", "s3cret-token") as port:
        endpoint = f"http://127.0.0.1:{port}/mcp"
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
        accept = {"accept": "application/json, text/event-stream"}
        for headers in ({}, {"authorization": "Bearer wrong"}, {"authorization": "s3cret-token"}):
            refused = httpx.post(endpoint, json=initialize, headers={**accept, **headers})
            assert refused.status_code == 401, headers
            assert refused.json()["error"]["kind"] == "unauthorized"
            assert refused.headers["www-authenticate"].startswith("Bearer")

        async def with_token() -> None:
            token = {"authorization": "Bearer s3cret-token"}
            async with http_session(port, headers=token) as (session, _):
                names = {t.name for t in (await session.list_tools()).tools}
                assert "create_tool" in names
                ran = await session.call_tool("run_js", {"code": "export default 6 * 7;"})
                assert isinstance(ran, types.CallToolResult)
                assert ran.structured_content["value"] == 42

        anyio.run(with_token)


def test_serve_stdio_exits_when_client_closes(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    done = subprocess.run(
        [sys.executable, "-m", "toolfoundry", "serve", "--db", url],
        input="",
        capture_output=True,
        text=True,
        env=env(),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # stdout belongs to the protocol: nothing else is printed


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("bogus://x", "bogus:// is not a store toolfoundry keeps its registry in"),
        ("postgresql+psycopg://postgres@127.0.0.1:1/x", "Connection refused"),
    ],
)
def test_cli_unusable_registry_is_a_clear_error(url: str, says: str) -> None:
    result = CliRunner().invoke(main, ["serve", "--db", url])
    assert result.exit_code == 1
    assert "cannot open the registry" in result.output
    assert says in result.output
    assert "Traceback" not in result.output


def test_cli_missing_config_is_a_usage_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    result = CliRunner().invoke(main, ["serve", "--config", str(missing)])
    assert result.exit_code == 2
    assert "nope.toml" in result.output
