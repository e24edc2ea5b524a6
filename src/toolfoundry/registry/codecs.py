"""Values as the registry stores them, without SQLAlchemy: times, names, JSON columns, the
duration histogram and a version's record (its gate record: registry/gate_codec.py).

The call path on a SQLite file (:mod:`toolfoundry.registry.calls`) reads and writes its rows
on the driver alone, so a short-lived process that opens a registry and calls one tool does
not import SQLAlchemy (~0.2 s). The Core queries decode the same columns with these same
functions, so both read a row alike.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from toolfoundry.base.display import SURROGATES
from toolfoundry.registry.gate_codec import gate_record
from toolfoundry.registry.records import ToolVersion
from toolfoundry.spec import Capabilities, VersionStatus

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
# A version read's columns in order: the versions, then its tool's name and current version.
ROW_COLUMNS = (*VERSION_COLUMNS, "name", "current_version")
JSON_COLUMNS = frozenset(
    {
        "parameters",
        "returns",
        "tests",
        "fixtures",
        "capabilities",
        "findings",
        "test_results",
        "extra",
    }
)

_STATUSES = {s.value: s for s in VersionStatus}
# The C scanner json.loads ends in, without the wrapper's checks and two whitespace matches
# (a third of a decode of a short text); text it does not take whole goes to json.loads.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]

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
    if value == "null":
        return None
    try:
        out, end = _SCAN(value, 0)
    except StopIteration:
        end = -1
    return out if end == len(value) else json.loads(value)


def status_of(stored: str) -> VersionStatus:
    """A stored status (a dictionary lookup: the Enum's own is slower, per row of a listing)."""
    return _STATUSES.get(stored) or VersionStatus(stored)


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
    return _record(*(r[c] for c in ROW_COLUMNS), capabilities=capabilities)


def version_records(
    keys: Sequence[str], rows: Iterable[Sequence[Any]], capabilities: dict[str, Capabilities]
) -> list[ToolVersion]:
    """The records of many rows of columns ``keys``: positionally when they are
    :data:`ROW_COLUMNS` in order (no mapping built per row)."""
    if tuple(keys) != ROW_COLUMNS:
        return [version_record(dict(zip(keys, r, strict=True)), capabilities) for r in rows]
    return [_record(*r, capabilities=capabilities) for r in rows]


def _record(
    id: int,
    tool_id: int,
    version: int,
    language: str,
    code: str,
    sha256: str,
    description: str,
    parameters: Any,
    returns: Any,
    tests: Any,
    fixtures: Any,
    caps: Any,
    capability_hash: str,
    level: str,
    status: str,
    author: str,
    created_at: datetime | str,
    parent_version: int | None,
    findings: Any,
    test_results: Any,
    extra: Any,
    name: str,
    current_version: int | None,
    *,
    capabilities: dict[str, Capabilities],
) -> ToolVersion:
    returns = decoded(returns)
    return ToolVersion(
        id=id,
        name=name,
        version=version,
        language=language,
        code=code,
        sha256=sha256,
        description=description,
        parameters=decoded(parameters),
        returns=dict(returns) if returns is not None else None,
        tests=decoded(tests),
        fixtures=decoded(fixtures),
        capabilities=capabilities_of(caps, capabilities),
        capability_hash=capability_hash,
        level=level,
        status=status_of(status),
        author=author,
        created_at=as_utc(created_at),
        parent_version=parent_version,
        findings=decoded(findings),
        test_results=decoded(test_results),
        gate=gate_record(decoded(extra)),
        current=current_version == version,
    )
