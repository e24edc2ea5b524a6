"""Fixtures for the Python tier: real bubblewrap jails, a loopback HTTP server, a canary."""

from __future__ import annotations

import http.server
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from toolfoundry.sandbox.process.bwrap import BwrapExecutor
from toolfoundry.sandbox.process.jail import find_bwrap
from toolfoundry.sandbox.process.pool import WarmPool

SECRET = "tf-secret-7c1d9e"

if find_bwrap() is None:
    pytest.skip(
        "bubblewrap is not installed (scripts/setup.sh installs it)", allow_module_level=True
    )


@pytest.fixture(scope="session", autouse=True)
def host_secret() -> Iterator[str]:
    """A secret in the host's environment that no jail may see."""
    os.environ["TOOLFOUNDRY_TEST_SECRET"] = SECRET
    yield SECRET
    os.environ.pop("TOOLFOUNDRY_TEST_SECRET", None)


@pytest.fixture(scope="session")
def cold() -> BwrapExecutor:
    return BwrapExecutor()


@pytest.fixture(scope="module")
def pool() -> Iterator[WarmPool]:
    with WarmPool(2) as warm:
        assert warm.wait_ready(30)
        yield warm


class _Recorder(http.server.BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        self.send_response(200)
        self.end_headers()
        self.wfile.write(SECRET.encode())

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def listener(
    loopback_http: Callable[[type[http.server.BaseHTTPRequestHandler]], str],
) -> tuple[int, list[str]]:
    """A real loopback HTTP server on the host: (its port, the paths it was asked for)."""
    hits: list[str] = []
    handler = type("Recorder", (_Recorder,), {"hits": hits})
    port = loopback_http(handler).rpartition(":")[2]
    return int(port), hits


@pytest.fixture
def canary(tmp_path: Path) -> Path:
    """A host file holding the secret, as a registry database would."""
    path = tmp_path / "registry.db"
    path.write_text(SECRET)
    return path
