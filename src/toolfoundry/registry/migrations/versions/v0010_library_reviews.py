"""The library watched: ``serve`` keeps each review it ran by itself.

``tf_reviews`` holds one row per review (registry/reviews.py): when and why it ran (first,
runtime changed, schedule), which process ran it, the runtime it ran under and its
fingerprint, and what it found. Nothing existing changes.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    # Idempotent: a database stamped back to an earlier revision runs this again.
    if sa.inspect(op.get_bind()).has_table("tf_reviews"):
        return
    op.create_table(
        "tf_reviews",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("finished_at", TZ, nullable=True),
        sa.Column("trigger", sa.String(32), nullable=False),
        sa.Column("runner", sa.String(200), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("runtime", sa.JSON, nullable=False),
        sa.Column("summary", sa.JSON, nullable=True),
        sa.Column("findings", sa.JSON, nullable=True),
    )


def downgrade() -> None:
    op.drop_table("tf_reviews")
