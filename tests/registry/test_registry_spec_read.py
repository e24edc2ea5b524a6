"""Registry.active_specs: the narrow read behind catalogues and the MCP listing gives, spec for
spec, what ``v.spec`` of the full current-version read gives (on SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from toolfoundry.registry import NewVersion, Registry, VersionStatus
from toolfoundry.spec import Capabilities, ToolSpec

WEB = Capabilities(network=("api.example.com", "*.example.org"))
HOSTILE = 'line one\x1b[2K\nline two \u202e\U0001f600 "quoted" </script> \\ ' + "x" * 5000
PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"q": {"type": "string", "description": 'é \u2028 "q"', "default": "[]"}},
    "required": ["q"],
}
RETURNS: dict[str, Any] = {
    "type": "object",
    "properties": {"n": {"type": "integer"}, "null": {"type": "null"}},
}


def new(
    name: str,
    status: VersionStatus = VersionStatus.ACTIVE,
    caps: Capabilities = Capabilities(),
    description: str | None = None,
    returns: dict[str, Any] | None = None,
    level: str = "primitive",
) -> NewVersion:
    return NewVersion(
        name=name,
        code=f"export function handler() {{ return {name!r}; }}",
        description=description if description is not None else f"The {name} tool",
        parameters=PARAMETERS,
        returns=returns,
        status=status,
        capabilities=caps,
        level=level,
        tests=[{"input": {"q": "a"}, "expected": name}],
        fixtures=[{"name": "f", "content": "x" * 100}],
        findings=[{"rule": "r", "detail": "d"}],
        test_results=[{"name": "#0", "passed": True}],
    )


@pytest.fixture
def reg(db_url: str) -> Iterator[Registry]:
    registry = Registry.open(db_url)
    registry.add_version(new("zeta", caps=WEB, returns=RETURNS))
    registry.add_version(new("alpha"))
    registry.add_version(new("alpha", caps=WEB, returns=RETURNS))
    registry.rollback("alpha", 1)  # current is v1 (returns None), not the newest
    registry.add_version(new("bravo", caps=Capabilities(system=True), level="workflow"))
    registry.add_version(new("bravo", VersionStatus.PENDING_APPROVAL, WEB))
    registry.add_version(new("waiting", VersionStatus.PENDING_APPROVAL, WEB))
    registry.add_version(new("off"))
    registry.set_enabled("off", False)
    registry.add_version(new("odd", caps=WEB, description=HOSTILE, returns={"type": "string"}))
    yield registry
    registry.close()


def full(reg: Registry, names: list[str] | None = None) -> list[ToolSpec]:
    return [v.spec for v in reg.current_versions(status=VersionStatus.ACTIVE, names=names)]


def test_active_specs_equal_the_specs_of_the_full_read(reg: Registry) -> None:
    specs = reg.active_specs()
    assert specs == full(reg)
    assert [s.name for s in specs] == ["alpha", "bravo", "odd", "zeta"]
    by_name = {s.name: s for s in specs}
    assert by_name["alpha"].version == 1
    assert by_name["alpha"].returns is None
    assert by_name["zeta"].returns == RETURNS
    assert by_name["zeta"].capabilities == WEB
    assert by_name["bravo"].capabilities == Capabilities(system=True)
    assert by_name["bravo"].level == "workflow"
    assert by_name["odd"].description == HOSTILE.strip()
    assert by_name["odd"].parameters == PARAMETERS


def test_active_specs_of_named_tools(reg: Registry) -> None:
    names = ["zeta", "off", "waiting", "alpha", "missing", "odd"]
    assert reg.active_specs(names) == full(reg, names)
    assert [s.name for s in reg.active_specs(names)] == ["alpha", "odd", "zeta"]
    assert reg.active_specs([]) == []
    assert reg.active_specs(["off", "waiting"]) == []


def test_active_specs_follow_a_change(reg: Registry) -> None:
    reg.rollback("alpha", 2)
    reg.set_enabled("off", True)
    specs = reg.active_specs()
    assert specs == full(reg)
    assert {s.name: s.version for s in specs}["alpha"] == 2
    assert "off" in {s.name for s in specs}


def test_active_specs_of_an_empty_registry(db_url: str) -> None:
    registry = Registry.open(db_url)
    try:
        assert registry.active_specs() == []
    finally:
        registry.close()
