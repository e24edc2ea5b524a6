"""A draft's fixture URLs against the fetch policy its calls will have.

A fixture answers a request in the tests; if the call-time policy (``foundry/call.py:
fetch_policy``, from the tool's capabilities and ``[fetch]``) would refuse that request, the
tool passes its tests, is approved, and then fails every real call with ``capability_denied``.
So create refuses such a draft, each fixture located, naming the ``[fetch]`` key that would
allow it. Host names are not resolved here (tests run with the network cut): an address is
judged when the URL names it literally, the rest at call time as always.
"""

from __future__ import annotations

from collections.abc import Iterable

from toolfoundry.forge.draft import Draft
from toolfoundry.forge.fixtures import Fixture
from toolfoundry.sandbox.host.fetch import FetchPolicy
from toolfoundry.sandbox.host.fetch_hints import allow_hint, http_hint, private_hint
from toolfoundry.sandbox.host.netguard import FetchError, ParsedURL, parse_url
from toolfoundry.spec import Problem


def fixture_refusals(draft: Draft, policy: FetchPolicy | None) -> list[Problem]:
    """One problem per fixture whose request a call under ``policy`` would refuse."""
    return unreachable(draft.located_fixtures(), policy)


def unreachable(
    located: Iterable[tuple[str, Fixture]], policy: FetchPolicy | None
) -> list[Problem]:
    """:func:`fixture_refusals` of fixtures located by the caller (``tools verify`` checks a
    stored suite against today's ``[fetch]``: a tool tested on requests no call can make)."""
    problems: list[Problem] = []
    for path, fixture in located:
        try:
            url = parse_url(fixture.url)
        except FetchError:
            continue  # the parser has located why already
        reasons = _refusals(url, policy)
        if reasons:
            problems.append(
                Problem(
                    path,
                    f"a call could never fetch this URL, so the tool would pass its tests and "
                    f"then fail: {'; '.join(reasons)}",
                )
            )
    return problems


def _refusals(url: ParsedURL, policy: FetchPolicy | None) -> list[str]:
    if policy is None:  # none of the tool's hosts is in [fetch] allow: fetch is denied outright
        return [allow_hint(url.authority)]
    reasons: list[str] = []
    if url.scheme == "http" and not policy.http_allowed(url.host):
        reasons.append(http_hint(url.host, url.authority))
    if not policy.host_allowed(url):
        reasons.append(allow_hint(url.authority))
    problem = policy.address_refusal(url.host, url.ip) if url.ip is not None else None
    if problem is not None:
        reasons.append(f"{url.host} is {problem}: {private_hint(url.host)}")
    return reasons
