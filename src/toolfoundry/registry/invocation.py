"""What a registered version needs at call time: its argument validator and sandbox policy.

Both are pure functions of an immutable version and the configuration, so they are built once
per version and reused; only the version's status is read from the database on every call.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from toolfoundry.forge.hosts import pattern_covered
from toolfoundry.sandbox.host.credentials import Credential
from toolfoundry.sandbox.host.fetch import FetchPolicy
from toolfoundry.sandbox.host.protocols import StorageBackend
from toolfoundry.sandbox.policy import MIB, SandboxPolicy
from toolfoundry.spec import Capabilities, Problem, StorageScope

SHARED_NAMESPACE = "shared"


@lru_cache(maxsize=1024)
def _validator(schema_json: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_json))


def arguments_validator(schema: Mapping[str, Any]) -> Draft202012Validator | None:
    """A validator for a version's parameters, to keep with the version (None if invalid)."""
    try:
        return _validator(json.dumps(schema, sort_keys=True))
    except SchemaError:
        return None


def argument_problems(
    schema: Mapping[str, Any], args: Any, *, validator: Draft202012Validator | None = None
) -> list[Problem]:
    """Every way ``args`` breaks ``schema``, each located by a JSON path (``$.items[2]``)."""
    if not isinstance(args, Mapping):
        return [Problem("$", f"arguments must be a JSON object, got {type(args).__name__}")]
    if validator is None:
        try:
            validator = _validator(json.dumps(schema, sort_keys=True))
        except SchemaError as exc:
            return [Problem("$", f"the tool's parameters schema is invalid: {exc.message}")]
    problems = [
        Problem(error.json_path, error.message) for error in validator.iter_errors(dict(args))
    ]
    return sorted(problems, key=lambda p: (p.path, p.message))


@dataclass(frozen=True)
class CallSettings:
    """The configured side of a call: limits and what the network may be."""

    timeout_s: float = 2.0
    memory_mib: int = 64
    output_bytes: int = 1024 * 1024
    fetch_allow: tuple[str, ...] | None = None
    allow_http: tuple[str, ...] = ()
    allow_private: tuple[str, ...] = ()
    max_requests: int = 20
    credentials: tuple[Credential, ...] = ()


def allowed_hosts(requested: Sequence[str], configured: Sequence[str] | None) -> tuple[str, ...]:
    """The tool's approved hosts that the configuration also allows (all when unconfigured)."""
    if configured is None:
        return tuple(requested)
    return tuple(h for h in requested if pattern_covered(h, tuple(configured)))


def sandbox_policy(
    name: str,
    capabilities: Capabilities,
    settings: CallSettings,
    storage: StorageBackend | None,
) -> SandboxPolicy:
    """The SandboxPolicy a call of this tool runs under: its capabilities, no more.

    Network hosts are the approved ones intersected with ``[fetch] allow``; credentials are
    the configured bindings for hosts the tool was approved to use them on; storage is the
    tool's own namespace, or the shared one.
    """
    fetch = None
    hosts = allowed_hosts(capabilities.network, settings.fetch_allow)
    if hosts:
        granted = set(capabilities.credentials)
        fetch = FetchPolicy(
            allow=hosts,
            allow_http=settings.allow_http,
            allow_private=settings.allow_private,
            credentials=tuple(c for c in settings.credentials if c.host in granted),
            max_requests=settings.max_requests,
        )
    namespace = None
    if capabilities.storage is StorageScope.SHARED:
        namespace = SHARED_NAMESPACE
    elif capabilities.storage is StorageScope.TOOL:
        namespace = f"tool:{name}"
    return SandboxPolicy(
        timeout_s=settings.timeout_s,
        memory_bytes=settings.memory_mib * MIB,
        output_bytes=settings.output_bytes,
        fetch=fetch,
        storage=storage if namespace else None,
        storage_namespace=namespace,
        tool=name,
    )
