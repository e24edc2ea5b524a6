"""How to allow what the fetch policy refuses: the ``[fetch]`` keys of toolfoundry.toml, or,
for a policy made from ``toolfoundry js run``'s flags (``flags=True``), those flags.

One home for those hints: the sandbox's refusals at call time (``host/fetch.py``) and create's
refusal of a fixture no call could fetch (``foundry/fixture_reach.py``) both say them, so a
model or a person reading either learns the same fix.
"""

from __future__ import annotations

# The configuration file's name (config.py reads it; the hints name it).
CONFIG_FILE = "toolfoundry.toml"


def http_hint(host: str, authority: str, *, flags: bool = False) -> str:
    """Why plain http to ``host`` is refused, and the two ways out."""
    if flags:
        return (
            f"plain http to {host} is refused unless --allow-host names it with its scheme "
            f"(--allow-host http://{authority}), or use https"
        )
    return (
        f"plain http to {host} is refused unless [fetch] allow_http of {CONFIG_FILE} "
        f"lists it (add {authority!r} there), or use https"
    )


def allow_hint(authority: str) -> str:
    """``authority`` is outside ``[fetch] allow``."""
    return f"{authority} is not in [fetch] allow of {CONFIG_FILE} (add it there)"


def private_hint(host: str, *, flags: bool = False) -> str:
    """How a non-public address becomes reachable."""
    if flags:
        return f"it is reached only when --allow-private covers it (--allow-private {host})"
    return (
        f"calls reach such an address only when [fetch] allow_private of {CONFIG_FILE} "
        f"covers it (add {host!r} there)"
    )
