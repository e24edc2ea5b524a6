"""Each tool's lookalike keys, so a create checks a new name by an index probe, not a scan.

``create_tool`` refuses a new name that passes for an existing tool's (spec/names.py:name_keys).
It used to read every tool's name and fold each one in Python: about 60 ms a create at 10 000
tools. ``tf_name_keys`` holds one row per key and tool (registry/lookalikes.py), keyed by the
key (and indexed by tool, for the newest tool with keys); this revision creates it and fills it
for the tools already stored.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from toolfoundry.registry.lookalikes import rows

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_tools = sa.table("tf_tools", sa.column("id", sa.Integer), sa.column("name", sa.String))
_keys = sa.table("tf_name_keys", sa.column("key", sa.String), sa.column("tool_id", sa.Integer))


def upgrade() -> None:
    bind = op.get_bind()
    # Idempotent: a database stamped back to an earlier revision (as the migration tests do)
    # runs this again over its own table.
    if not sa.inspect(bind).has_table("tf_name_keys"):
        op.create_table(
            "tf_name_keys",
            sa.Column("key", sa.String, primary_key=True),
            sa.Column("tool_id", sa.Integer, sa.ForeignKey("tf_tools.id"), primary_key=True),
        )
        op.create_index("ix_tf_name_keys_tool", "tf_name_keys", ["tool_id"])
    have = {(k, t) for k, t in bind.execute(sa.select(_keys.c.key, _keys.c.tool_id))}
    stored = bind.execute(sa.select(_tools.c.id, _tools.c.name)).all()
    missing = [
        row
        for tool_id, name in stored
        for row in rows(tool_id, name)
        if (row["key"], row["tool_id"]) not in have
    ]
    if missing:
        op.bulk_insert(_keys, missing)


def downgrade() -> None:
    op.drop_table("tf_name_keys")
