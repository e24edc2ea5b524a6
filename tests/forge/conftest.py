"""Forge fixtures: a real loopback HTTP server that records every hit (tests assert none come)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler

import pytest


@dataclass
class Canary:
    url: str
    hits: list[str] = field(default_factory=list)


@pytest.fixture
def canary(loopback_http: Callable[[type[BaseHTTPRequestHandler]], str]) -> Canary:
    record = Canary(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            record.hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"reached")

        def log_message(self, *args: object) -> None:
            pass

    record.url = f"http://{loopback_http(Handler)}"
    return record
