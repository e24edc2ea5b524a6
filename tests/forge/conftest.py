"""Forge fixtures: a real loopback HTTP server that records every hit (tests assert none come)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class Canary:
    url: str
    hits: list[str] = field(default_factory=list)


@pytest.fixture
def canary() -> Iterator[Canary]:
    record = Canary(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            record.hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"reached")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    record.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield record
    finally:
        server.shutdown()
        server.server_close()
