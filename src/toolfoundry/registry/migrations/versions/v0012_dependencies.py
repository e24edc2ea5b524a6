"""Tools that use tools: the tools each version's code calls (code mode).

``tf_dependencies`` holds one row per version and callee: the callee's name (a registry
tool's, or an upstream server's ``UPSTREAM.TOOL``), the callee's version the dependent's tests
ran against (or an upstream tool's input schema hash), and whether the forge read it from the
code or the draft's ``uses`` (registry/dependencies.py). Indexed by callee, for "what uses this
tool". Versions stored before this revision have no rows: their code was never read for calls.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Idempotent: a database stamped back to an earlier revision runs this again.
    if sa.inspect(op.get_bind()).has_table("tf_dependencies"):
        return
    op.create_table(
        "tf_dependencies",
        sa.Column("version_id", sa.Integer, sa.ForeignKey("tf_versions.id"), primary_key=True),
        sa.Column("callee", sa.String(64), primary_key=True),
        sa.Column("callee_version", sa.Integer, nullable=True),
        sa.Column("schema_hash", sa.String(64), nullable=True),
        sa.Column("found", sa.String(8), nullable=False),
    )
    op.create_index("ix_tf_dependencies_callee", "tf_dependencies", ["callee"])


def downgrade() -> None:
    op.drop_table("tf_dependencies")
