"""The ``[[upstream]]`` entries of toolfoundry.toml: which MCP servers toolfoundry reaches.

Kept beside the client it configures (``toolfoundry.config`` reads the file into these), so the
foundry's call path types them without the configuration module. Every problem is collected
into the caller's list, each with its key (``upstream[1].timeout_s must be ...``).

A credential is a value the host reads when it connects (from its environment or the secret
store) and hands to the upstream only: a stdio server gets it as an environment variable of its
process, an HTTP server as a request header. A snippet, a tool and a model never see it, and an
answer that carries it back has it redacted (``upstream/answers.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

from toolfoundry.sandbox.host.credentials import (
    HEADER_NAME,
    RESERVED_HEADERS,
    SecretStore,
    SecretUnset,
    read_secret,
    source_of,
)
from toolfoundry.spec.limits import Bound
from toolfoundry.spec.names import NAME_PATTERN

UPSTREAM_KEYS = (
    "name",
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "credentials",
    "timeout_s",
    "policy",
    "allow",
    "approve",
    "deny",
)
CREDENTIAL_KEYS = ("header", "variable", "env", "secret", "prefix")
# one upstream call (a snippet's, a tool's or a client's) waits at most this long; a snippet's
# call also ends at its own deadline, whichever comes first
TIMEOUT_BOUND = Bound(0, 3600, integer=False, low_open=True)
DEFAULT_TIMEOUT_S = 30.0
MAX_UPSTREAMS = 64
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAME = re.compile(NAME_PATTERN)


class UpstreamPolicy(StrEnum):
    """What an upstream's tools get when the per-tool lists say nothing of them."""

    # from each tool's annotations (upstream/policy.py)
    ANNOTATIONS = "annotations"
    ALLOW = "allow"
    APPROVE = "approve"
    DENY = "deny"


class MissingSecret(Exception):
    """A credential's value cannot be read; the message names its source, never a value."""


@dataclass(frozen=True)
class UpstreamCredential:
    """A secret handed to one upstream: ``header`` (an HTTP upstream's request header) or
    ``variable`` (an environment variable of a stdio upstream's process), read from ``env``
    (the host's environment) or ``secret`` (a key of the secret store) when connecting, with
    ``prefix`` before it (``"Bearer "``)."""

    header: str | None = None
    variable: str | None = None
    env: str | None = None
    secret: str | None = None
    prefix: str = ""

    def source(self) -> str:
        """Where the value is read from, as a message names it (never the value)."""
        return source_of(self.env, self.secret)

    def value(self, secret_store: SecretStore | None) -> str:
        """The value to hand over now (the prefix and the secret), read as a fetch
        credential's is (sandbox/host/credentials.py:read_secret).

        Raises:
            MissingSecret: no secret store for a ``secret`` key, the source is empty, or it
                holds a line break or NUL.
        """
        try:
            return self.prefix + read_secret(self.env, self.secret, secret_store)
        except SecretUnset as exc:
            why = {
                "no_store": "needs a secret store, and none is given (Foundry.open's "
                "secret_store, or TOOLFOUNDRY_SECRETS_DIR)",
                "empty": "is not set",
                "invalid": "holds a line break or NUL",
            }[exc.problem]
            raise MissingSecret(f"{exc.source} {why}") from None


@dataclass(frozen=True)
class UpstreamSettings:
    """One ``[[upstream]]`` entry.

    Attributes:
        name: what the upstream's tools are reached by: ``tools.NAME.TOOL`` (a portable tool
            name: letters, digits, ``_``, ``-``).
        command: the program of a stdio upstream (with ``args``, ``env``, ``cwd``).
        url: the endpoint of a Streamable HTTP upstream (``command`` or ``url``, not both).
        credentials: secrets handed to it when connecting.
        timeout_s: one call waits at most this long (a snippet's call ends at its own deadline
            first).
        policy: what a tool the lists below do not name gets (``annotations`` by default).
        allow, approve, deny: tool names (without the upstream's) with their own rule.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    credentials: tuple[UpstreamCredential, ...] = ()
    timeout_s: float = DEFAULT_TIMEOUT_S
    policy: UpstreamPolicy = UpstreamPolicy.ANNOTATIONS
    allow: tuple[str, ...] = ()
    approve: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()

    @property
    def transport(self) -> str:
        """``stdio`` or ``http``."""
        return "stdio" if self.command is not None else "http"

    @property
    def target(self) -> str:
        """What it connects to, as a report shows it (no credential: those are never in a
        command line or a URL toolfoundry builds)."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return self.url or ""


def parse_upstreams(raw: Any, problems: list[str]) -> tuple[UpstreamSettings, ...]:
    """The ``[[upstream]]`` array of tables; each problem is added to ``problems``."""
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(item, Mapping) for item in raw):
        problems.append("upstream must be an array of tables ([[upstream]])")
        return ()
    if len(raw) > MAX_UPSTREAMS:
        problems.append(f"at most {MAX_UPSTREAMS} [[upstream]] entries, got {len(raw)}")
        return ()
    found: list[UpstreamSettings] = []
    seen: set[str] = set()
    for i, table in enumerate(raw):
        entry = _entry(f"upstream[{i}]", table, problems)
        if entry is None:
            continue
        if entry.name in seen:
            problems.append(f"upstream[{i}].name {entry.name!r} is already used")
            continue
        seen.add(entry.name)
        found.append(entry)
    return tuple(found)


def _entry(where: str, table: Mapping[str, Any], problems: list[str]) -> UpstreamSettings | None:
    before = len(problems)
    problems += [
        f"unknown key {where}.{k} (known: {', '.join(UPSTREAM_KEYS)})"
        for k in table
        if k not in UPSTREAM_KEYS
    ]
    name = table.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        problems.append(
            f"{where}.name must be a tool-like name (letters, digits, '_', '-'), got {name!r}"
        )
    command, url = table.get("command"), table.get("url")
    if (command is None) == (url is None):
        problems.append(f"{where} needs exactly one of command (stdio) or url (Streamable HTTP)")
    if command is not None and not (isinstance(command, str) and command.strip()):
        problems.append(f"{where}.command must be a non-empty string")
    if url is not None and not _http_url(url):
        problems.append(f"{where}.url must be an http:// or https:// URL with a host")
    args = _strings(table.get("args", []), f"{where}.args", problems)
    env = table.get("env", {})
    if not isinstance(env, Mapping) or not all(
        isinstance(k, str) and _ENV_NAME.fullmatch(k) and isinstance(v, str) for k, v in env.items()
    ):
        problems.append(f"{where}.env must be a table of variable names to strings")
        env = {}
    cwd = table.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        problems.append(f"{where}.cwd must be a string")
    if url is not None and ("args" in table or "env" in table or "cwd" in table):
        problems.append(f"{where}: args, env and cwd are for a stdio upstream (command)")
    credentials = _credentials(where, table.get("credentials", []), url is not None, problems)
    timeout = table.get("timeout_s", DEFAULT_TIMEOUT_S)
    if (problem := TIMEOUT_BOUND.problem(timeout)) is not None:
        problems.append(f"{where}.timeout_s {problem}")
    policy = table.get("policy", UpstreamPolicy.ANNOTATIONS.value)
    if policy not in {p.value for p in UpstreamPolicy}:
        shown = ", ".join(p.value for p in UpstreamPolicy)
        problems.append(f"{where}.policy must be one of {shown}, got {policy!r}")
    lists = {key: _strings(table.get(key, []), f"{where}.{key}", problems) for key in _LISTS}
    for key, names in lists.items():
        for other in _LISTS[_LISTS.index(key) + 1 :]:
            both = sorted(set(names) & set(lists[other]))
            if both:
                problems.append(f"{where}: {', '.join(both)} in both {key} and {other}")
    if len(problems) > before or not isinstance(name, str):
        return None
    return UpstreamSettings(
        name=name,
        command=command,
        args=args,
        env=tuple(sorted(env.items())),
        cwd=cwd,
        url=url,
        credentials=credentials,
        timeout_s=float(timeout),
        policy=UpstreamPolicy(policy),
        allow=lists["allow"],
        approve=lists["approve"],
        deny=lists["deny"],
    )


_LISTS = ("allow", "approve", "deny")


def _strings(value: Any, where: str, problems: list[str]) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        problems.append(f"{where} must be a list of non-empty strings")
        return ()
    return tuple(value)


def _http_url(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and not parts.password


def _credentials(
    where: str, raw: Any, http: bool, problems: list[str]
) -> tuple[UpstreamCredential, ...]:
    if not isinstance(raw, list):
        problems.append(f"{where}.credentials must be an array of tables")
        return ()
    out: list[UpstreamCredential] = []
    for i, item in enumerate(raw):
        at = f"{where}.credentials[{i}]"
        if not isinstance(item, Mapping):
            problems.append(f"{at} must be a table")
            continue
        before = len(problems)
        problems += [
            f"unknown key {at}.{k} (known: {', '.join(CREDENTIAL_KEYS)})"
            for k in item
            if k not in CREDENTIAL_KEYS
        ]
        header, variable = item.get("header"), item.get("variable")
        env, secret, prefix = item.get("env"), item.get("secret"), item.get("prefix", "")
        wanted = "header" if http else "variable"
        if (header if http else variable) is None or (variable if http else header) is not None:
            kind = "an HTTP upstream's" if http else "a stdio upstream's"
            problems.append(f"{at}: {kind} credential is a {wanted} (and not the other)")
        if header is not None and not (
            isinstance(header, str)
            and HEADER_NAME.fullmatch(header)
            and header.lower() not in RESERVED_HEADERS
            and not header.lower().startswith(("mcp-", "proxy-"))
        ):
            problems.append(f"{at}.header {header!r} is not a header a credential may set")
        if variable is not None and not (
            isinstance(variable, str) and _ENV_NAME.fullmatch(variable)
        ):
            problems.append(f"{at}.variable must be an environment variable name")
        if (env is None) == (secret is None):
            problems.append(f"{at} needs exactly one of env or secret")
        if env is not None and not (isinstance(env, str) and _ENV_NAME.fullmatch(env)):
            problems.append(f"{at}.env must be an environment variable name")
        if secret is not None and not (isinstance(secret, str) and secret):
            problems.append(f"{at}.secret must be a non-empty key")
        if not isinstance(prefix, str) or any(c in prefix for c in "\r\n\0"):
            problems.append(f"{at}.prefix must be a string without line breaks")
        if len(problems) == before:
            out.append(UpstreamCredential(header, variable, env, secret, prefix))
    return tuple(out)
