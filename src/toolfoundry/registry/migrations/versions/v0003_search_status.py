"""Search rows carry their tool's status; PostgreSQL's GIN index updates in place.

With the status in the search table, a query ranks and limits inside the index before joining
the tool rows (instead of joining every match first). ``fastupdate = off`` keeps the GIN index
free of a pending list that every query would otherwise scan: tools are created at human pace,
so in-place updates cost nothing noticeable.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE tf_search ADD COLUMN status VARCHAR(32) NOT NULL DEFAULT 'active'")
        op.execute(
            "UPDATE tf_search s SET status = t.current_status FROM tf_tools t "
            "WHERE t.id = s.tool_id AND t.current_status IS NOT NULL"
        )
        op.execute("ALTER INDEX ix_tf_search_document SET (fastupdate = off)")
        op.execute("SELECT gin_clean_pending_list('ix_tf_search_document'::regclass)")
        return
    # FTS5 tables cannot gain a column: build the new one, copy, swap.
    op.execute(
        "CREATE VIRTUAL TABLE tf_search_v2 USING fts5("
        "name, description, params, status UNINDEXED, tokenize = 'porter unicode61')"
    )
    op.execute(
        "INSERT INTO tf_search_v2 (rowid, name, description, params, status) "
        "SELECT s.rowid, s.name, s.description, s.params, "
        "COALESCE((SELECT current_status FROM tf_tools t WHERE t.id = s.rowid), 'active') "
        "FROM tf_search s"
    )
    op.execute("DROP TABLE tf_search")
    op.execute("ALTER TABLE tf_search_v2 RENAME TO tf_search")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER INDEX ix_tf_search_document SET (fastupdate = on)")
        op.execute("ALTER TABLE tf_search DROP COLUMN status")
        return
    op.execute(
        "CREATE VIRTUAL TABLE tf_search_v1 USING fts5("
        "name, description, params, tokenize = 'porter unicode61')"
    )
    op.execute(
        "INSERT INTO tf_search_v1 (rowid, name, description, params) "
        "SELECT rowid, name, description, params FROM tf_search"
    )
    op.execute("DROP TABLE tf_search")
    op.execute("ALTER TABLE tf_search_v1 RENAME TO tf_search")
