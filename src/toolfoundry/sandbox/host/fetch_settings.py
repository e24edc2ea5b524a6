"""The ``[fetch]`` table of toolfoundry.toml: what every call's fetch capability is given.

Kept beside the fetch capability it configures (not in ``toolfoundry.config``, which reads it),
so the call path needs nothing of the configuration module and its forge policy to type it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from toolfoundry.sandbox.host.credentials import Credential, SecretStore
from toolfoundry.spec.limits import FETCH_REQUESTS


@dataclass(frozen=True)
class FetchSettings:
    """The ``[fetch]`` table. ``allow`` None means: trust each tool's approved hosts.
    ``secret_store`` answers the credentials' ``secret`` keys (not from the file: the
    foundry's, sandbox/host/credentials.py)."""

    allow: tuple[str, ...] | None = None
    allow_http: tuple[str, ...] = ()
    allow_private: tuple[str, ...] = ()
    max_requests: int = FETCH_REQUESTS
    credentials: tuple[Credential, ...] = ()
    secret_store: SecretStore | None = field(default=None, compare=False, repr=False)
