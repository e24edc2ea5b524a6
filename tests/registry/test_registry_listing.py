"""Registry.listing: the narrow read behind ``tools list`` gives, row for row, what the full
current-version read gives for the fields a listing shows (on SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from toolfoundry.registry import NewVersion, Registry, ToolListing, ToolVersion, VersionStatus
from toolfoundry.spec import Capabilities

WEB = Capabilities(network=("api.example.com", "*.example.org"))


def new(
    name: str,
    status: VersionStatus = VersionStatus.ACTIVE,
    caps: Capabilities = Capabilities(),
    description: str | None = None,
) -> NewVersion:
    return NewVersion(
        name=name,
        code=f"export function handler() {{ return {name!r}; }}",
        description=description if description is not None else f"The {name} tool",
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        status=status,
        capabilities=caps,
        tests=[{"input": {}, "expected": name}],
        test_results=[{"name": "#0", "passed": True}],
    )


@pytest.fixture
def reg(db_url: str) -> Iterator[Registry]:
    registry = Registry.open(db_url)
    registry.add_version(new("zeta", caps=WEB))
    registry.add_version(new("alpha"))
    registry.add_version(new("alpha", caps=WEB))
    registry.rollback("alpha", 1)  # current is v1, not the newest
    registry.add_version(new("bravo"))
    registry.add_version(new("bravo", VersionStatus.PENDING_APPROVAL, WEB))
    registry.add_version(new("bravo", VersionStatus.PENDING_APPROVAL, WEB))
    registry.add_version(new("waiting", VersionStatus.PENDING_APPROVAL, WEB))
    registry.add_version(new("off"))
    registry.set_enabled("off", False)
    hostile = "line one\x1b[2K\nline two \u202e\U0001f600 " + "x" * 5000
    registry.add_version(new("odd", caps=Capabilities(system=True), description=hostile))
    yield registry
    registry.close()


def projected(v: ToolVersion, pending: dict[str, list[int]]) -> dict[str, object]:
    return {**v.summary(), "description": v.description, "pending": pending.get(v.name, [])}


def shown(row: ToolListing) -> dict[str, object]:
    return {**row.summary(), "description": row.description, "pending": list(row.pending_versions)}


def test_listing_matches_the_full_read_row_for_row(reg: Registry) -> None:
    pending = reg.pending_by_tool()
    full = [projected(v, pending) for v in reg.current_versions()]
    rows = reg.listing()
    assert [shown(r) for r in rows] == full
    assert [r.name for r in rows] == ["alpha", "bravo", "odd", "off", "waiting", "zeta"]
    by_name = {r.name: r for r in rows}
    assert by_name["alpha"].version == 1
    assert by_name["alpha"].current
    assert by_name["bravo"].pending_versions == (2, 3)
    assert by_name["waiting"].pending_versions == (1,)
    assert by_name["waiting"].status is VersionStatus.PENDING_APPROVAL
    assert by_name["off"].status is VersionStatus.DISABLED
    assert by_name["zeta"].capabilities == WEB
    assert by_name["odd"].description.startswith("line one\x1b[2K\nline two \u202e\U0001f600")
    assert by_name["odd"].created_at.tzinfo is not None


def test_listing_filters_and_pages_like_the_full_read(reg: Registry) -> None:
    active = VersionStatus.ACTIVE
    assert [r.name for r in reg.listing(status=active)] == ["alpha", "bravo", "odd", "zeta"]
    for limit, offset in [(2, 0), (2, 2), (None, 4), (0, 0), (3, 9)]:
        narrow = [(r.name, r.version) for r in reg.listing(limit=limit, offset=offset)]
        full = [(v.name, v.version) for v in reg.current_versions(limit=limit, offset=offset)]
        assert narrow == full
    paged = [r.name for r in reg.listing(status=active, limit=2, offset=1)]
    assert paged == ["bravo", "odd"]


def test_an_empty_registry_lists_nothing(db_url: str) -> None:
    registry = Registry.open(db_url)
    try:
        assert registry.listing() == []
        assert registry.pending_by_tool() == {}
    finally:
        registry.close()
