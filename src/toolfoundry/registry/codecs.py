"""Values as the registry stores them, without SQLAlchemy: times, names, JSON columns, the
duration histogram and a version's record.

The call path on a SQLite file (:mod:`toolfoundry.registry.calls`) reads and writes its rows
on the driver alone, so a short-lived process that opens a registry and calls one tool does
not import SQLAlchemy (~0.2 s). The Core queries decode the same columns with these same
functions, so both read a row alike.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from toolfoundry.registry.records import ToolVersion
from toolfoundry.spec import Capabilities, VersionStatus
from toolfoundry.spec.display import SURROGATES

_LONE_SURROGATE = re.compile(f"[{SURROGATES}]")

# tf_versions' columns as the record reads them (schema.versions; a test keeps them equal),
# then the two of its tool that a version read joins.
VERSION_COLUMNS = (
    "id",
    "tool_id",
    "version",
    "language",
    "code",
    "sha256",
    "description",
    "parameters",
    "returns",
    "tests",
    "fixtures",
    "capabilities",
    "capability_hash",
    "level",
    "status",
    "author",
    "created_at",
    "parent_version",
    "findings",
    "test_results",
    "extra",
)
JSON_COLUMNS = frozenset(
    ("parameters", "returns", "tests", "fixtures", "capabilities", "findings")
) | {"test_results", "extra"}

_BASE_MS = 0.01
_PER_DOUBLING = 4
_MAX_BUCKET = 120


def now() -> datetime:
    """The registry's clock (UTC, aware)."""
    return datetime.now(UTC)


def as_utc(value: datetime | str) -> datetime:
    """A stored time as an aware UTC datetime: SQLite hands back naive ones (or, read on the
    driver alone, their text); everything the registry stores is UTC."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def sqlite_datetime(value: datetime) -> str:
    """``value`` in the storage format of SQLAlchemy's SQLite DateTime (naive UTC text), so
    rows written on the driver read back through Core."""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def bindable_name(name: str) -> str:
    """``name`` as a query can bind it: lone surrogates become U+FFFD (see
    ``schema.ToolNameText``, the gate of Core queries, which applies this)."""
    return _LONE_SURROGATE.sub("\ufffd", name)


def bucket(duration_ms: float) -> int:
    """The histogram bucket of a duration (bucket ``b`` holds up to ``bucket_upper(b)``):
    log-scaled, four per doubling from 10 µs."""
    if duration_ms <= _BASE_MS:
        return 0
    b = math.ceil(_PER_DOUBLING * math.log2(duration_ms / _BASE_MS))
    return min(b, _MAX_BUCKET)


def bucket_upper(b: int) -> float:
    """Upper bound in ms of bucket ``b``."""
    return _BASE_MS * 2 ** (b / _PER_DOUBLING)


def decoded(value: Any) -> Any:
    """A stored JSON value: text from SQLite, already decoded from some drivers (psycopg)."""
    if not isinstance(value, str):
        return value
    if value == "[]":
        return []
    if value == "{}":
        return {}
    return json.loads(value)


def capabilities_of(stored: Any, parsed: dict[str, Capabilities]) -> Capabilities:
    """A stored capability set, decoded once per distinct text (``parsed``: the sets already
    decoded in one read; a listing has few distinct ones)."""
    if not isinstance(stored, str):
        return Capabilities.from_dict(stored)
    caps = parsed.get(stored)
    if caps is None:
        caps = parsed[stored] = Capabilities.from_dict(decoded(stored))
    return caps


def version_record(r: Mapping[Any, Any], capabilities: dict[str, Capabilities]) -> ToolVersion:
    """The record of one version row joined to its tool's ``name`` and ``current_version``."""
    returns = decoded(r["returns"])
    return ToolVersion(
        id=r["id"],
        name=r["name"],
        version=r["version"],
        language=r["language"],
        code=r["code"],
        sha256=r["sha256"],
        description=r["description"],
        parameters=decoded(r["parameters"]),
        returns=dict(returns) if returns is not None else None,
        tests=decoded(r["tests"]),
        fixtures=decoded(r["fixtures"]),
        capabilities=capabilities_of(r["capabilities"], capabilities),
        capability_hash=r["capability_hash"],
        level=r["level"],
        status=VersionStatus(r["status"]),
        author=r["author"],
        created_at=as_utc(r["created_at"]),
        parent_version=r["parent_version"],
        findings=decoded(r["findings"]),
        test_results=decoded(r["test_results"]),
        extra=decoded(r["extra"]),
        current=r["current_version"] == r["version"],
    )
