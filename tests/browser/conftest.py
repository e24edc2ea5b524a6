"""Real parts for the browser tests: Debian's chromium driven by Playwright, a loopback HTTP
server a network tool calls, and ``toolfoundry serve --http`` as a subprocess.

Screenshots of a failing test are saved under ``test-artifacts/browser/`` (CI keeps that
directory as an artifact)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from tests.server.mcp.test_mcp_support import serve_http as serve_subprocess

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--headless",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "browser"


@pytest.fixture
def chromium() -> Path:
    """Debian's chromium (installed by scripts/setup.sh); the test is skipped without it."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)")
    return CHROMIUM


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    """Where this test saves screenshots when it fails (created only then)."""
    name: str = request.node.name
    return ARTIFACTS / name


@dataclass(frozen=True)
class Served:
    """A running ``toolfoundry serve --http`` on loopback."""

    base: str


@pytest.fixture
def serve_http() -> Iterator[Callable[..., Served]]:
    """Start ``toolfoundry serve --http`` for a database URL in a directory (its config); every
    server started is stopped after the test."""
    with ExitStack() as stack:

        def start(url: str, cwd: Path, *extra: str) -> Served:
            port = stack.enter_context(serve_subprocess(url, cwd, "127.0.0.1", *extra))
            return Served(f"http://127.0.0.1:{port}")

        yield start
