"""PostgreSQL announces every change of the tool pointer: ``NOTIFY tf_active_set``.

The active set (which tools are listed, at which version) is a function of ``tf_tools``'s
``current_version`` and ``current_status``: every create, approval, rollback, disable and
enable writes one of them. A statement-level trigger on those columns sends
``pg_notify('tf_active_set', <schema>)`` from the writing transaction, so the notification is
delivered when (and only if) it commits, whichever process or tool wrote the row; servers
``LISTEN`` (:mod:`toolfoundry.registry.notify`) instead of polling. The payload is the table's
schema, so registries in several schemas of one database wake only their own listeners.
PostgreSQL folds identical notifications of one transaction into one.

SQLite has no cross-process notification; its servers keep polling, and this revision changes
nothing there.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03
"""

from __future__ import annotations

from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "CREATE OR REPLACE FUNCTION tf_notify_active_set() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN PERFORM pg_notify('tf_active_set', TG_TABLE_SCHEMA); RETURN NULL; END $$"
    )
    # Idempotent, like the function: a database stamped back to an earlier revision (as the
    # migration tests do) runs this again over its own trigger.
    op.execute("DROP TRIGGER IF EXISTS tf_tools_notify_active_set ON tf_tools")
    op.execute(
        "CREATE TRIGGER tf_tools_notify_active_set "
        "AFTER INSERT OR UPDATE OF current_version, current_status OR DELETE OR TRUNCATE "
        "ON tf_tools FOR EACH STATEMENT EXECUTE FUNCTION tf_notify_active_set()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER tf_tools_notify_active_set ON tf_tools")
    op.execute("DROP FUNCTION tf_notify_active_set()")
