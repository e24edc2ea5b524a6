"""Fetch answered from a draft's fixtures, so network tools are tested with the network cut.

``FixtureFetch`` never opens a socket. A request matches a fixture on method and on the URL after
the same canonicalisation real fetches get (:func:`~toolfoundry.sandbox.host.netguard.parse_url`),
so ``https://API.example.com./x#frag`` matches a fixture written as ``https://api.example.com/x``.
"""

from __future__ import annotations

import base64
import http
import json
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolfoundry.sandbox.host.fetch_wire import METHODS
from toolfoundry.sandbox.host.netguard import FetchError, denied, parse_url
from toolfoundry.spec.limits import FETCH_REQUESTS

_KEYS = {"url", "method", "status", "headers", "body"}


class FixtureError(ValueError):
    """A fixture list is malformed; the message names the fixture (``fixtures[2].url``)."""


@dataclass(frozen=True)
class Fixture:
    """One canned response."""

    method: str
    url: str
    status: int
    headers: tuple[tuple[str, str], ...]
    body: bytes

    def answer(self) -> dict[str, Any]:
        """The FetchHandler answer for this fixture."""
        try:
            reason = http.HTTPStatus(self.status).phrase
        except ValueError:
            reason = ""
        return {
            "status": self.status,
            "statusText": reason,
            "headers": [list(pair) for pair in self.headers],
            "body": base64.b64encode(self.body).decode("ascii"),
            "url": self.url,
        }


class FixtureFetch:
    """A FetchProvider answering from fixtures (``{"url", "method", "status", "headers", "body"}``).

    ``method`` defaults to GET, ``status`` to 200, ``headers`` to none (an object or a list of
    ``[name, value]`` pairs); ``body`` is text, or any other JSON value, which is serialised and
    gets ``Content-Type: application/json`` unless a content type is given.

    Args:
        fixtures: the draft's (or one test case's) fixture list.
        max_requests: requests allowed per call, as with a real policy.

    Raises:
        FixtureError: when a fixture is malformed.
    """

    def __init__(
        self, fixtures: Iterable[Mapping[str, Any]], *, max_requests: int = FETCH_REQUESTS
    ) -> None:
        if isinstance(fixtures, str | bytes | Mapping) or not isinstance(fixtures, Iterable):
            raise FixtureError("fixtures must be a list of objects")
        self.fixtures = tuple(_fixture(i, f) for i, f in enumerate(fixtures))
        self.max_requests = max_requests
        self._index: dict[tuple[str, str], Fixture] = {}
        for index, fixture in enumerate(self.fixtures):
            key = (fixture.method, fixture.url)
            if key in self._index:
                raise FixtureError(f"fixtures[{index}] repeats {fixture.method} {fixture.url}")
            self._index[key] = fixture

    def handler(self, *, deadline: float, tool: str | None) -> FixtureSession:
        """A handler for one call (the deadline is irrelevant: answers are immediate)."""
        return FixtureSession(self)

    def lookup(self, method: str, url: str) -> Fixture | None:
        """The fixture for a canonical method and URL, if any."""
        return self._index.get((method, url))


class FixtureSession:
    """The FetchHandler of :class:`FixtureFetch` for one call."""

    def __init__(self, provider: FixtureFetch) -> None:
        self._provider = provider
        self._count = 0
        self._lock = threading.Lock()

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Answer from the fixtures; unmatched requests are ``capability_denied``."""
        try:
            return self._handle(request)
        except FetchError as exc:
            return {"error": {"kind": exc.kind, "message": exc.message}}
        except Exception as exc:  # never raise into the engine
            return {"error": {"kind": "runtime_error", "message": f"fixture fetch failed: {exc!r}"}}

    def _handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._count += 1
            if self._count > self._provider.max_requests:
                raise denied(f"this call already made {self._provider.max_requests} requests")
        if not isinstance(request, Mapping):
            raise FetchError("runtime_error", "fetch request must be an object")
        method = request.get("method", "GET")
        if not isinstance(method, str) or method.upper() not in METHODS:
            raise denied(f"method {str(method)[:20]!r} is not allowed; allowed: {list(METHODS)}")
        url = str(parse_url(request.get("url")))
        found = self._provider.lookup(method.upper(), url)
        if found is None:
            raise denied(_unmatched(method.upper(), url, self._provider.fixtures))
        return found.answer()


def _unmatched(method: str, url: str, fixtures: Sequence[Fixture]) -> str:
    if not fixtures:
        return f"no fixture for {method} {url}: the network is cut in tests and none are defined"
    listed = "; ".join(f"{f.method} {f.url}" for f in fixtures[:20])
    more = f" (and {len(fixtures) - 20} more)" if len(fixtures) > 20 else ""
    return f"no fixture for {method} {url}; fixtures: {listed}{more}"


def _fixture(index: int, raw: object) -> Fixture:
    where = f"fixtures[{index}]"
    if not isinstance(raw, Mapping):
        raise FixtureError(f"{where} must be an object")
    unknown = sorted(set(raw) - _KEYS)
    if unknown:
        raise FixtureError(f"{where} has unknown keys {unknown}; known: {sorted(_KEYS)}")
    try:
        url = str(parse_url(raw.get("url")))
    except FetchError as exc:
        raise FixtureError(f"{where}.url: {exc.message}") from None
    method = raw.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in METHODS:
        raise FixtureError(f"{where}.method must be one of {list(METHODS)}")
    status = raw.get("status", 200)
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        raise FixtureError(f"{where}.status must be an integer from 100 to 599")
    headers = _headers(raw.get("headers", {}), where)
    body_value = raw.get("body", "")
    if body_value is None:
        body = b""
    elif isinstance(body_value, str):
        body = body_value.encode("utf-8")
    else:
        body = json.dumps(body_value).encode("utf-8")
        if not any(k.lower() == "content-type" for k, _ in headers):
            headers = (*headers, ("Content-Type", "application/json"))
    return Fixture(method=method.upper(), url=url, status=status, headers=headers, body=body)


def _headers(raw: object, where: str) -> tuple[tuple[str, str], ...]:
    pairs: list[Any]
    if isinstance(raw, Mapping):
        pairs = list(raw.items())
    elif isinstance(raw, list):
        pairs = raw
    else:
        raise FixtureError(f"{where}.headers must be an object or a list of [name, value] pairs")
    out = []
    for pair in pairs:
        if (
            not isinstance(pair, list | tuple)
            or len(pair) != 2
            or not all(isinstance(x, str) for x in pair)
        ):
            raise FixtureError(f"{where}.headers must map strings to strings")
        out.append((pair[0], pair[1]))
    return tuple(out)
