"""The wire side of fetch: one request over a connection pinned to a checked address.

The caller has already parsed the URL, applied the policy and checked every resolved address;
this module only talks HTTP/1.1 through httpcore (httpx's transport layer), using the parsed parts
as they are, so nothing re-parses the script's URL and nothing resolves the name again. Bodies are
decoded (gzip, deflate) incrementally under the size cap, so a compression bomb stops early.
"""

from __future__ import annotations

import base64
import binascii
import http
import ssl
import time
import zlib
from dataclasses import dataclass
from typing import Any

from toolfoundry.sandbox.host.credentials import HEADER_NAME, RESERVED_HEADERS, Credential
from toolfoundry.sandbox.host.netguard import FetchError, IPAddress, ParsedURL, denied

METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")
MAX_HEADERS = 100
MAX_HEADER_BYTES = 64 * 1024
# Set by the host, so a script's own value is dropped rather than refused.
_HOST_OWNED = frozenset({"content-length", "accept-encoding"})


@dataclass(frozen=True)
class Reply:
    """A complete, decoded HTTP response."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes


def send(
    url: ParsedURL,
    address: IPAddress,
    method: str,
    headers: list[tuple[str, str]],
    body: bytes | None,
    *,
    deadline: float,
    connect_timeout: float,
    read_timeout: float,
    max_bytes: int,
    ssl_context: ssl.SSLContext | None,
) -> Reply:
    """Send one request to ``address`` on behalf of ``url`` and read the whole response.

    Redirects are never followed: a 3xx comes back as it is. Host, SNI and certificate checks
    use ``url.host``; the socket goes to ``address`` only.

    Raises:
        FetchError: ``timeout`` past a timeout or ``deadline``; ``runtime_error`` for network,
            TLS, protocol and decoding failures or a body larger than ``max_bytes``.
    """
    import httpcore  # loaded by the first fetch, not by every process that may run a tool

    from toolfoundry.sandbox.host.fetch_pinned import PinnedBackend

    request = httpcore.Request(
        method.encode("ascii"),
        httpcore.URL(
            scheme=url.scheme.encode("ascii"),
            host=url.host.encode("ascii"),
            port=url.port,
            target=url.target.encode("ascii"),
        ),
        headers=[(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers],
        content=body or b"",
        extensions={
            "timeout": {
                "connect": connect_timeout,
                "read": read_timeout,
                "write": read_timeout,
                "pool": connect_timeout,
            }
        },
    )
    backend = PinnedBackend(url.host, address, deadline)
    where = url.authority
    try:
        with httpcore.ConnectionPool(
            ssl_context=ssl_context, network_backend=backend, retries=0, max_connections=1
        ) as pool:
            response = pool.handle_request(request)
            try:
                raw = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers]
                decoder = _Decoder(raw, max_bytes)
                for chunk in response.iter_stream():
                    decoder.feed(chunk)
                    if time.monotonic() > deadline:
                        raise FetchError("timeout", f"reading from {where} ran past the deadline")
                data = decoder.finish()
            finally:
                response.close()
    except httpcore.ConnectTimeout:
        raise FetchError("timeout", f"connecting to {where} timed out") from None
    except (httpcore.ReadTimeout, httpcore.PoolTimeout):
        raise FetchError("timeout", f"{where} did not answer in time") from None
    except httpcore.WriteTimeout:
        raise FetchError("timeout", f"sending the request to {where} timed out") from None
    except httpcore.ConnectError as exc:
        raise FetchError("runtime_error", f"could not connect to {where}: {exc}") from None
    except (httpcore.NetworkError, httpcore.ProtocolError) as exc:
        raise FetchError("runtime_error", f"HTTP exchange with {where} failed: {exc}") from None
    if decoder.decoded:
        raw = [(k, v) for k, v in raw if k.lower() not in ("content-encoding", "content-length")]
    reason = response.extensions.get("reason_phrase", b"").decode("latin-1")
    if not reason:
        try:
            reason = http.HTTPStatus(response.status).phrase
        except ValueError:
            reason = ""
    return Reply(status=response.status, reason=reason, headers=raw, body=data)


class _Decoder:
    """Collects the body, undoing gzip or deflate, and stops once it exceeds the cap."""

    def __init__(self, headers: list[tuple[str, str]], limit: int) -> None:
        codings = [
            c.strip().lower()
            for k, v in headers
            if k.lower() == "content-encoding"
            for c in v.split(",")
            if c.strip() and c.strip().lower() != "identity"
        ]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise FetchError("runtime_error", f"unsupported Content-Encoding {codings}")
        self._coding = codings[0] if codings else None
        self._zlib: Any = None
        self._limit = limit
        self._parts: list[bytes] = []
        self._size = 0
        self.decoded = self._coding is not None

    def feed(self, data: bytes) -> None:
        if self._coding is None:
            self._keep(data)
            return
        if self._zlib is None:
            if self._coding == "deflate" and not _zlib_wrapped(data):
                self._zlib = zlib.decompressobj(-zlib.MAX_WBITS)
            else:
                wbits = zlib.MAX_WBITS | (16 if self._coding != "deflate" else 0)
                self._zlib = zlib.decompressobj(wbits)
        try:
            self._keep(self._zlib.decompress(data, self._limit - self._size + 1))
        except zlib.error:
            raise FetchError(
                "runtime_error", f"response body is not valid {self._coding} data"
            ) from None
        if self._zlib.unconsumed_tail:
            self._too_large()

    def finish(self) -> bytes:
        if self._zlib is not None:
            self._keep(self._zlib.flush())
        return b"".join(self._parts)

    def _keep(self, data: bytes) -> None:
        self._size += len(data)
        if self._size > self._limit:
            self._too_large()
        self._parts.append(data)

    def _too_large(self) -> None:
        raise FetchError(
            "runtime_error", f"response body exceeds the {self._limit}-byte limit (stopped reading)"
        )


def _zlib_wrapped(data: bytes) -> bool:
    return len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0


def request_headers(
    raw: object, url: ParsedURL, credential: Credential | None
) -> list[tuple[str, str]]:
    """The headers actually sent: the script's, checked, plus the ones the host owns.

    Raises:
        FetchError: ``capability_denied`` for forbidden names or CR/LF/NUL anywhere,
            ``runtime_error`` for a malformed list.
    """
    if raw is None:
        raw = []
    if not isinstance(raw, list | tuple) or len(raw) > MAX_HEADERS:
        raise FetchError("runtime_error", f"headers must be a list of at most {MAX_HEADERS} pairs")
    out: list[tuple[str, str]] = [("Host", url.authority)]
    seen: set[str] = set()
    size = 0
    stripped = credential.header.lower() if credential is not None else None
    for pair in raw:
        if not isinstance(pair, list | tuple) or len(pair) != 2:
            raise FetchError("runtime_error", "each header must be a [name, value] pair")
        name, value = pair
        if not isinstance(name, str) or not isinstance(value, str):
            raise FetchError("runtime_error", "header names and values must be strings")
        if not HEADER_NAME.fullmatch(name):
            raise denied(f"header name {name[:40]!r} is not a valid token (CR/LF/NUL refused)")
        if any((ord(c) < 0x20 and c != "\t") or ord(c) == 0x7F for c in value):
            raise denied(f"header {name!r} contains CR, LF, NUL or other control characters")
        if any(ord(c) > 0xFF for c in value):
            raise FetchError("runtime_error", f"header {name!r} value is not Latin-1")
        lowered = name.lower()
        if lowered in _HOST_OWNED or lowered == stripped:
            continue
        if (
            lowered in RESERVED_HEADERS
            or lowered.startswith(("proxy-", "x-forwarded-"))
            or lowered == "x-real-ip"
        ):
            raise denied(f"header {name!r} may not be set by a script")
        size += len(name) + len(value)
        if size > MAX_HEADER_BYTES:
            raise FetchError("runtime_error", f"request headers exceed {MAX_HEADER_BYTES} bytes")
        seen.add(lowered)
        out.append((name, value))
    if "user-agent" not in seen:
        out.append(("User-Agent", "toolfoundry-fetch/0.1"))
    if "accept" not in seen:
        out.append(("Accept", "*/*"))
    out.append(("Accept-Encoding", "gzip, deflate"))
    out.append(("Connection", "close"))  # one connection per request: nothing is reused
    return out


def request_body(raw: object, method: str, limit: int) -> bytes | None:
    """Decode the script's base64 body, refusing bodies on GET/HEAD and beyond ``limit``."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise FetchError("runtime_error", "request body must be base64 text or null")
    if method in ("GET", "HEAD"):
        raise FetchError("runtime_error", f"{method} requests cannot have a body")
    if len(raw) > (limit + 2) // 3 * 4 + 4:
        raise FetchError("runtime_error", f"request body exceeds {limit} bytes")
    try:
        body = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise FetchError("runtime_error", "request body is not valid base64") from None
    if len(body) > limit:
        raise FetchError("runtime_error", f"request body exceeds {limit} bytes")
    return body
