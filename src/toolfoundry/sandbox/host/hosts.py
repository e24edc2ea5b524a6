"""Host patterns: ``api.example.com``, ``*.example.com`` (dot boundary), ``host:8443``.

The one parser and matcher of the patterns in ``capabilities.network``, the fetch allowlists
(``[fetch] allow``, ``allow_http``, ``allow_private``) and the approval policy's
``auto_approve_*`` lists; the forge, the foundry and the fetch policy all use it.

- A pattern without a port means port 443 (https) only; a plain-http service names its port
  (``localhost:8000``, ``intranet.example:80``), for a fixture URL as for a real request.
- Hosts are canonical: percent-decoded, IDNA/UTS 46 mapped and punycoded, lowercase, without a
  trailing dot, so ``Bücher.example`` and ``xn--bcher-kva.example`` are the same host.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from toolfoundry.sandbox.host.netguard import FetchError, canonical_host_and_ip, parse_port

HTTPS_PORT = 443
_NOT_IN_A_PATTERN = ("://", "/", "@", "?", "#", " ", "\t", "\r", "\n")


class HostPatternError(ValueError):
    """Text that is not a host pattern; the message says why, for a person or a model."""


@dataclass(frozen=True)
class HostPattern:
    """One host pattern: a canonical host, whether it is a ``*.`` wildcard, and a port.

    Attributes:
        host: canonical host (ASCII name, dotted-quad IPv4 or compressed IPv6, no brackets);
            for a wildcard, the suffix after ``*.``.
        wildcard: ``*.suffix``: any name ending in ``.suffix`` (not ``suffix`` itself).
        port: the named port; None means :data:`HTTPS_PORT`.
    """

    host: str
    wildcard: bool = False
    port: int | None = None

    @classmethod
    def parse(cls, text: object) -> HostPattern:
        """Parse and canonicalise one pattern.

        Raises:
            HostPatternError: when ``text`` is not a host pattern.
        """
        if not isinstance(text, str) or not text.strip():
            raise HostPatternError(f"host pattern must be a non-empty string, got {text!r}")
        if any(mark in text for mark in _NOT_IN_A_PATTERN):
            raise HostPatternError(
                f"{text!r} is not a host pattern: give a bare host such as 'api.example.com' "
                "(no scheme, path or user; for plain http, allow the host in [fetch] allow_http)"
            )
        wildcard = text.startswith("*.")
        body = text[2:] if wildcard else text
        port: int | None = None
        try:
            if body.startswith("[") and "]:" in body:
                body, port_text = body.rsplit(":", 1)
                port = parse_port(port_text)
            elif not body.startswith("[") and body.count(":") == 1:
                body, port_text = body.split(":")
                port = parse_port(port_text)
            ip, host = canonical_host_and_ip(body)
        except FetchError as exc:
            raise HostPatternError(
                f"{text!r} is not a host or a '*.suffix' wildcard: {exc.message}"
            ) from None
        if "*" in host or (wildcard and ip is not None):
            raise HostPatternError(
                f"{text!r} is not a host or a '*.suffix' wildcard: only a leading '*.' before "
                "a domain name is allowed"
            )
        return cls(host=host, wildcard=wildcard, port=port)

    @property
    def effective_port(self) -> int:
        """The port this pattern allows (443 when it names none)."""
        return HTTPS_PORT if self.port is None else self.port

    def matches_host(self, host: str) -> bool:
        """True when the canonical ``host`` fits this pattern, whatever the port."""
        if self.wildcard:
            return host.endswith("." + self.host)
        return host == self.host

    def matches(self, host: str, port: int | None = None) -> bool:
        """True when the canonical ``host`` and ``port`` fit; port None checks the host only."""
        return self.matches_host(host) and (port is None or port == self.effective_port)

    def covers(self, other: HostPattern) -> bool:
        """True when every host and port ``other`` matches, this pattern matches too."""
        if self.effective_port != other.effective_port:
            return False
        if not self.wildcard:
            return not other.wildcard and other.host == self.host
        # *.example.com covers *.example.com, *.a.example.com and a.example.com
        return (other.wildcard and other.host == self.host) or self.matches_host(other.host)

    def __str__(self) -> str:
        text = ("*." if self.wildcard else "") + self.host
        if ":" in self.host:
            text = f"[{text}]"
        return text if self.port is None else f"{text}:{self.port}"


def pattern_problem(text: object) -> str | None:
    """Why ``text`` is not a host pattern, or None when it is one."""
    try:
        HostPattern.parse(text)
    except HostPatternError as exc:
        return str(exc)
    return None


def pattern_covered(requested: str, allowed: Iterable[str]) -> bool:
    """True when one of the ``allowed`` patterns covers the ``requested`` pattern.

    Patterns that do not parse cover nothing and are covered by nothing.
    """
    try:
        wanted = HostPattern.parse(requested)
    except HostPatternError:
        return False
    for entry in allowed:
        try:
            if HostPattern.parse(entry).covers(wanted):
                return True
        except HostPatternError:
            continue
    return False
