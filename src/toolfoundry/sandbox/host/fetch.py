"""The fetch capability's policy: which hosts, ports, schemes and addresses a tool may reach.

``FetchPolicy`` is a :class:`~toolfoundry.sandbox.host.protocols.FetchProvider`: for each tool
call the engine asks it for a handler, a :class:`~.fetch_session.FetchSession` that enforces
this policy request by request.
"""

from __future__ import annotations

import ipaddress
import ssl
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolfoundry.sandbox.host.credentials import Credential, CredentialError, SecretStore
from toolfoundry.sandbox.host.fetch_hints import http_hint, private_hint
from toolfoundry.sandbox.host.fetch_session import FetchRecord, FetchSession, default_ssl_context
from toolfoundry.sandbox.host.hosts import HostPattern, HostPatternError
from toolfoundry.sandbox.host.netguard import (
    FetchError,
    IPAddress,
    ParsedURL,
    Resolver,
    address_problem,
    denied,
    effective_address,
    local_addresses,
    system_resolver,
)
from toolfoundry.spec.limits import FETCH_REQUESTS

# FetchRecord and default_ssl_context live with the session, HostPattern in hosts.py (the
# forge's patterns too); all importable from here as before
__all__ = [
    "Audit",
    "FetchPolicy",
    "FetchPolicyError",
    "FetchRecord",
    "FetchSession",
    "HostPattern",
    "default_ssl_context",
]


class FetchPolicyError(ValueError):
    """A fetch policy (constructor, CLI flags or ``[fetch]`` table) is malformed."""


Audit = Callable[[FetchRecord], None]


@dataclass(frozen=True)
class FetchPolicy:
    """Which hosts a tool may fetch, how, and within which limits (a FetchProvider).

    Attributes:
        allow: host patterns (``api.example.com``, ``*.example.com``, ``host:8443``).
        allow_http: host patterns for which plain ``http`` is also allowed.
        allow_private: host patterns, IPs or CIDRs whose private, loopback or otherwise
            non-public addresses may be reached (tests, on-prem services).
        credentials: headers the host adds for exact hosts.
        connect_timeout: seconds for TCP connect and TLS handshake.
        read_timeout: seconds of silence allowed while sending or receiving.
        total_timeout: seconds for one request's HTTP exchange, connect to last byte (always
            also within the call's deadline).
        dns_timeout: seconds for resolving one host.
        max_response_bytes: decoded response body cap; larger bodies fail the request.
        max_request_bytes: request body cap.
        max_requests: requests allowed per tool call.
        resolver: host name -> IP strings; defaults to the system resolver (getaddrinfo).
        audit: receives one :class:`FetchRecord` per request, allowed or not.
        secret_store: looks up ``Credential.secret`` keys.
        ssl_context: TLS settings; defaults to the system trust store with verification on.
        from_flags: made from ``js run``'s flags (:meth:`from_cli`): refusals name the flag
            that allows the request, not the ``[fetch]`` key.
    """

    allow: tuple[str, ...] = ()
    allow_http: tuple[str, ...] = ()
    allow_private: tuple[str, ...] = ()
    credentials: tuple[Credential, ...] = ()
    connect_timeout: float = 5.0
    read_timeout: float = 10.0
    total_timeout: float = 30.0
    dns_timeout: float = 2.0
    max_response_bytes: int = 5 * 1024 * 1024
    max_request_bytes: int = 1024 * 1024
    max_requests: int = FETCH_REQUESTS
    resolver: Resolver = system_resolver
    audit: Audit | None = None
    secret_store: SecretStore | None = None
    ssl_context: ssl.SSLContext | None = field(default=None, compare=False)
    from_flags: bool = field(default=False, compare=False)
    _allow: tuple[HostPattern, ...] = field(init=False, repr=False, compare=False, default=())
    _http: tuple[HostPattern, ...] = field(init=False, repr=False, compare=False, default=())
    _private_hosts: tuple[HostPattern, ...] = field(
        init=False, repr=False, compare=False, default=()
    )
    _private_nets: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = field(
        init=False, repr=False, compare=False, default=()
    )

    def __post_init__(self) -> None:
        for name in ("allow", "allow_http", "allow_private", "credentials"):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, Iterable):
                raise FetchPolicyError(f"FetchPolicy.{name} must be a tuple, got {value!r}")
            object.__setattr__(self, name, tuple(value))
        for name in ("connect_timeout", "read_timeout", "total_timeout", "dns_timeout"):
            if not isinstance(getattr(self, name), int | float) or getattr(self, name) <= 0:
                raise FetchPolicyError(f"FetchPolicy.{name} must be a positive number")
        for name in ("max_response_bytes", "max_request_bytes", "max_requests"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
                raise FetchPolicyError(f"FetchPolicy.{name} must be a non-negative integer")
        if not all(isinstance(c, Credential) for c in self.credentials):
            raise FetchPolicyError("FetchPolicy.credentials must hold Credential objects")
        object.__setattr__(self, "_allow", _patterns(self.allow, "allow"))
        object.__setattr__(self, "_http", _patterns(self.allow_http, "allow_http"))
        hosts: list[HostPattern] = []
        nets: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for entry in self.allow_private:
            net = _network(entry)
            if net is not None:
                nets.append(net)
            else:
                hosts += _patterns((entry,), "allow_private")
        object.__setattr__(self, "_private_hosts", tuple(hosts))
        object.__setattr__(self, "_private_nets", tuple(nets))

    # --- construction from the CLI and toolfoundry.toml ---------------------------------------

    @classmethod
    def from_cli(
        cls,
        allow_hosts: Sequence[str] = (),
        allow_private: Sequence[str] = (),
        credentials: Sequence[str] = (),
        **options: Any,
    ) -> FetchPolicy:
        """Build a policy from ``--allow-host``, ``--allow-private`` and ``--credential`` values.

        ``--allow-host`` takes a host pattern; prefixing it with ``http://`` also allows plain
        http for it (``http://127.0.0.1:8000``). ``--credential`` takes
        ``HOST:HEADER:ENV_VAR``. Other keyword arguments are passed to the constructor.

        Raises:
            FetchPolicyError: on any malformed value, with a message fit for a usage error.
        """
        allow, http = _split_schemes(allow_hosts)
        try:
            creds = tuple(Credential.parse(text) for text in credentials)
        except CredentialError as exc:
            raise FetchPolicyError(str(exc)) from None
        return cls(
            allow=allow,
            allow_http=tuple(http) + tuple(options.pop("allow_http", ())),
            allow_private=tuple(allow_private),
            credentials=creds,
            from_flags=True,
            **options,
        )

    @classmethod
    def from_config(cls, table: Mapping[str, Any], **options: Any) -> FetchPolicy:
        """Build a policy from the ``[fetch]`` table of ``toolfoundry.toml``.

        Keys: ``allow``, ``allow_http``, ``allow_private`` (lists of strings; ``allow`` entries
        may carry an ``http://`` prefix), ``credentials`` (a list of ``{host, header, env}`` or
        ``{host, header, secret}`` tables, or ``HOST:HEADER:ENV_VAR`` strings), and the limits
        ``connect_timeout``, ``read_timeout``, ``total_timeout``, ``dns_timeout``,
        ``max_response_bytes``, ``max_request_bytes``, ``max_requests``. ``options`` supplies
        what a file cannot hold (``resolver``, ``audit``, ``secret_store``, ``ssl_context``).

        Raises:
            FetchPolicyError: on unknown keys or values of the wrong type.
        """
        if not isinstance(table, Mapping):
            raise FetchPolicyError("[fetch] must be a table")
        lists = ("allow", "allow_http", "allow_private")
        limits = (
            "connect_timeout",
            "read_timeout",
            "total_timeout",
            "dns_timeout",
            "max_response_bytes",
            "max_request_bytes",
            "max_requests",
        )
        unknown = sorted(set(table) - {*lists, *limits, "credentials"})
        if unknown:
            raise FetchPolicyError(
                f"unknown keys in [fetch]: {unknown}; known: {sorted({*lists, *limits})}"
                " and credentials"
            )
        for key in lists:
            value = table.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise FetchPolicyError(f"fetch.{key} must be a list of strings")
        allow, http = _split_schemes(table.get("allow", []))
        kwargs: dict[str, Any] = {key: table[key] for key in limits if key in table}
        for key, value in kwargs.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise FetchPolicyError(f"fetch.{key} must be a number")
        return cls(
            allow=allow,
            allow_http=tuple(http) + tuple(table.get("allow_http", [])),
            allow_private=tuple(table.get("allow_private", [])),
            credentials=_config_credentials(table.get("credentials", [])),
            **kwargs,
            **options,
        )

    # --- the provider ------------------------------------------------------------------------

    def handler(self, *, deadline: float, tool: str | None) -> FetchSession:
        """A handler for one tool call that must end by ``deadline`` (``time.monotonic()``)."""
        return FetchSession(self, deadline=deadline, tool=tool)

    def allows(self, url: ParsedURL) -> bool:
        """True when scheme, host and port of ``url`` pass the allowlist (no address check)."""
        try:
            self.check_url(url)
        except FetchError:
            return False
        return True

    def check_url(self, url: ParsedURL) -> None:
        """Refuse a URL whose scheme, host or port the allowlist does not cover.

        Raises:
            FetchError: ``capability_denied`` saying what is allowed instead.
        """
        if url.scheme == "http" and not self.http_allowed(url.host):
            raise denied(http_hint(url.host, url.authority, flags=self.from_flags))
        if not self.host_allowed(url):
            allowed = ", ".join(str(p) for p in self._allow[:10]) or "none"
            raise denied(
                f"{url.authority} (port {url.port}) is not in this tool's fetch allowlist; "
                f"allowed: {allowed}"
            )

    def http_allowed(self, host: str) -> bool:
        """True when ``allow_http`` lets plain http reach this canonical host."""
        return any(p.matches_host(host) for p in self._http)

    def host_allowed(self, url: ParsedURL) -> bool:
        """True when ``allow`` covers the URL's host and port (the scheme is not checked)."""
        return any(p.matches(url.host, url.port) for p in self._allow)

    def private_allowed(self, host: str, ip: IPAddress) -> bool:
        """True when ``allow_private`` covers this host name or address."""
        if any(p.matches_host(host) for p in self._private_hosts):
            return True
        reached = effective_address(ip)
        return any(ip in net or reached in net for net in self._private_nets)

    def address_refusal(self, host: str, ip: IPAddress) -> str | None:
        """What kind of non-public address ``ip`` is (``"loopback"``...) when ``allow_private``
        does not cover it, else None."""
        problem = address_problem(ip)
        if problem is None and effective_address(ip) in local_addresses():
            problem = "one of this machine's own addresses"
        if problem is None or self.private_allowed(host, ip):
            return None
        return problem

    def check_address(self, host: str, ip: IPAddress) -> None:
        """Refuse a non-public address unless ``allow_private`` covers it.

        Raises:
            FetchError: ``capability_denied`` naming the address class.
        """
        problem = self.address_refusal(host, ip)
        if problem is None:
            return
        where = f"address {ip}" if host == str(ip) else f"{host} resolves to {ip}, which"
        raise denied(f"{where} is {problem}: {private_hint(host, flags=self.from_flags)}")


def _patterns(entries: Iterable[str], key: str) -> tuple[HostPattern, ...]:
    try:
        return tuple(HostPattern.parse(entry) for entry in entries)
    except HostPatternError as exc:
        raise FetchPolicyError(f"{key}: {exc}") from None


def _network(entry: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network | None:
    text = entry[1:-1] if entry.startswith("[") and entry.endswith("]") else entry
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        if "/" in text:
            raise FetchPolicyError(f"allow_private entry {entry!r} is not a valid CIDR") from None
        return None  # a host pattern


def _split_schemes(entries: Iterable[str]) -> tuple[tuple[str, ...], list[str]]:
    allow: list[str] = []
    http: list[str] = []
    for entry in entries:
        if not isinstance(entry, str):
            raise FetchPolicyError(f"host pattern must be a string, got {entry!r}")
        lowered = entry.lower()
        if lowered.startswith("http://"):
            entry = entry[7:].rstrip("/")
            http.append(entry)
        elif lowered.startswith("https://"):
            entry = entry[8:].rstrip("/")
        elif "://" in entry:
            raise FetchPolicyError(f"host pattern {entry!r}: only http:// or https:// prefixes")
        allow.append(entry)
    return tuple(allow), http


def _config_credentials(value: object) -> tuple[Credential, ...]:
    if not isinstance(value, list):
        raise FetchPolicyError("fetch.credentials must be a list")
    out = []
    for index, item in enumerate(value):
        try:
            if isinstance(item, str):
                out.append(Credential.parse(item))
            elif isinstance(item, Mapping):
                extra = sorted(set(item) - {"host", "header", "env", "secret"})
                if extra:
                    raise CredentialError(f"unknown keys {extra}")
                out.append(Credential(**{str(k): v for k, v in item.items()}))
            else:
                raise CredentialError("must be a table or a HOST:HEADER:ENV_VAR string")
        except (CredentialError, TypeError) as exc:
            raise FetchPolicyError(f"fetch.credentials[{index}]: {exc}") from None
    return tuple(out)
