"""Real loopback HTTP servers for the fetch tests.

``canary`` listens on 127.0.0.1 and [::1] (same port) and records every hit: a denied request
must leave it empty. ``allowed`` is an ordinary loopback server a policy explicitly allows
(through ``allow_private``). ``tls_server`` speaks HTTPS with a certificate for ``secure.test``
issued by a throwaway CA (trustme). All answer the same small routes:

- ``/echo``: JSON of the request (method, path, headers, body)
- ``/redirect?to=URL``: 302 to URL
- ``/bytes?n=N``: N bytes of ``x``; ``/gzip?n=N``: N zero bytes, gzip-encoded
- ``/slow?s=S``: waits S seconds before answering; ``/drip?s=S``: headers, then a byte per S s
- ``/echo-auth``: reflects the Authorization header into a response header and the body
"""

from __future__ import annotations

import base64
import gzip
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import trustme


@dataclass
class Hit:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class LoopbackServer:
    host: str
    port: int
    hits: list[Hit] = field(default_factory=list)
    servers: list[ThreadingHTTPServer] = field(default_factory=list)

    @property
    def base(self) -> str:
        return f"http://{self.host}:{self.port}"


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "loopback"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _record(self) -> Hit:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        hit = Hit(self.command, self.path, dict(self.headers.items()), body)
        self.server.record.hits.append(hit)  # type: ignore[attr-defined]
        return hit

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _route(self) -> None:
        hit = self._record()
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/redirect":
            self._send(302, b"moved", {"Location": query["to"]})
        elif url.path == "/bytes":
            self._send(200, b"x" * int(query["n"]))
        elif url.path == "/gzip":
            self._send(200, gzip.compress(b"\0" * int(query["n"])), {"Content-Encoding": "gzip"})
        elif url.path == "/slow":
            time.sleep(float(query["s"]))
            self._send(200, b"late")
        elif url.path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            for _ in range(100):
                self.wfile.write(b".")
                self.wfile.flush()
                time.sleep(float(query["s"]))
        elif url.path == "/echo-auth":
            auth = hit.headers.get("Authorization", "")
            self._send(200, f"you sent {auth}".encode(), {"X-Seen-Auth": auth})
        else:
            echo = {
                "method": hit.method,
                "path": hit.path,
                "headers": hit.headers,
                "body": base64.b64encode(hit.body).decode(),
            }
            self._send(200, json.dumps(echo).encode(), {"Content-Type": "application/json"})

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _route


def _serve(
    record: LoopbackServer,
    address: str,
    port: int,
    family: int,
    tls: ssl.SSLContext | None = None,
) -> ThreadingHTTPServer:
    class Server(ThreadingHTTPServer):
        address_family = family
        daemon_threads = True

        def handle_error(self, request: Any, client_address: Any) -> None:
            pass  # clients that time out on purpose leave broken pipes behind

    server = Server((address, port), _Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True)
    server.record = record  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    record.servers.append(server)
    return server


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


HAS_IPV6 = _ipv6_loopback()


@pytest.fixture(scope="session")
def has_ipv6() -> bool:
    return HAS_IPV6


def _start(host: str = "127.0.0.1", both_families: bool = False) -> LoopbackServer:
    record = LoopbackServer(host=host, port=0)
    for _ in range(20):
        first = _serve(record, host, 0, socket.AF_INET)
        record.port = first.server_address[1]
        if not (both_families and HAS_IPV6):
            return record
        try:
            _serve(record, "::1", record.port, socket.AF_INET6)
            return record
        except OSError:  # port taken on ::1; try another
            first.shutdown()
            record.servers.clear()
    raise RuntimeError("could not bind a dual-stack loopback port")


def _stop(record: LoopbackServer) -> None:
    for server in record.servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def _canary_server() -> Iterator[LoopbackServer]:
    record = _start(both_families=True)
    yield record
    _stop(record)


@pytest.fixture
def canary(_canary_server: LoopbackServer) -> LoopbackServer:
    """Records every hit on 127.0.0.1:PORT and [::1]:PORT; starts empty for each test."""
    _canary_server.hits.clear()
    return _canary_server


@pytest.fixture(scope="session")
def _allowed_server() -> Iterator[LoopbackServer]:
    record = _start()
    yield record
    _stop(record)


@pytest.fixture
def allowed(_allowed_server: LoopbackServer) -> LoopbackServer:
    """An explicitly allowed loopback server (127.0.0.1); starts empty for each test."""
    _allowed_server.hits.clear()
    return _allowed_server


@pytest.fixture(scope="session")
def tls_ca() -> trustme.CA:
    return trustme.CA()


@pytest.fixture(scope="session")
def _tls_server(tls_ca: trustme.CA) -> Iterator[LoopbackServer]:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls_ca.issue_cert("secure.test").configure_cert(context)
    record = LoopbackServer(host="127.0.0.1", port=0)
    record.port = _serve(record, "127.0.0.1", 0, socket.AF_INET, tls=context).server_address[1]
    yield record
    _stop(record)


@pytest.fixture
def tls_server(_tls_server: LoopbackServer) -> LoopbackServer:
    """HTTPS on 127.0.0.1 with a certificate for ``secure.test`` only."""
    _tls_server.hits.clear()
    return _tls_server


@pytest.fixture
def client_tls(tls_ca: trustme.CA) -> ssl.SSLContext:
    """A client context trusting the test CA (with hostname checks on)."""
    context = ssl.create_default_context()
    tls_ca.configure_trust(context)
    return context


FetchCall = Any


@pytest.fixture
def fetch() -> FetchCall:
    """``fetch(policy, url, method=..., headers=..., body=..., budget=...)``: one handler call."""

    def run(
        policy: Any,
        url: str,
        method: str = "GET",
        headers: Any = (),
        body: str | None = None,
        budget: float = 5.0,
        **extra: Any,
    ) -> dict[str, Any]:
        handler = policy.handler(deadline=time.monotonic() + budget, tool="probe")
        request: dict[str, Any] = {
            "url": url,
            "method": method,
            "headers": [list(h) for h in headers],
        }
        request["body"] = body
        request.update(extra)
        return handler.handle(request)  # type: ignore[no-any-return]

    return run


@pytest.fixture
def rebind_pair() -> Iterator[tuple[LoopbackServer, LoopbackServer]]:
    """Two servers on the same port: 127.0.0.1 (the checked target) and 127.0.0.2 (a canary)."""
    for _ in range(20):
        first = _start("127.0.0.1")
        second = LoopbackServer(host="127.0.0.2", port=first.port)
        try:
            _serve(second, "127.0.0.2", first.port, socket.AF_INET)
        except OSError:
            _stop(first)
            continue
        yield first, second
        _stop(first)
        _stop(second)
        return
    raise RuntimeError("could not bind 127.0.0.1 and 127.0.0.2 on one port")
