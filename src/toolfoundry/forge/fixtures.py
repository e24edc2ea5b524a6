"""Fetch fixtures: the canned HTTP answers a draft's tests get instead of the network.

Parsed straight into :class:`Fixture` (every problem located by its JSON path), merged in
layers (a case's own over the draft's; in the regression gate the previous version's over the
new draft's), and checked against the draft's ``capabilities.network``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from toolfoundry.forge.draft_fields import key_path
from toolfoundry.forge.draft_json import FIXTURE_FIELDS, FixtureJson
from toolfoundry.forge.tool_fixtures import is_tool_fixture
from toolfoundry.sandbox.host.hosts import HostPattern
from toolfoundry.sandbox.host.netguard import FetchError, parse_url
from toolfoundry.spec import Capabilities, Problem

FETCH_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


@dataclass(frozen=True)
class Fixture:
    """A canned HTTP answer the host's fetch gives during tests instead of the network."""

    url: str
    method: str = "GET"
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""

    @property
    def key(self) -> tuple[str, str]:
        """What a fixture answers: (method, url)."""
        return (self.method, self.url)

    def to_dict(self) -> FixtureJson:
        """The fixture's draft form ``{"url", "method", "status", "headers", "body"}``."""
        return {
            "url": self.url,
            "method": self.method,
            "status": self.status,
            "headers": dict(self.headers),
            "body": self.body,
        }


def merge_fixtures(*layers: Iterable[Fixture]) -> tuple[Fixture, ...]:
    """Merge fixture layers; for the same (method, url) the earlier layer wins."""
    seen: dict[tuple[str, str], Fixture] = {}
    for layer in layers:
        for fixture in layer:
            seen.setdefault(fixture.key, fixture)
    return tuple(seen.values())


def parse_fixtures(
    value: object, path: str, problems: list[Problem], *, tools: bool = False
) -> tuple[Fixture, ...]:
    """A list of fetch fixtures; each malformed one is left out and its problems recorded.

    With ``tools`` (a test case's list), the entries naming a ``tool`` are tool fixtures,
    left to ``tool_fixtures.parse_tool_fixtures``; elsewhere one is refused, located.
    """
    if value is None:
        return ()
    if not isinstance(value, list):
        problems.append(Problem(path, "must be a list of {url, method, status, headers, body}"))
        return ()
    parsed: list[Fixture | None] = []
    for i, raw in enumerate(value):
        if is_tool_fixture(raw):
            if not tools:
                message = "a tool fixture answers one test's inner call: put it in its fixtures"
                problems.append(Problem(f"{path}[{i}]", message))
            continue
        parsed.append(_fixture(raw, f"{path}[{i}]", problems))
    return tuple(f for f in parsed if f is not None)


def _fixture(raw: object, path: str, problems: list[Problem]) -> Fixture | None:
    if not isinstance(raw, Mapping):
        problems.append(Problem(path, "a fixture must be an object with at least 'url'"))
        return None
    before = len(problems)
    for key in raw:
        if key not in FIXTURE_FIELDS:
            problems.append(
                Problem(
                    key_path(path, str(key)),
                    f"unknown field; a fixture has: {', '.join(FIXTURE_FIELDS)}",
                )
            )
    url = raw.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://[^/?#]+", url):
        problems.append(Problem(f"{path}.url", "must be an absolute http(s) URL"))
    else:
        try:
            parse_url(url)
        except FetchError as exc:
            problems.append(Problem(f"{path}.url", exc.message))
    method = raw.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in FETCH_METHODS:
        problems.append(Problem(f"{path}.method", f"must be one of {', '.join(FETCH_METHODS)}"))
    status = raw.get("status", 200)
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        problems.append(Problem(f"{path}.status", "must be an HTTP status code (100-599)"))
    headers = raw.get("headers", {})
    if not isinstance(headers, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        problems.append(Problem(f"{path}.headers", "must be an object of string header values"))
        headers = {}
    body = raw.get("body", "")
    if not isinstance(body, str):
        try:
            body = json.dumps(body, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            problems.append(Problem(f"{path}.body", "must be a string or a JSON value"))
        if not any(k.lower() == "content-type" for k in headers):
            headers = {**headers, "content-type": "application/json"}
    if len(problems) > before:
        return None
    return Fixture(
        url=str(url),
        method=str(method).upper(),
        status=int(status),
        headers=tuple((str(k), str(v)) for k, v in headers.items()),
        body=str(body),
    )


def located_fixtures(
    fixtures: tuple[Fixture, ...], case_fixtures: Iterable[tuple[Fixture, ...]]
) -> list[tuple[str, Fixture]]:
    """Every fixture of a draft with the JSON path of its URL (``$.fixtures[0].url``,
    ``$.tests[2].fixtures[0].url``), the draft's own first; ``case_fixtures`` are each test
    case's own, in the order of the tests."""
    located = [(f"$.fixtures[{i}].url", f) for i, f in enumerate(fixtures)]
    for t, own in enumerate(case_fixtures):
        located += [(f"$.tests[{t}].fixtures[{i}].url", f) for i, f in enumerate(own)]
    return located


def check_fixture_hosts(
    located: list[tuple[str, Fixture]], capabilities: Capabilities, problems: list[Problem]
) -> None:
    """Record each fixture whose host ``capabilities.network`` does not cover: the tool could
    never fetch it outside tests."""
    patterns = [HostPattern.parse(p) for p in capabilities.network]  # already checked
    for path, fixture in located:
        try:
            url = parse_url(fixture.url)
        except FetchError:
            continue  # parse_fixtures has located why
        if not any(p.matches(url.host, url.port) for p in patterns):
            problems.append(
                Problem(
                    path,
                    "this URL's host is not in capabilities.network, so the tool could never "
                    "fetch it outside tests; add the host there or drop the fixture",
                )
            )
