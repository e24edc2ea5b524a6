"""Call records journaled on the host: how far each journal has been written here.

A PostgreSQL registry's call records (usage counters and ``called`` audit rows) are appended
to a journal file on the calling host before the call answers, and written here in batches
off the call path (registry/call_journal.py). ``tf_journal_marks`` holds, per journal, the
last sequence number written, in the same transaction as the records: a journal replayed
after a crash writes only what is past its mark. Nothing existing changes.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Idempotent: a database stamped back to an earlier revision runs this again.
    if sa.inspect(op.get_bind()).has_table("tf_journal_marks"):
        return
    op.create_table(
        "tf_journal_marks",
        sa.Column("journal", sa.String(64), primary_key=True),
        sa.Column("seq", sa.BigInteger, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("tf_journal_marks")
