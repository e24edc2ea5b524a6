"""Fuzz fixtures: every test here is slow and fuzz-marked; a loopback canary records any hit."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from toolfoundry.sandbox.js.installation import GUEST_WASM

NEEDS_GUEST = ("test_fuzz_forge", "test_fuzz_sandbox", "test_fuzz_server")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/fuzz" not in str(item.path):
            continue
        item.add_marker(pytest.mark.slow)
        item.add_marker(pytest.mark.fuzz)
        if not GUEST_WASM.exists() and item.path.stem in NEEDS_GUEST:
            item.add_marker(pytest.mark.skip(reason="guest not built: run `make setup`"))


@dataclass
class Canary:
    """A loopback HTTP server; ``hits`` lists every request path it received."""

    host: str
    port: int
    hits: list[str] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"


@pytest.fixture(scope="module")
def canary() -> Iterator[Canary]:
    record = Canary(host="127.0.0.1", port=0)

    class Handler(BaseHTTPRequestHandler):
        def _hit(self) -> None:
            record.hits.append(f"{self.command} {self.path}")
            self.send_response(200)
            self.send_header("Content-Length", "7")
            self.end_headers()
            self.wfile.write(b"reached")

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _hit

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    record.port = int(server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield record
    finally:
        server.shutdown()
        server.server_close()
