"""Fixtures shared across areas. Area-specific fixtures live in tests/<area>/conftest.py.

The foundation every area builds on: ``foundry`` (a foundry over a new SQLite registry),
``new_version`` (a small valid version to add to a registry), ``mcp_session`` (the official MCP
client on a real ``toolfoundry serve``), ``db_url`` (an empty registry on each backend) and
the loopback HTTP servers. Their types are in tests/factories.py.
"""

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from tests.factories import McpSessionFactory, NewVersionFactory, new_version

from toolfoundry import Foundry
from toolfoundry.config import Config

PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


BACKENDS = [
    "sqlite",
    pytest.param("postgresql", marks=[pytest.mark.slow, pytest.mark.postgres]),
]


@pytest.fixture(params=BACKENDS)
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty registry database on each backend (PostgreSQL only under ``-m slow``)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'registry.db'}"
    url: str = request.getfixturevalue("pg_url")
    return url


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A SQLAlchemy URL to a fresh, empty schema in the real PostgreSQL server; dropped after."""
    from sqlalchemy import create_engine, text

    schema = f"tf_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_SERVER)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{PG_SERVER}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture
def loopback_http() -> Iterator[Callable[[type[BaseHTTPRequestHandler]], str]]:
    """Starts a real HTTP server on loopback for a handler class and returns its ``host:port``;
    every server started in the test is stopped after it."""
    servers: list[ThreadingHTTPServer] = []

    def start(handler: type[BaseHTTPRequestHandler]) -> str:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        servers.append(server)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return f"127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


class WeatherHandler(BaseHTTPRequestHandler):
    """Answers ``GET /w?city=C`` with ``{"city": C, "temp": len(C)}``."""

    requests: list[str] = []

    def do_GET(self) -> None:
        self.requests.append(self.path)
        city = self.path.rpartition("=")[2]
        body = json.dumps({"city": city, "temp": len(city)}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def weather_server(loopback_http: Callable[[type[BaseHTTPRequestHandler]], str]) -> str:
    """A real HTTP server on loopback answering ``{"temp": len(city)}``: its host:port."""
    return loopback_http(type("Weather", (WeatherHandler,), {"requests": []}))


@pytest.fixture
def foundry(tmp_path: Path) -> Iterator[Foundry]:
    """A foundry over a new SQLite registry file, under the default configuration (not the
    working directory's toolfoundry.toml); closed after the test."""
    with Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}", config=Config()) as fd:
        yield fd


@pytest.fixture(name="new_version")
def new_version_fixture() -> NewVersionFactory:
    """Makes a small valid version: ``new_version("slugify", VersionStatus.PENDING_APPROVAL,
    description=...)`` (tests/factories.py)."""
    return new_version


@pytest.fixture
def mcp_session() -> McpSessionFactory:
    """Opens the official MCP client on ``toolfoundry serve --db URL`` over stdio:
    ``async with mcp_session(url, cwd, *serve_args) as (session, notes)``."""
    from tests.server.mcp.test_mcp_support import stdio_session  # the MCP SDK: its users only

    return stdio_session
