"""Host patterns of the network capability (``api.example.com``, ``*.example.com``, ``host:8443``).

The sandbox's fetch policy is the real gate; the forge only needs to tell whether a fixture URL
or a requested pattern falls inside a set of patterns, with the same dot-boundary wildcard rule.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_LABELS = re.compile(
    r"^(\*\.)?([a-z0-9_]([a-z0-9_-]*[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$"
)
_DEFAULT_PORTS = {"https": 443, "http": 80}


def split_pattern(pattern: str) -> tuple[str, int | None]:
    """Split ``host[:port]`` into a lowercased host and an optional port."""
    host, port = pattern.strip().lower(), None
    if host.startswith("["):
        end = host.find("]")
        rest = host[end + 1 :]
        host = host[: end + 1]
        if rest.startswith(":") and rest[1:].isdigit():
            port = int(rest[1:])
        return host, port
    if host.count(":") == 1:
        host, _, tail = host.partition(":")
        port = int(tail) if tail.isdigit() else -1
    return host.rstrip("."), port


def pattern_problem(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid host pattern, or None when it is."""
    if any(c in pattern for c in "/@ \t\r\n?#") or "://" in pattern:
        return f"{pattern!r} is not a host pattern: give a bare host such as 'api.example.com'"
    host, port = split_pattern(pattern)
    if port is not None and not 0 < port < 65536:
        return f"{pattern!r} has an invalid port"
    if host.startswith("["):
        return None
    try:
        ascii_host = host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return f"{pattern!r} is not a valid host name"
    if not _LABELS.match(ascii_host) or ascii_host in {"*", "*."}:
        return f"{pattern!r} is not a host or a '*.suffix' wildcard"
    return None


def _host_match(host: str, pattern_host: str) -> bool:
    if pattern_host.startswith("*."):
        return host.endswith(pattern_host[1:])
    return host == pattern_host


def url_allowed(url: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """True when ``url``'s host and port fall inside one of ``patterns``."""
    try:
        parts = urlsplit(url)
        host = (parts.hostname or "").rstrip(".").lower()
        port = parts.port
    except ValueError:
        return False
    if not host:
        return False
    default = _DEFAULT_PORTS.get(parts.scheme)
    for pattern in patterns:
        p_host, p_port = split_pattern(pattern)
        port_ok = port in (None, default) if p_port is None else port == p_port
        if port_ok and _host_match(host, p_host.strip("[]")):
            return True
    return False


def pattern_covered(requested: str, allowed: tuple[str, ...] | list[str]) -> bool:
    """True when every host ``requested`` may match is also matched by one of ``allowed``."""
    r_host, r_port = split_pattern(requested)
    for pattern in allowed:
        a_host, a_port = split_pattern(pattern)
        if r_port == a_port and _host_match(r_host, a_host):
            return True
    return False
