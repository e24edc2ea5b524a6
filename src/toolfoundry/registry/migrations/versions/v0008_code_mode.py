"""Code mode: the audit names the caller of an inner call, usage counts callers, runs are kept.

``tools.NAME(args)`` inside a run_js snippet or a tool's code is a real call of NAME; its audit
row names who made it in the new column ``tf_audit.caller`` (``run:<id>`` or ``name@version``),
indexed with the id so one run's or one tool's inner calls read in order. Usage gains a
``by:<caller>`` counter per caller: the counter column grows from 48 to 80 characters (a tool
name is up to 64). ``tf_code_runs`` keeps the snippets run through a foundry, with their
recordings, for ``create_tool(from_run=...)``.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    bind = op.get_bind()
    inspector = sa.inspect(bind)
    # Idempotent: a database stamped back to an earlier revision runs this again.
    if "caller" not in {c["name"] for c in inspector.get_columns("tf_audit")}:
        # ADD COLUMN on both backends: the append-only triggers stay as they are
        op.add_column("tf_audit", sa.Column("caller", sa.String(200), nullable=True))
        op.create_index("ix_tf_audit_caller", "tf_audit", ["caller", "id"])
    with op.batch_alter_table("tf_usage") as batch:  # SQLite copies the table; PG alters it
        batch.alter_column(
            "counter", type_=sa.String(80), existing_type=sa.String(48), existing_nullable=False
        )
    if not inspector.has_table("tf_code_runs"):
        op.create_table(
            "tf_code_runs",
            sa.Column("id", sa.String(32), primary_key=True),
            sa.Column("started_at", TZ, nullable=False),
            sa.Column("actor", sa.String(200), nullable=False),
            sa.Column("ok", sa.Boolean, nullable=False),
            sa.Column("error_kind", sa.String(32), nullable=True),
            sa.Column("duration_ms", sa.Float, nullable=False),
            sa.Column("inner_calls", sa.Integer, nullable=False),
            sa.Column("code", sa.Text, nullable=False),
            sa.Column("recording", sa.JSON, nullable=True),
        )
        op.create_index("ix_tf_code_runs_started", "tf_code_runs", ["started_at"])


def downgrade() -> None:
    op.drop_index("ix_tf_code_runs_started", "tf_code_runs")
    op.drop_table("tf_code_runs")
    with op.batch_alter_table("tf_usage") as batch:
        batch.alter_column(
            "counter", type_=sa.String(48), existing_type=sa.String(80), existing_nullable=False
        )
    op.drop_index("ix_tf_audit_caller", "tf_audit")
    op.drop_column("tf_audit", "caller")
