"""``toolfoundry js run`` with fetch flags: hostile scripts refused, bad flags usage errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from click.testing import CliRunner

from toolfoundry.cli import main

if TYPE_CHECKING:
    from tests.sandbox.host.conftest import LoopbackServer

HOSTILE = """
export async function handler({ urls }) {
  for (const u of urls.slice(1)) {
    try { await fetch(u) } catch (e) { console.log(e.message) }
  }
  await fetch(urls[0]);
}
"""


def test_js_run_refuses_ssrf_tricks(tmp_path: Path, canary: LoopbackServer) -> None:
    script = tmp_path / "hostile.js"
    script.write_text(HOSTILE)
    port = canary.port
    urls = [
        f"https://localhost:{port}/",
        f"https://2130706433:{port}/",
        f"https://[::ffff:127.0.0.1]:{port}/",
        f"https://allowed.test@127.0.0.1:{port}/",
        f"http://127.0.0.1:{port}/",
    ]
    result = CliRunner().invoke(
        main,
        [
            "js",
            "run",
            str(script),
            "--json",
            "--args",
            json.dumps({"urls": urls}),
            "--allow-host",
            f"localhost:{port}",
            "--allow-host",
            f"127.0.0.1:{port}",
        ],
    )
    assert result.exit_code == 1, result.output
    out = json.loads(result.output)
    assert out["ok"] is False
    assert out["error"]["kind"] == "capability_denied"
    assert canary.hits == []


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--allow-host", "0x7f000001"),
        ("--allow-host", "*"),
        ("--allow-private", "10.0.0.0/33"),
        ("--credential", "api.example.com:Authorization"),
        ("--credential", "*.example.com:Authorization:TOKEN"),
    ],
)
def test_js_run_rejects_malformed_fetch_flags(tmp_path: Path, flag: str, value: str) -> None:
    script = tmp_path / "ok.js"
    script.write_text("export default 1;")
    result = CliRunner().invoke(main, ["js", "run", str(script), flag, value])
    assert result.exit_code == 2, result.output


def test_js_run_reaches_an_allowed_plain_http_loopback_server(
    tmp_path: Path, allowed: LoopbackServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = tmp_path / "get.js"
    script.write_text(
        "export async function handler({ url }) {"
        "  const r = await fetch(url); const body = await r.json();"
        "  return { status: r.status, headers: body.headers };"
        "}"
    )
    monkeypatch.setenv("LOOPBACK_TOKEN", "Bearer s3cret")
    host = f"127.0.0.1:{allowed.port}"
    result = CliRunner().invoke(
        main,
        [
            "js",
            "run",
            str(script),
            "--json",
            "--args",
            json.dumps({"url": f"http://{host}/echo"}),
            "--allow-host",
            f"http://{host}",
            "--allow-private",
            "127.0.0.1",
            "--credential",
            f"{host}:Authorization:LOOPBACK_TOKEN",
        ],
    )
    assert result.exit_code == 0, result.output
    out = json.loads(result.output)
    # The server received the credential; the script's copy of the echo has it redacted.
    assert out["value"]["status"] == 200
    assert "s3cret" not in result.output
    assert allowed.hits[-1].headers.get("Authorization") == "Bearer s3cret"


def test_js_run_refusals_name_the_flags_that_work_there(
    tmp_path: Path, allowed: LoopbackServer
) -> None:
    """``js run`` has no toolfoundry.toml to edit: its refusal of plain http names
    ``--allow-host http://HOST`` (and of a private address ``--allow-private``), and following
    what it says reaches the server."""
    script = tmp_path / "get.js"
    script.write_text(
        "export async function handler({ url }) { return (await fetch(url)).status; }\n"
    )
    authority = f"127.0.0.1:{allowed.port}"
    url = f"http://{authority}/"

    def run(*flags: str) -> dict[str, Any]:
        args = ["js", "run", str(script), "--json", "--args", json.dumps({"url": url})]
        answer: dict[str, Any] = json.loads(CliRunner().invoke(main, [*args, *flags]).output)
        return answer

    plain = run("--allow-host", authority)
    assert plain["error"]["kind"] == "capability_denied"
    assert f"--allow-host http://{authority}" in plain["error"]["message"]
    assert "toolfoundry.toml" not in plain["error"]["message"]
    private = run("--allow-host", f"http://{authority}")
    assert "--allow-private 127.0.0.1" in private["error"]["message"]
    assert allowed.hits == []
    done = run("--allow-host", f"http://{authority}", "--allow-private", "127.0.0.1")
    assert done["ok"] is True, done
    assert len(allowed.hits) == 1
