"""Persistent, versioned tool registry over SQLite (default) or PostgreSQL.

Tools, immutable versions and the current-version pointer, approvals bound to code and
capabilities, usage counters, an append-only audit log, full-text search, agent runs, and the
localStorage backend. Persistence only: it imports nothing but :mod:`toolfoundry.spec` of
toolfoundry, and knows nothing of the forge, the sandbox or any server above it (what runs a
draft through the forge into a version is :mod:`toolfoundry.foundry`'s). The layers above
read and write through :class:`Registry`'s methods; only this package speaks SQL.

Records and the call path's statements need no SQLAlchemy; :class:`Registry`, the
localStorage backend and the change feed load it on first use (``Foundry.open`` + ``call`` on a
SQLite file does not).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolfoundry.base.lazy import lazy_names
from toolfoundry.registry.records import (
    AGENT_ACTOR,
    Approval,
    ApprovalHold,
    AuditEntry,
    AuditEvent,
    Dependency,
    Dependent,
    HoldKind,
    LastFailure,
    NewVersion,
    RegistryError,
    SearchHit,
    ToolListing,
    ToolVersion,
    UsageStats,
)
from toolfoundry.registry.sqlite_file import default_url, resolve_url
from toolfoundry.spec import VersionStatus, capabilities_hash, code_sha256

if TYPE_CHECKING:  # what __getattr__ below returns, for type checkers (tests keep both equal)
    from toolfoundry.registry.engine import StoreError
    from toolfoundry.registry.notify import ChangeFeed
    from toolfoundry.registry.repository import Registry
    from toolfoundry.registry.runs import RunRow
    from toolfoundry.registry.storage import SqlStorage

_LAZY = {
    "StoreError": "toolfoundry.registry.engine",
    "ChangeFeed": "toolfoundry.registry.notify",
    "Registry": "toolfoundry.registry.repository",
    "RunRow": "toolfoundry.registry.runs",
    "SqlStorage": "toolfoundry.registry.storage",
}

__getattr__ = lazy_names(__name__, _LAZY)


__all__ = [
    "AGENT_ACTOR",
    "Approval",
    "ApprovalHold",
    "AuditEntry",
    "AuditEvent",
    "ChangeFeed",
    "Dependency",
    "Dependent",
    "HoldKind",
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
