"""Persistent, versioned tool registry over SQLite (default) or PostgreSQL.

Tools, immutable versions and the current-version pointer, approvals bound to code and
capabilities, usage counters, an append-only audit log, full-text search, and the
localStorage backend. It knows nothing of the forge, the sandbox or any server above it.
"""

from toolfoundry.registry.engine import default_url, resolve_url
from toolfoundry.registry.records import (
    Approval,
    AuditEntry,
    AuditEvent,
    NewVersion,
    RegistryError,
    SearchHit,
    ToolVersion,
    UsageStats,
    VersionStatus,
    capability_hash,
    code_sha256,
)
from toolfoundry.registry.repository import Registry
from toolfoundry.registry.storage import SqlStorage

__all__ = [
    "Approval",
    "AuditEntry",
    "AuditEvent",
    "NewVersion",
    "Registry",
    "RegistryError",
    "SearchHit",
    "SqlStorage",
    "ToolVersion",
    "UsageStats",
    "VersionStatus",
    "capability_hash",
    "code_sha256",
    "default_url",
    "resolve_url",
]
