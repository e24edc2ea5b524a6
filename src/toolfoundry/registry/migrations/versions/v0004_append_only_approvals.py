"""Audit and approvals are append-only against every write SQL allows, not only UPDATE/DELETE.

SQLite's ``INSERT OR REPLACE`` (and ``REPLACE``, and an UPSERT) resolves a primary-key
conflict by deleting the old row without firing DELETE triggers (recursive triggers are off),
so 0001's triggers did not stop a rewrite of an audit row. A BEFORE INSERT trigger that refuses
an id already present closes that path. The approvals table gets the same protection as the
audit log. On PostgreSQL, ``INSERT ... ON CONFLICT DO UPDATE`` fires the statement-level UPDATE
trigger, so the audit's trigger already held; the approvals table gains one.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "CREATE FUNCTION tf_approvals_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
            "BEGIN RAISE EXCEPTION 'tf_approvals is append-only'; END $$"
        )
        op.execute(
            "CREATE TRIGGER tf_approvals_append_only BEFORE UPDATE OR DELETE OR TRUNCATE "
            "ON tf_approvals FOR EACH STATEMENT EXECUTE FUNCTION tf_approvals_append_only()"
        )
        return
    for action in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER tf_approvals_no_{action.lower()} BEFORE {action} ON tf_approvals "
            "BEGIN SELECT RAISE(ABORT, 'tf_approvals is append-only'); END"
        )
    for table in ("tf_audit", "tf_approvals"):
        op.execute(
            f"CREATE TRIGGER {table}_no_replace BEFORE INSERT ON {table} "
            f"WHEN EXISTS (SELECT 1 FROM {table} WHERE id = NEW.id) "
            f"BEGIN SELECT RAISE(ABORT, '{table} is append-only'); END"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER tf_approvals_append_only ON tf_approvals")
        op.execute("DROP FUNCTION tf_approvals_append_only()")
        return
    for name in ("tf_approvals_no_update", "tf_approvals_no_delete"):
        op.execute(f"DROP TRIGGER {name}")
    for table in ("tf_audit", "tf_approvals"):
        op.execute(f"DROP TRIGGER {table}_no_replace")
