"""Initial registry: tools, versions, approvals, audit, usage, storage, full-text search.

Revision ID: 0001
Revises:
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TZ = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "tf_tools",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("current_version", sa.Integer, nullable=True),
        sa.Column("current_status", sa.String(32), nullable=True),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("updated_at", TZ, nullable=False),
    )
    op.create_table(
        "tf_versions",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("tool_id", sa.Integer, sa.ForeignKey("tf_tools.id"), nullable=False),
        sa.Column("version", sa.Integer, nullable=False),
        sa.Column("language", sa.String(32), nullable=False),
        sa.Column("code", sa.Text, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("description", sa.Text, nullable=False),
        sa.Column("parameters", sa.JSON, nullable=False),
        sa.Column("returns", sa.JSON, nullable=True),
        sa.Column("tests", sa.JSON, nullable=False),
        sa.Column("fixtures", sa.JSON, nullable=False),
        sa.Column("capabilities", sa.JSON, nullable=False),
        sa.Column("capability_hash", sa.String(64), nullable=False),
        sa.Column("level", sa.String(16), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("created_at", TZ, nullable=False),
        sa.Column("parent_version", sa.Integer, nullable=True),
        sa.Column("findings", sa.JSON, nullable=False),
        sa.Column("test_results", sa.JSON, nullable=False),
        sa.Column("extra", sa.JSON, nullable=False),
        sa.UniqueConstraint("tool_id", "version", name="uq_tf_versions_tool_version"),
    )
    op.create_index("ix_tf_versions_sha256", "tf_versions", ["sha256"])
    op.create_table(
        "tf_approvals",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("version_id", sa.Integer, sa.ForeignKey("tf_versions.id"), nullable=False),
        sa.Column("approver", sa.String(200), nullable=False),
        sa.Column("decided_at", TZ, nullable=False),
        sa.Column("decision", sa.String(16), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("code_sha256", sa.String(64), nullable=False),
        sa.Column("capability_hash", sa.String(64), nullable=False),
    )
    op.create_index("ix_tf_approvals_version", "tf_approvals", ["version_id"])
    op.create_table(
        "tf_audit",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer, "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("at", TZ, nullable=False),
        sa.Column("tool", sa.String(64), nullable=False),
        sa.Column("version", sa.Integer, nullable=True),
        sa.Column("event", sa.String(32), nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("detail", sa.JSON, nullable=False),
    )
    op.create_index("ix_tf_audit_tool", "tf_audit", ["tool", "id"])
    op.create_table(
        "tf_usage",
        sa.Column("tool", sa.String(64), primary_key=True),
        sa.Column("counter", sa.String(48), primary_key=True),
        sa.Column("n", sa.BigInteger, nullable=False),
        sa.Column("total_ms", sa.Float, nullable=False),
        sa.Column("last_at", TZ, nullable=False),
    )
    op.create_table(
        "tf_storage",
        sa.Column("namespace", sa.String(200), primary_key=True),
        sa.Column("key", sa.Text, primary_key=True),
        sa.Column("value", sa.Text, nullable=False),
    )
    if op.get_bind().dialect.name == "postgresql":
        _postgresql_extras()
    else:
        _sqlite_extras()


def _sqlite_extras() -> None:
    op.execute(
        "CREATE VIRTUAL TABLE tf_search USING fts5("
        "name, description, params, tokenize = 'porter unicode61')"
    )
    for action in ("UPDATE", "DELETE"):
        op.execute(
            f"CREATE TRIGGER tf_audit_no_{action.lower()} BEFORE {action} ON tf_audit "
            "BEGIN SELECT RAISE(ABORT, 'tf_audit is append-only'); END"
        )


def _postgresql_extras() -> None:
    op.create_table(
        "tf_search",
        sa.Column("tool_id", sa.Integer, sa.ForeignKey("tf_tools.id"), primary_key=True),
        sa.Column("document", sa.dialects.postgresql.TSVECTOR, nullable=False),
    )
    op.execute("CREATE INDEX ix_tf_search_document ON tf_search USING GIN (document)")
    op.execute(
        "CREATE FUNCTION tf_audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ "
        "BEGIN RAISE EXCEPTION 'tf_audit is append-only'; END $$"
    )
    op.execute(
        "CREATE TRIGGER tf_audit_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON tf_audit "
        "FOR EACH STATEMENT EXECUTE FUNCTION tf_audit_append_only()"
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TABLE tf_search")
        op.execute("DROP TRIGGER tf_audit_append_only ON tf_audit")
        op.execute("DROP FUNCTION tf_audit_append_only()")
    else:
        op.execute("DROP TABLE tf_search")
    for table in ("tf_storage", "tf_usage", "tf_audit", "tf_approvals", "tf_versions", "tf_tools"):
        op.drop_table(table)
