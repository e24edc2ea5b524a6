"""Credentials the host adds to outgoing fetches, so secrets never enter the sandbox.

A :class:`Credential` binds one exact host (and optionally a port) to one header whose value is
read at send time from an environment variable or a secret store. The script never sees the
value: the host strips any script-supplied header of that name, adds its own after every policy
check, and redacts every covered form of the value from what comes back (status text, response
headers, body, error messages, logs: :mod:`~toolfoundry.sandbox.host.redaction`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from toolfoundry.sandbox.host.netguard import FetchError, canonical_host, parse_port

SecretStore = Callable[[str], str | None]
"""Looks up a secret by key; None when the store has no such secret."""

HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Headers the host owns on every request; a credential cannot be any of them either.
RESERVED_HEADERS = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "trailers",
        "transfer-encoding",
        "upgrade",
        "forwarded",
        "content-length",
        "expect",
    }
)


class CredentialError(ValueError):
    """A credential binding is malformed (bad host, header name or source)."""


@dataclass(frozen=True)
class Credential:
    """A header the host adds for one exact host.

    Attributes:
        host: exact host name (no wildcards), optionally ``host:port``; without a port the
            credential applies on any allowed port of that host.
        header: header name, e.g. ``Authorization``; its value is the whole secret, e.g.
            ``Bearer abc...``.
        env: environment variable holding the value (read at send time).
        secret: key in the policy's secret store (read at send time).
    """

    host: str
    header: str
    env: str | None = None
    secret: str | None = None
    _host: str = field(init=False, repr=False, compare=False, default="")
    _port: int | None = field(init=False, repr=False, compare=False, default=None)

    def __post_init__(self) -> None:
        if (self.env is None) == (self.secret is None):
            raise CredentialError(
                f"credential for {self.host!r} needs exactly one of env= or secret="
            )
        if self.env is not None and not _ENV_NAME.fullmatch(self.env):
            raise CredentialError(f"invalid environment variable name {self.env!r}")
        if self.secret is not None and not self.secret:
            raise CredentialError("secret key must not be empty")
        if not HEADER_NAME.fullmatch(self.header):
            raise CredentialError(f"invalid header name {self.header!r}")
        lowered = self.header.lower()
        if lowered in RESERVED_HEADERS or lowered.startswith(("proxy-", "x-forwarded-")):
            raise CredentialError(f"header {self.header!r} is reserved for the host")
        host, port = _split_host_port(self.host)
        object.__setattr__(self, "_host", host)
        object.__setattr__(self, "_port", port)

    @classmethod
    def parse(cls, text: str) -> Credential:
        """Parse the CLI form ``HOST[:PORT]:HEADER:ENV_VAR``.

        Raises:
            CredentialError: when the text does not have that form.
        """
        parts = text.rsplit(":", 2)
        if len(parts) != 3 or not all(parts):
            raise CredentialError(
                f"credential {text!r} must look like HOST:HEADER:ENV_VAR "
                "(e.g. api.example.com:Authorization:EXAMPLE_TOKEN)"
            )
        host, header, env = parts
        return cls(host=host, header=header, env=env)

    def binds(self, host: str) -> bool:
        """True when it is bound to ``host`` (on some port): what a reviewer is told about."""
        try:
            return self._host == canonical_host(host)
        except FetchError:
            return False

    def source(self) -> str:
        """Where the value is read from, as a message names it (never the value)."""
        return f"environment variable {self.env}" if self.env else f"secret {self.secret!r}"

    def applies_to(self, host: str, port: int) -> bool:
        """True for the exact canonical host (and port, when the binding names one)."""
        return self._host == host and self._port in (None, port)

    def value(self, secret_store: SecretStore | None) -> str:
        """Read the secret now.

        Raises:
            FetchError: ``capability_denied`` when the value is missing or unusable; the
                message names the source (variable or key) and never the value.
        """
        if self.env is not None:
            found = os.environ.get(self.env)
            source = f"environment variable {self.env}"
        else:
            assert self.secret is not None
            if secret_store is None:
                raise FetchError(
                    "capability_denied",
                    f"credential for {self.host} needs a secret store, none is configured",
                )
            found = secret_store(self.secret)
            source = f"secret {self.secret!r}"
        if not found:
            raise FetchError(
                "capability_denied", f"credential for {self.host} is not set ({source} is empty)"
            )
        if any(c in found for c in "\r\n\0"):
            raise FetchError(
                "capability_denied", f"credential for {self.host} ({source}) has an invalid value"
            )
        return found


def _split_host_port(text: str) -> tuple[str, int | None]:
    if "*" in text:
        raise CredentialError(f"credential host {text!r} must be an exact host, not a wildcard")
    port: int | None = None
    host = text
    if text.startswith("["):
        close = text.find("]")
        if close != -1 and text[close + 1 :].startswith(":"):
            host, port_text = text[: close + 1], text[close + 2 :]
            port = _port(port_text, text)
    elif text.count(":") == 1:
        host, port_text = text.split(":")
        port = _port(port_text, text)
    try:
        return canonical_host(host), port
    except FetchError as exc:
        raise CredentialError(f"credential host {text!r}: {exc.message}") from None


def _port(text: str, whole: str) -> int:
    try:
        return parse_port(text)
    except FetchError as exc:
        raise CredentialError(f"credential host {whole!r}: {exc.message}") from None
