"""Connections pinned to one checked address, each step clamped to the fetch's deadline.

Imported by ``fetch_wire.send`` on the first real request: httpcore is not loaded by processes
that never fetch (``serve``'s start, the CLI, a call of a tool without network).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable
from typing import Any

import httpcore
from httpcore._backends.base import SOCKET_OPTION

from toolfoundry.sandbox.host.netguard import IPAddress


class PinnedBackend(httpcore.NetworkBackend):
    """An httpcore network backend that connects only to one checked address.

    The URL keeps the host name, so the Host header, TLS SNI and certificate verification all use
    the name, while the socket goes to ``address``: there is no second resolution to rebind.
    Every connect, read and write is clamped to ``deadline`` (a ``time.monotonic()`` instant).
    """

    def __init__(self, host: str, address: IPAddress, deadline: float) -> None:
        self._host = host
        self._address = address
        self._deadline = deadline
        self._inner = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        if host != self._host:  # httpcore only ever asks for the request's own origin
            raise httpcore.ConnectError("connection target does not match the checked host")
        stream = self._inner.connect_tcp(
            str(self._address),
            port,
            timeout=_clamp(timeout, self._deadline, httpcore.ConnectTimeout),
            local_address=local_address,
            socket_options=socket_options,
        )
        return _DeadlineStream(stream, self._deadline)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise httpcore.ConnectError("unix sockets are not reachable from fetch")

    def sleep(self, seconds: float) -> None:
        time.sleep(max(0.0, min(seconds, self._deadline - time.monotonic())))


def _clamp(timeout: float | None, deadline: float, error: type[Exception]) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the fetch deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamp(timeout, self._deadline, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout, self._deadline, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        inner = self._inner.start_tls(
            ssl_context,
            server_hostname=server_hostname,
            timeout=_clamp(timeout, self._deadline, httpcore.ConnectTimeout),
        )
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)
