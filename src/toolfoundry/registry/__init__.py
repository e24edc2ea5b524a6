"""Persistent, versioned tool registry over SQLite (default) or PostgreSQL.

Tools, immutable versions and the current-version pointer, approvals bound to code and
capabilities, usage counters, an append-only audit log, full-text search, agent runs, and the
localStorage backend. Persistence only: it imports nothing but :mod:`toolfoundry.spec` of
toolfoundry, and knows nothing of the forge, the sandbox or any server above it (what runs a
draft through the forge into a version is :mod:`toolfoundry.foundry`'s). The layers above
read and write through :class:`Registry`'s methods; only this package speaks SQL.
"""

from toolfoundry.registry.engine import StoreError, default_url, resolve_url
from toolfoundry.registry.notify import ChangeFeed
from toolfoundry.registry.records import (
    AGENT_ACTOR,
    Approval,
    AuditEntry,
    AuditEvent,
    LastFailure,
    NewVersion,
    RegistryError,
    SearchHit,
    ToolListing,
    ToolVersion,
    UsageStats,
)
from toolfoundry.registry.repository import Registry
from toolfoundry.registry.runs import RunRow
from toolfoundry.registry.storage import SqlStorage
from toolfoundry.spec import VersionStatus, capabilities_hash, code_sha256

__all__ = [
    "AGENT_ACTOR",
    "Approval",
    "AuditEntry",
    "AuditEvent",
    "ChangeFeed",
    "LastFailure",
    "NewVersion",
    "Registry",
    "RegistryError",
    "RunRow",
    "SearchHit",
    "SqlStorage",
    "StoreError",
    "ToolListing",
    "ToolVersion",
    "UsageStats",
    "VersionStatus",
    "capabilities_hash",
    "code_sha256",
    "default_url",
    "resolve_url",
]
