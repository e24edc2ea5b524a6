"""Agent runs: one row per run of the agent loop, with its transcript.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "tf_agent_runs",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column("task", sa.Text, nullable=False),
        sa.Column("model", sa.String(200), nullable=False),
        sa.Column("stop_reason", sa.String(32), nullable=True),
        sa.Column("started_at", TZ, nullable=False),
        sa.Column("finished_at", TZ, nullable=True),
        sa.Column("turns", sa.Integer, nullable=False),
        sa.Column("input_tokens", sa.BigInteger, nullable=False),
        sa.Column("output_tokens", sa.BigInteger, nullable=False),
        sa.Column("transcript", sa.JSON, nullable=False),
    )
    op.create_index("ix_tf_agent_runs_started", "tf_agent_runs", ["started_at"])


def downgrade() -> None:
    op.drop_index("ix_tf_agent_runs_started", "tf_agent_runs")
    op.drop_table("tf_agent_runs")
