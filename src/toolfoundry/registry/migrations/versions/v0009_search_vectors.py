"""Hybrid search: each tool's sentence vector next to its full-text document.

``tf_search_vectors`` holds one row per tool (registry/vectors.py): the embedding model's id,
the current version's status and the vector. ``tf_search_clock`` is one row counting the
changes to it, so a process keeps the vectors in memory and reads only what changed since
(the writers take the clock's row lock: generations commit in order). Vectors are not
computed here: the model is an optional extra and embedding every tool would hold the
upgrade for minutes; searching fills in the tools without one, a batch at a time.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    inspector = sa.inspect(op.get_bind())
    # Idempotent: a database stamped back to an earlier revision runs this again.
    if not inspector.has_table("tf_search_vectors"):
        op.create_table(
            "tf_search_vectors",
            sa.Column("tool_id", sa.Integer, sa.ForeignKey("tf_tools.id"), primary_key=True),
            sa.Column("generation", sa.BigInteger, nullable=False),
            sa.Column("model", sa.String(64), nullable=True),
            sa.Column("status", sa.String(32), nullable=False),
            sa.Column("vector", sa.LargeBinary, nullable=True),
        )
        op.create_index("ix_tf_search_vectors_generation", "tf_search_vectors", ["generation"])
    if not inspector.has_table("tf_search_clock"):
        clock = op.create_table(
            "tf_search_clock",
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
            sa.Column("generation", sa.BigInteger, nullable=False),
        )
        op.bulk_insert(clock, [{"id": 1, "generation": 0}])


def downgrade() -> None:
    op.drop_table("tf_search_clock")
    op.drop_table("tf_search_vectors")
