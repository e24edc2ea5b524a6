"""Credentials the host adds to outgoing fetches, so secrets never enter the sandbox.

A :class:`Credential` binds one exact host (and optionally a port) to one header whose value is
read at send time from an environment variable or a secret store. The script never sees the
value: the host strips any script-supplied header of that name, adds its own after every policy
check, and redacts every covered form of the value from what comes back (status text, response
headers, body, error messages, logs: :mod:`~toolfoundry.sandbox.host.redaction`).

:func:`read_secret` is the one place a credential's value is read, for ``[[fetch.credentials]]``
and ``[[upstream.credentials]]`` alike: ``env = "VAR"`` names an environment variable, ``secret
= "KEY"`` a key of the secret store (never the value itself). The store is the function a
program gives ``Foundry.open(..., secret_store=fn)``, else, when ``TOOLFOUNDRY_SECRETS_DIR`` is
set, that directory's file named KEY (:func:`directory_store`: Docker's ``/run/secrets``,
systemd's ``$CREDENTIALS_DIRECTORY``).
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


SECRETS_DIR_VARIABLE = "TOOLFOUNDRY_SECRETS_DIR"
_SECRET_KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


class CredentialError(ValueError):
    """A credential binding is malformed (bad host, header name or source)."""


class SecretUnset(ValueError):
    """A credential's value cannot be read now.

    Attributes:
        source: where it is read from (``environment variable X``, ``secret 'KEY'``).
        problem: ``no_store`` (a secret key and no store), ``empty`` (unset or empty) or
            ``invalid`` (holds a line break or NUL: it could split a header).
    """

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.source, self.problem = source, problem


def source_of(env: str | None, secret: str | None) -> str:
    """Where a credential's value is read from, as a message names it (never the value)."""
    return f"environment variable {env}" if env is not None else f"secret {secret!r}"


def read_secret(env: str | None, secret: str | None, store: SecretStore | None) -> str:
    """A credential's value, read now from the environment variable ``env`` or the key
    ``secret`` of ``store`` (exactly one is given).

    Raises:
        SecretUnset: there is no store for a secret key, the value is unset or empty, or it
            holds a line break or NUL.
    """
    source = source_of(env, secret)
    if env is not None:
        found = os.environ.get(env)
    elif store is None:
        raise SecretUnset(source, "no_store")
    else:
        found = store(secret or "")
    if not found:
        raise SecretUnset(source, "empty")
    if any(c in found for c in "\r\n\0"):
        raise SecretUnset(source, "invalid")
    return found


def directory_store(directory: str | os.PathLike[str]) -> SecretStore:
    """A secret store reading the key KEY from the file ``directory/KEY`` (one trailing line
    break dropped), read at each lookup so a rotated file is used by the next connection or
    request; None for a key that is not a plain file name or has no file."""
    root = os.fspath(directory)

    def lookup(key: str) -> str | None:
        if not _SECRET_KEY.fullmatch(key):
            return None
        try:
            with open(os.path.join(root, key), encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            return None
        return text[:-1] if text.endswith("\n") else text

    return lookup


def environment_store() -> SecretStore | None:
    """The secret store ``TOOLFOUNDRY_SECRETS_DIR`` names (None when it is unset or empty)."""
    directory = os.environ.get(SECRETS_DIR_VARIABLE)
    return directory_store(directory) if directory else None


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
        try:  # a capability may name a port (``127.0.0.1:8443``): the binding's, if it has one
            name, port = _split_host_port(host)
        except CredentialError:
            return False
        return self._host == name and (port is None or self._port in (None, port))

    def source(self) -> str:
        """Where the value is read from, as a message names it (never the value)."""
        return source_of(self.env, self.secret)

    def applies_to(self, host: str, port: int) -> bool:
        """True for the exact canonical host (and port, when the binding names one)."""
        return self._host == host and self._port in (None, port)

    def value(self, secret_store: SecretStore | None) -> str:
        """Read the secret now.

        Raises:
            FetchError: ``capability_denied`` when the value is missing or unusable; the
                message names the source (variable or key) and never the value.
        """
        try:
            return read_secret(self.env, self.secret, secret_store)
        except SecretUnset as exc:
            if exc.problem == "no_store":
                why = f"credential for {self.host} needs a secret store, none is configured"
            elif exc.problem == "empty":
                why = f"credential for {self.host} is not set ({exc.source} is empty)"
            else:
                why = f"credential for {self.host} ({exc.source}) has an invalid value"
            raise FetchError("capability_denied", why) from None


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
