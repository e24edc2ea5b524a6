"""One code hash and one capability-set hash, from the forge's report to the approval check."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import text

from toolfoundry import Foundry
from toolfoundry.forge import forge_draft
from toolfoundry.registry import NewVersion, Registry, RegistryError, VersionStatus
from toolfoundry.registry.sqlite_file import SCHEMA_HEAD
from toolfoundry.spec import Capabilities, capabilities_hash, code_sha256

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit

NETWORK = Capabilities(network=("api.example.com",))


def pending(name: str = "weather", code: str = "export const handler = () => 1;") -> NewVersion:
    """A version registered straight through the public registry API, with no hash given."""
    return NewVersion(
        name=name,
        code=code,
        description="Current temperature for a city",
        parameters={"type": "object"},
        status=VersionStatus.PENDING_APPROVAL,
        capabilities=NETWORK,
        test_results=[{"name": "#0", "passed": True}],
    )


def test_a_version_added_without_hashes_can_be_approved(db_url: str) -> None:
    registry = Registry.open(db_url)
    stored = registry.add_version(pending())
    assert stored.sha256 == code_sha256(stored.code)
    assert stored.capability_hash == capabilities_hash(NETWORK, "javascript")
    with Foundry(registry) as fd:
        decision = fd.approve("weather", by="alice")
        assert decision.step.status == "completed", decision.step.message
        assert decision.status == "active"
        [approval] = fd.registry.approvals("weather")
        assert approval.capability_hash == stored.capability_hash


def test_the_forge_and_the_registry_bind_the_same_hashes(fd: Foundry, kit: type[Kit]) -> None:
    draft = kit.slugify()
    report = forge_draft(draft)
    created = fd.create_tool(draft)
    assert created.status == "active"
    stored = fd.show(draft["name"])
    assert (stored.sha256, stored.capability_hash) == (
        report.code_sha256,
        report.capabilities_hash,
    )


def test_a_version_stored_with_the_retired_hash_is_approvable_after_migration(db_url: str) -> None:
    registry = Registry.open(db_url)
    stored = registry.add_version(pending())
    # what add_version stored before there was one algorithm: sha256 of the compact dict
    blob = json.dumps(NETWORK.to_dict(), sort_keys=True, separators=(",", ":"))
    retired = hashlib.sha256(blob.encode()).hexdigest()
    with registry.engine.begin() as conn:
        conn.execute(
            text("UPDATE tf_versions SET capability_hash = :h WHERE id = :id"),
            {"h": retired, "id": stored.id},
        )
        conn.execute(text("UPDATE tf_alembic_version SET version_num = '0004'"))
    registry.close()
    with Foundry(Registry.open(db_url)) as fd:  # migrates 0004 -> head on open
        with fd.registry.engine.connect() as conn:
            head = conn.execute(text("SELECT version_num FROM tf_alembic_version")).scalar()
        assert head == SCHEMA_HEAD
        assert fd.show("weather").capability_hash == capabilities_hash(NETWORK)
        assert fd.approve("weather", by="alice").status == "active"


def test_a_row_edited_after_it_was_stored_stays_refused_after_migration(db_url: str) -> None:
    registry = Registry.open(db_url)
    stored = registry.add_version(pending())
    with registry.engine.begin() as conn:
        conn.execute(
            text("UPDATE tf_versions SET capability_hash = :h WHERE id = :id"),
            {"h": "0" * 64, "id": stored.id},
        )
        conn.execute(text("UPDATE tf_alembic_version SET version_num = '0004'"))
    registry.close()
    with Foundry(Registry.open(db_url)) as fd:
        decision = fd.approve("weather", by="alice")
        assert decision.step.blockers == ("binding_mismatch",)
        assert fd.show("weather").status is VersionStatus.PENDING_APPROVAL


@pytest.mark.parametrize(
    ("field", "value", "code_point"),
    [
        ("code", 'export function handler() {\n  return "\ud800";\n}', "U+D800"),
        ("description", "Slugs \udfff for titles", "U+DFFF"),
    ],
)
def test_a_lone_surrogate_is_refused_at_create_with_its_place(
    fd: Foundry, kit: type[Kit], field: str, value: str, code_point: str
) -> None:
    before = kit.snapshot(fd)
    result = fd.create_tool(kit.slugify(**{field: value}))
    assert result.status == "rejected"
    assert result.step.blockers == ("invalid_draft",)
    [finding] = [f for f in result.findings if f.path == f"$.{field}"]
    assert code_point in finding.message
    assert "lone surrogate" in finding.message
    assert kit.snapshot(fd) == before


def test_code_sha256_never_raises_and_is_utf8_for_valid_text() -> None:
    assert code_sha256("é") == hashlib.sha256("é".encode()).hexdigest()
    assert len(code_sha256("\ud800")) == 64  # one function, the same answer everywhere
    assert code_sha256("\ud800") != code_sha256("\udfff")


def test_the_registry_refuses_a_lone_surrogate_with_a_kind(db_url: str) -> None:
    registry = Registry.open(db_url)
    with pytest.raises(RegistryError) as caught:
        registry.add_version(pending(code="export const handler = () => '\ud800';"))
    assert caught.value.kind == "invalid_text"
    with pytest.raises(RegistryError):
        registry.get("weather")
    registry.close()
