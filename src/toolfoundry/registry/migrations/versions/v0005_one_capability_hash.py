"""One capability-set hash: versions stored with the registry's old hash get the forge's.

Until this revision ``Registry.add_version`` hashed a version it was given without a hash with
an algorithm of its own (SHA-256 of the compact capability dict, no language), while the forge,
and the approval check, use ``toolfoundry.spec.capabilities_hash``. Such a version could never be
approved (``binding_mismatch``). This rewrites exactly the rows whose stored hash is the old
algorithm's value for their stored capabilities, so their binding still proves the capabilities
are unchanged; a row whose hash matches neither (edited after it was stored) is left as it is
and stays refused. Versions made through the forge already carry the forge's hash and are not
touched; approval records are append-only history and are not rewritten.

Downgrade changes nothing: the rewritten hashes are what the earlier code checked at approval.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import sqlalchemy as sa
from alembic import op

from toolfoundry.spec import Capabilities, capabilities_hash

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

_versions = sa.table(
    "tf_versions",
    sa.column("id", sa.Integer),
    sa.column("language", sa.String),
    sa.column("capabilities", sa.JSON),
    sa.column("capability_hash", sa.String),
)


def _retired_hash(capabilities: Capabilities) -> str:
    """The registry's retired algorithm, kept here only to recognise the rows it wrote."""
    blob = json.dumps(capabilities.to_dict(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def _parsed(stored: Any) -> Capabilities | None:
    try:
        return Capabilities.from_dict(stored)
    except (TypeError, ValueError):
        return None


def upgrade() -> None:
    conn = op.get_bind()
    rows = conn.execute(
        sa.select(
            _versions.c.id,
            _versions.c.language,
            _versions.c.capabilities,
            _versions.c.capability_hash,
        )
    ).all()
    for row in rows:
        capabilities = _parsed(row.capabilities)
        if capabilities is None or row.capability_hash != _retired_hash(capabilities):
            continue
        conn.execute(
            sa.update(_versions)
            .where(_versions.c.id == row.id)
            .values(capability_hash=capabilities_hash(capabilities, row.language))
        )


def downgrade() -> None:
    pass
