"""Stored lookalike keys (registry/lookalikes.py): every tool has them, from its first version
or from migration 0007, and they follow the rule of spec/names.py."""

from __future__ import annotations

import hashlib
import itertools
import string
from pathlib import Path

from sqlalchemy import func, select, text
from tests.factories import NewVersionFactory

import toolfoundry.registry
from toolfoundry.registry import Registry, VersionStatus
from toolfoundry.registry.schema import name_keys
from toolfoundry.spec.names import name_keys as keys_of

# What name_keys gives for every name of one or two characters of NAME_PATTERN's alphabet:
# where the rule's effect on ASCII names shows (case, '-', 0/O, 1/l/I, rn/m, vv/w).
RULE_FINGERPRINT = "ac4fdf7b52065eb50d0532863c423ddf446dbd05cb14dec04d359a44d86bcc8e"
ALPHABET = string.ascii_letters + string.digits + "_-"


def test_a_name_meets_the_tool_it_passes_for(reg: Registry, new_version: NewVersionFactory) -> None:
    reg.add_version(new_version("slugify"))
    reg.add_version(new_version("csv_to_json", VersionStatus.PENDING_APPROVAL))
    reg.add_version(new_version("slugify"))  # a second version adds no key
    for name in ("Slugify", "s1ugify", "SLUGIFY", "sIugify"):
        assert reg.lookalike(name) == "slugify", name
    assert reg.lookalike("Csv-To-Json") == "csv_to_json"
    assert reg.lookalike("slugify") is None  # a tool is not its own lookalike
    assert reg.lookalike("slugify_words") is None
    assert reg.lookalike("slug\udc80ify") is None  # no driver can bind it: never raises
    with reg.engine.connect() as conn:
        stored = conn.execute(select(func.count()).select_from(name_keys)).scalar_one()
    assert stored == len(keys_of("slugify")) + len(keys_of("csv_to_json"))


def test_the_first_lookalike_by_name_is_named(
    reg: Registry, new_version: NewVersionFactory
) -> None:
    reg.add_version(new_version("rn_tool"))
    reg.add_version(new_version("m_tool"))
    assert reg.lookalike("M_TOOL") == "m_tool"  # 'rn' passes for 'm': m_ sorts first


def test_tools_a_previous_release_registered_get_their_keys_with_the_next_tool(
    reg: Registry,
    new_version: NewVersionFactory,
) -> None:
    reg.add_version(new_version("alpha"))
    with reg.engine.begin() as conn:  # what a process of the previous release writes: no keys
        conn.execute(
            text(
                "INSERT INTO tf_tools (name, current_version, current_status, created_at, "
                "updated_at) VALUES ('Beta_Tool', 1, 'active', :at, :at)"
            ),
            {"at": "2026-01-01 00:00:00"},
        )
    assert reg.lookalike("beta-tool") is None
    reg.add_version(new_version("gamma"))
    assert reg.lookalike("beta-tool") == "Beta_Tool"
    assert reg.lookalike("GAMMA") == "gamma"


def test_migration_0007_gives_the_tools_stored_before_it_their_keys(db_url: str) -> None:
    from alembic import command
    from alembic.config import Config as AlembicConfig

    from toolfoundry.registry.engine import create_registry_engine

    engine = create_registry_engine(db_url)
    config = AlembicConfig()
    package = Path(str(toolfoundry.registry.__file__)).parent
    config.set_main_option("script_location", str(package / "migrations"))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.upgrade(config, "0006")
        for tool_id, name in ((1, "old_tool"), (2, "Older-Tool")):
            conn.execute(
                text(
                    "INSERT INTO tf_tools (id, name, current_version, current_status, "
                    "created_at, updated_at) VALUES (:id, :name, 1, 'active', :at, :at)"
                ),
                {"id": tool_id, "name": name, "at": "2026-01-01 00:00:00"},
            )
        command.upgrade(config, "0007")
    registry = Registry(engine)
    assert registry.lookalike("OLD-TOOL") == "old_tool"
    assert registry.lookalike("older_tool") == "Older-Tool"
    assert registry.lookalike("new_tool") is None
    registry.close()


def test_the_stored_keys_follow_the_rule_they_were_made_by() -> None:
    """The keys are stored: a change of spec/names.py's rule leaves them stale. If this fails,
    the rule changed: add a migration that recomputes tf_name_keys for every tool (as 0007
    fills it), then pin the new fingerprint here."""
    names = [
        "".join(chars) for size in (1, 2) for chars in itertools.product(ALPHABET, repeat=size)
    ]
    digest = hashlib.sha256()
    for name in names:
        digest.update(f"{name}\t{'|'.join(sorted(keys_of(name)))}\n".encode())
    assert digest.hexdigest() == RULE_FINGERPRINT
