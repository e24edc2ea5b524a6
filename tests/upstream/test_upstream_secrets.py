"""``secret = "KEY"`` names a key of the secret store, for ``[[upstream.credentials]]`` and
``[[fetch.credentials]]`` alike (sandbox/host/credentials.py:read_secret): the store a program
gives ``Foundry.open``, else the files of ``TOOLFOUNDRY_SECRETS_DIR``. Against the real Python SDK
``tracker`` server (Bearer token over Streamable HTTP) and a real HTTP server for a tool's fetch."""

from __future__ import annotations

from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from tests.factories import error_of
from tests.foundry.test_foundry_code_mode import SECRET, Weather, weather_draft
from tests.upstream.conftest import HttpUpstream, toml_text, tracker_server

from toolfoundry import Foundry
from toolfoundry.config import load_config, parse_config
from toolfoundry.foundry.review import version_review
from toolfoundry.sandbox.host.credentials import SECRETS_DIR_VARIABLE
from toolfoundry.spec import ErrorKind

WHO = "export default async () => tools.tracker.whoami({});"


def tracker_entry(upstream: HttpUpstream) -> dict[str, Any]:
    credential = {"header": "Authorization", "prefix": "Bearer ", "secret": "tracker_token"}
    return {"name": "tracker", "url": upstream.url, "credentials": [credential]}


def test_an_upstream_credential_from_the_secrets_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    with tracker_server() as upstream:
        (secrets / "tracker_token").write_text(upstream.token + "\n")  # as `echo` writes it
        config = tmp_path / "toolfoundry.toml"
        config.write_text(toml_text({"upstream": [tracker_entry(upstream)]}))

        monkeypatch.delenv(SECRETS_DIR_VARIABLE, raising=False)
        fd = Foundry.open(f"sqlite:///{tmp_path / 'a.db'}", config=load_config(config))
        try:
            assert fd.upstreams is not None
            assert not fd.upstreams.wait(10)
            [status] = fd.upstreams.statuses()
            assert status.error == (
                "its credential: secret 'tracker_token' needs a secret store, and none is "
                "given (Foundry.open's secret_store, or TOOLFOUNDRY_SECRETS_DIR)"
            )
        finally:
            fd.close()

        monkeypatch.setenv(SECRETS_DIR_VARIABLE, str(secrets))
        fd = Foundry.open(f"sqlite:///{tmp_path / 'b.db'}", config=load_config(config))
        try:
            assert fd.upstreams is not None
            assert fd.upstreams.wait(30), [s.to_dict() for s in fd.upstreams.statuses()]
            who = fd.run_js(WHO, {}).value
            assert "[redacted]" in str(who)
            assert upstream.token not in str(who)
        finally:
            fd.close()

        # a program's own store wins over the directory
        store = {"tracker_token": upstream.token}.get
        fd = Foundry.open(
            f"sqlite:///{tmp_path / 'c.db'}", config=load_config(config), secret_store=store
        )
        try:
            assert fd.upstreams is not None
            (secrets / "tracker_token").write_text("wrong")
            assert fd.upstreams.wait(30), [s.to_dict() for s in fd.upstreams.statuses()]
        finally:
            fd.close()


def weather_config(host: str) -> Any:
    credential = {"host": host, "header": "Authorization", "secret": "weather"}
    return parse_config(
        {
            "fetch": {
                "allow_http": [host],
                "allow_private": ["127.0.0.1"],
                "credentials": [credential],
            }
        }
    )


def test_a_fetch_credential_reads_the_same_store(
    tmp_path: Path,
    loopback_http: Callable[[type[BaseHTTPRequestHandler]], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(SECRETS_DIR_VARIABLE, raising=False)
    host = loopback_http(type("W", (Weather,), {"seen": []}))
    url = f"sqlite:///{tmp_path / 'registry.db'}"
    fd = Foundry.open(url, config=weather_config(host), secret_store={"weather": SECRET}.get)
    try:
        assert fd.create_tool(weather_draft(host)).status == "pending_approval"
        [cap] = [
            c
            for c in version_review(fd, "weather", 1)["capability_details"]
            if c["capability"] == "credentials"
        ]
        assert cap["resolution"] == "resolves now: the Authorization header from secret 'weather'"
        assert fd.approve("weather", by="alice").status == "active"
        assert fd.call("weather", {"city": "Oslo"}).value == {"temp": 4, "echo": "[redacted]"}
    finally:
        fd.close()

    fd = Foundry.open(url, config=weather_config(host))  # no store given, none in the environment
    try:
        error = error_of(fd.call("weather", {"city": "Oslo"}))
        assert error.kind is ErrorKind.CAPABILITY_DENIED
        assert f"credential for {host} needs a secret store" in error.message
    finally:
        fd.close()
