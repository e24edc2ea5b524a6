"""The guard in front of the HTTP server: login, bearer tokens, DNS rebinding and CSRF.

``secure(app, token=..., bind_host=...)`` wraps the composed ASGI application:

- **Who may come in.** Loopback binds without a token need no login. With a token (always
  off loopback), the API and MCP need ``Authorization: Bearer <token>`` (``GET /healthz``,
  which says only up or down, needs none); the page takes
  ``/ui?token=<token>`` once, which sets a session cookie (HttpOnly, SameSite=Strict) and
  redirects to the same address without the token. Refusals are 401.
- **DNS rebinding.** On a loopback bind the ``Host`` header must name loopback, or a page on
  any site whose name an attacker points at 127.0.0.1 could drive the server.
- **CSRF on the page.** Every state-changing request under ``/ui`` must come from the same
  origin (``Origin``, else ``Referer``) and carry a form field ``csrf_token`` equal to an HMAC
  of the session cookie's id (a signed double submit: nothing is stored server-side, and a
  cookie planted by a sibling domain cannot be matched without the server key). Refusals
  are 403, and the request never reaches the application.
- **CSRF on the API.** State-changing API requests must be ``application/json`` (a cross-site
  form or ``fetch`` cannot send that without a CORS preflight, which is never granted) and,
  when an ``Origin`` is sent, same-origin.
- **Nothing cached.** Every answer under ``/ui`` and ``/api`` (and every refusal) carries
  ``Cache-Control: no-store``: pages hold the CSRF token and pending code, the API the queue.

The session key comes from the token when there is one (so several processes behind one
load balancer accept each other's cookies), else from a random per-process secret.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import secrets
from collections.abc import MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

SESSION_COOKIE = "tf_session"
CSRF_FIELD = "csrf_token"
CSRF_SCOPE_KEY = "toolfoundry.csrf_token"
PAGE_PREFIX = "/ui"
API_PREFIX = "/api"
HEALTH_PATH = "/healthz"  # answers up or down only, so it needs no token (load balancers)
MAX_FORM_BYTES = 64 * 1024
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# The page has no scripts and must never be framed: a framed approve button is clickjacking.
_PAGE_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'self'; script-src 'none'; frame-ancestors 'none'; form-action 'self'",
    ),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
)
# Page and API answers hold what no cache may keep: the page's CSRF token, pending code awaiting
# review, the approvals queue, versions' code. A shared proxy or the browser's back/forward
# cache would otherwise serve them to the next person, or after logging out.
_NO_STORE = (b"cache-control", b"no-store")
_LOOPBACK_NAMES = {"localhost"}


def is_loopback(host: str) -> bool:
    """True for ``127.0.0.0/8``, ``::1`` and ``localhost`` (brackets and ports allowed)."""
    bare = host.strip()
    if bare.startswith("["):
        bare = bare[1 : bare.find("]")] if "]" in bare else bare[1:]
    elif bare.count(":") == 1:
        bare = bare.partition(":")[0]
    if bare.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def csrf_token(scope: Scope) -> str:
    """The CSRF token a page must put in its forms' ``csrf_token`` field ("" when unguarded)."""
    value = scope.get(CSRF_SCOPE_KEY, "")
    return value if isinstance(value, str) else ""


def secure(app: ASGIApp, *, token: str | None, bind_host: str) -> ASGIApp:
    """Wrap ``app`` with the protections described in this module's docstring.

    Args:
        app: the composed application (MCP under ``/mcp``, the page under ``/ui``, the API
            under ``/api``).
        token: the shared secret; required when ``bind_host`` is not loopback.
        bind_host: the address the server listens on.

    Raises:
        ValueError: a non-loopback bind without a token.
    """
    loopback = is_loopback(bind_host)
    if not loopback and not token:
        raise ValueError(
            f"refusing to serve on {bind_host!r} without a token: anyone who can reach it "
            "could create and run tools"
        )
    return Guard(app, token=token or None, loopback=loopback)


class Guard:
    """The ASGI middleware :func:`secure` returns."""

    def __init__(self, app: ASGIApp, *, token: str | None, loopback: bool) -> None:
        self.app = app
        self.token = token
        self.loopback = loopback
        seed = token.encode() if token else secrets.token_bytes(32)
        self._key = hmac.new(seed, b"toolfoundry session key", hashlib.sha256).digest()

    # -- signing ----------------------------------------------------------------------

    def _mac(self, purpose: str, sid: str) -> str:
        return hmac.new(self._key, f"{purpose}:{sid}".encode(), hashlib.sha256).hexdigest()

    def _session(self, cookie_value: str | None) -> str | None:
        """The session id of a genuine cookie, else None."""
        if not cookie_value or "." not in cookie_value:
            return None
        sid, _, mac = cookie_value.partition(".")
        return sid if _same(mac, self._mac("session", sid)) else None

    def _new_cookie(self) -> tuple[str, str]:
        sid = secrets.token_urlsafe(18)
        return sid, f"{sid}.{self._mac('session', sid)}"

    # -- the request path ---------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        path: str = scope.get("path", "")
        method: str = scope.get("method", "GET")
        page = path == PAGE_PREFIX or path.startswith(PAGE_PREFIX + "/")
        host = headers.get("host", "")
        if self.loopback and not is_loopback(host):
            await _refuse(send, 403, "forbidden_host", f"Host {host!r} is not a loopback name")
            return
        if path == HEALTH_PATH and method in _SAFE_METHODS:
            await self.app(scope, receive, send)
            return
        sid = self._session(_cookies(headers).get(SESSION_COOKIE))
        set_cookie: str | None = None
        offered = _query_token(scope) if page and self.token and sid is None else None
        if offered is not None and self.token and _same(offered, self.token):
            await self._login(scope, send)
            return
        authorized = self.token is None or self._bearer_ok(headers) or (page and sid is not None)
        if not authorized:
            if page:
                await _refuse_page(send)
            else:
                await _refuse(send, 401, "unauthorized", "missing or wrong bearer token")
            return
        if page and sid is None:
            sid, set_cookie = self._new_cookie()
        if page:
            assert sid is not None
            scope[CSRF_SCOPE_KEY] = self._mac("csrf", sid)
        if method not in _SAFE_METHODS:
            if page:
                receive = await self._check_form(scope, receive, send, headers)
            elif path.startswith(API_PREFIX):
                refusal = _api_refusal(headers)
                if refusal is not None:
                    await _refuse(send, *refusal)
                    return
            if receive is _REFUSED:
                return
        api = path == API_PREFIX or path.startswith(API_PREFIX + "/")
        if page or api:
            extra = [*_PAGE_HEADERS, _NO_STORE] if page else [_NO_STORE]
            if set_cookie:
                extra.append((b"set-cookie", _cookie_header(set_cookie, _https(scope))))
            send = _with_headers(send, extra)
        await self.app(scope, receive, send)

    def _bearer_ok(self, headers: dict[str, str]) -> bool:
        given = headers.get("authorization", "")
        return self.token is not None and hmac.compare_digest(
            given.encode(), f"Bearer {self.token}".encode()
        )

    async def _login(self, scope: Scope, send: Send) -> None:
        _, cookie = self._new_cookie()
        query = {
            k: v
            for k, v in parse_qs(scope.get("query_string", b"").decode("latin-1")).items()
            if k != "token"
        }
        location = scope.get("root_path", "") + scope["path"]
        if query:
            location += "?" + urlencode(query, doseq=True)
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode()),
                    (b"set-cookie", _cookie_header(cookie, _https(scope))),
                    _NO_STORE,
                    (b"content-length", b"0"),
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    async def _check_form(
        self, scope: Scope, receive: Receive, send: Send, headers: dict[str, str]
    ) -> Receive:
        """Check origin and CSRF token of a page POST; returns a receive that replays the
        body, or ``_REFUSED`` after sending the refusal."""
        if not _same_origin(headers):
            await _refuse(send, 403, "csrf", "cross-origin request refused")
            return _REFUSED
        body = await _read_body(receive, MAX_FORM_BYTES)
        if body is None:
            await _refuse(send, 413, "too_large", "form too large")
            return _REFUSED
        if not headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            await _refuse(send, 403, "csrf", "page forms must be url-encoded")
            return _REFUSED
        given = parse_qs(body.decode("latin-1")).get(CSRF_FIELD, [""])[0]
        expected = scope.get(CSRF_SCOPE_KEY, "")
        if not given or not _same(given, expected):
            await _refuse(send, 403, "csrf", "missing or wrong CSRF token; reload the page")
            return _REFUSED
        return _replay(body)


async def _refused_receive() -> Message:  # pragma: no cover - never awaited
    return {"type": "http.disconnect"}


_REFUSED: Receive = _refused_receive


def _same(given: str, expected: str) -> bool:
    """Constant-time comparison that also accepts non-ASCII input (it just never matches)."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode())


def _headers(scope: Scope) -> dict[str, str]:
    raw: list[tuple[bytes, bytes]] = scope.get("headers", [])
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in raw}


def _cookies(headers: dict[str, str]) -> dict[str, str]:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # a malformed Cookie header is treated as no cookie
        return {}
    return {k: m.value for k, m in jar.items()}


def _query_token(scope: Scope) -> str | None:
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
    return values[0] if values else None


def _same_origin(headers: dict[str, str]) -> bool:
    """``Origin`` (else ``Referer``) names the host the request was sent to."""
    host = headers.get("host", "")
    source = headers.get("origin") or headers.get("referer")
    if not source or source == "null" or not host:
        return False
    return urlsplit(source).netloc.lower() == host.lower()


def _api_refusal(headers: dict[str, str]) -> tuple[int, str, str] | None:
    origin = headers.get("origin")
    if origin is not None and urlsplit(origin).netloc.lower() != headers.get("host", "").lower():
        return 403, "csrf", "cross-origin API request refused"
    if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        return 415, "unsupported_media_type", "send the request body as application/json"
    return None


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _cookie_header(value: str, secure: bool) -> bytes:
    flags = "; Secure" if secure else ""
    return f"{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Strict{flags}".encode()


def _https(scope: Scope) -> bool:
    return bool(scope.get("scheme") == "https")


def _with_headers(send: Send, extra: list[tuple[bytes, bytes]]) -> Send:
    async def sending(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            replaced = {name for name, _ in extra if name != b"set-cookie"}
            kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in replaced]
            message["headers"] = [*kept, *extra]
        await send(message)

    return sending


async def _refuse(send: Send, status: int, kind: str, message: str) -> None:
    body = json.dumps({"error": {"kind": kind, "message": message}}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        _NO_STORE,
    ]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="toolfoundry"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _refuse_page(send: Send) -> None:
    body = (
        b"<!doctype html><title>toolfoundry: login</title>"
        b"<p>This review page needs the server's token. Open <code>/ui?token=TOKEN</code> once; "
        b"a session cookie keeps you in.</p>"
    )
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        _NO_STORE,
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
