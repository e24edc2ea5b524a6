"""The fetch capability's handler for one tool call, enforcing a fetch policy.

The engine hands every ``fetch`` of the script to :meth:`FetchSession.handle`, which never
raises. The order of checks matters and is fixed: request shape, method, the single URL parse
(:mod:`netguard`), scheme, allowlist with port, headers, body, resolution within the deadline,
every resolved address, then a connection pinned to the checked address, credential headers
added last, the response streamed under a size cap, and everything that goes back to the script
(status text, header names and values, body, error messages) passed through the session's
:class:`~.redaction.Redactor`, which knows every credential value this session has sent.
"""

from __future__ import annotations

import base64
import functools
import logging
import ssl
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolfoundry.sandbox.host.credentials import Credential, SecretStore
from toolfoundry.sandbox.host.fetch_wire import METHODS, request_body, request_headers, send
from toolfoundry.sandbox.host.netguard import (
    FetchError,
    IPAddress,
    ParsedURL,
    Resolver,
    denied,
    parse_url,
    resolve,
)
from toolfoundry.sandbox.host.redaction import Redactor, redacting_library_logs

log = logging.getLogger("toolfoundry.sandbox.host.fetch")


@dataclass(frozen=True)
class FetchRecord:
    """One audited request: who asked, where to, and how it ended. Never holds secrets."""

    tool: str | None
    method: str | None
    host: str | None
    port: int | None
    address: str | None
    status: int | None
    error: str | None
    message: str | None
    bytes: int
    duration_ms: float
    credential: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dict(self.__dict__)


@functools.cache
def default_ssl_context() -> ssl.SSLContext:
    """System trust store with hostname verification; certifi when the system has none."""
    context = ssl.create_default_context()
    if not context.cert_store_stats().get("x509_ca"):
        import certifi

        context.load_verify_locations(certifi.where())
    return context


class SessionPolicy(Protocol):
    """What a session reads of its policy (``fetch.FetchPolicy`` is the one implementation).

    Declared here, beside its one reader, so that the session needs nothing from the module
    that builds sessions: ``fetch`` imports this module, never the other way round.
    """

    @property
    def credentials(self) -> Sequence[Credential]: ...
    @property
    def connect_timeout(self) -> float: ...
    @property
    def read_timeout(self) -> float: ...
    @property
    def total_timeout(self) -> float: ...
    @property
    def dns_timeout(self) -> float: ...
    @property
    def max_response_bytes(self) -> int: ...
    @property
    def max_request_bytes(self) -> int: ...
    @property
    def max_requests(self) -> int: ...
    @property
    def resolver(self) -> Resolver: ...
    @property
    def audit(self) -> Callable[[FetchRecord], None] | None: ...
    @property
    def secret_store(self) -> SecretStore | None: ...
    @property
    def ssl_context(self) -> ssl.SSLContext | None: ...

    def check_url(self, url: ParsedURL) -> None:
        """Raise ``FetchError`` when the scheme, host or port is not allowed."""

    def check_address(self, host: str, ip: IPAddress) -> None:
        """Raise ``FetchError`` when the resolved address may not be reached."""


class FetchSession:
    """The FetchHandler for one tool call: enforces the policy request by request."""

    def __init__(self, policy: SessionPolicy, *, deadline: float, tool: str | None) -> None:
        self._policy = policy
        self._deadline = deadline
        self._tool = tool
        self._count = 0
        self._lock = threading.Lock()
        # One redactor for the whole call: a value sent by one request is also redacted from
        # every later answer (a second request, another host, a Range of the same resource).
        self._redactor = Redactor()

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Answer one script request; never raises (see ``FetchHandler``)."""
        started = time.monotonic()
        trace = _Trace()
        redact = self._redactor.redact_text
        try:
            answer = self._handle(request, trace)
        except FetchError as exc:
            answer = {"error": {"kind": exc.kind, "message": redact(exc.message)}}
        except Exception as exc:  # a bug here must still not escape into the engine
            # The traceback is logged redacted: an exception's text may quote the secret.
            log.error("fetch handler failed: %s", redact("".join(traceback.format_exception(exc))))
            answer = {
                "error": {"kind": "runtime_error", "message": redact(f"fetch failed: {exc!r}")}
            }
        self._audit(trace, answer, started)
        return answer

    def _handle(self, request: Mapping[str, Any], trace: _Trace) -> dict[str, Any]:
        policy = self._policy
        with self._lock:
            self._count += 1
            count = self._count
        if not isinstance(request, Mapping):
            raise FetchError("runtime_error", "fetch request must be an object")
        method = request.get("method", "GET")
        if not isinstance(method, str) or method.upper() not in METHODS:
            raise denied(f"method {str(method)[:20]!r} is not allowed; allowed: {list(METHODS)}")
        trace.method = method = method.upper()
        url = parse_url(request.get("url"))
        trace.host, trace.port = url.host, url.port
        if count > policy.max_requests:
            raise denied(f"this call already made {policy.max_requests} requests (the limit)")
        policy.check_url(url)
        credential = next((c for c in policy.credentials if c.applies_to(url.host, url.port)), None)
        headers = request_headers(request.get("headers", []), url, credential)
        body = request_body(request.get("body"), method, policy.max_request_bytes)
        if body is not None or method in ("POST", "PUT", "PATCH"):
            headers.append(("Content-Length", str(len(body or b""))))
        if url.ip is not None:
            addresses = [url.ip]
        else:
            budget = min(policy.dns_timeout, self._deadline - time.monotonic())
            if budget <= 0:
                raise FetchError("timeout", "the call's time budget is spent")
            addresses = resolve(policy.resolver, url.host, budget)
        for ip in addresses:
            policy.check_address(url.host, ip)
        pinned = addresses[0]
        trace.address = str(pinned)
        if credential is not None:
            secret = credential.value(policy.secret_store)
            trace.credential = True
            with self._lock:
                self._redactor.add(secret)
            headers.append((credential.header, secret))
        request_deadline = min(self._deadline, time.monotonic() + policy.total_timeout)
        with redacting_library_logs(self._redactor):
            reply = send(
                url,
                pinned,
                method,
                headers,
                body,
                deadline=request_deadline,
                connect_timeout=policy.connect_timeout,
                read_timeout=policy.read_timeout,
                max_bytes=policy.max_response_bytes,
                ssl_context=self._ssl_context(url),
            )
        trace.status, trace.bytes = reply.status, len(reply.body)
        redactor = self._redactor
        # A header with a secret in its name or value is dropped whole rather than edited.
        response_headers = [
            [k, v]
            for k, v in reply.headers
            if not (redactor.holds_secret(k) or redactor.holds_secret(v))
        ]
        return {
            "status": reply.status,
            "statusText": redactor.redact_text(reply.reason),
            "headers": response_headers,
            "body": base64.b64encode(redactor.redact(reply.body)).decode("ascii"),
            "url": str(url),
        }

    def _ssl_context(self, url: ParsedURL) -> ssl.SSLContext | None:
        if url.scheme != "https":
            return None
        return self._policy.ssl_context or default_ssl_context()

    def _audit(self, trace: _Trace, answer: Mapping[str, Any], started: float) -> None:
        error = answer.get("error")
        record = FetchRecord(
            tool=self._tool,
            method=trace.method,
            host=trace.host,
            port=trace.port,
            address=trace.address,
            status=trace.status,
            error=error["kind"] if error else None,
            message=error["message"] if error else None,
            bytes=trace.bytes,
            duration_ms=round((time.monotonic() - started) * 1000, 3),
            credential=trace.credential,
        )
        log.info("fetch %s", record)
        if self._policy.audit is not None:
            try:
                self._policy.audit(record)
            except Exception:  # an auditor's failure must not change the script's answer
                log.exception("fetch audit callback failed")


class _Trace:
    """What one request did so far, for the audit record."""

    def __init__(self) -> None:
        self.method: str | None = None
        self.host: str | None = None
        self.port: int | None = None
        self.address: str | None = None
        self.status: int | None = None
        self.bytes = 0
        self.credential = False
