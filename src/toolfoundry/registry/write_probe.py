"""Whether the registry database can be written now: the write half of ``/healthz``.

A database that still answers reads can refuse every write (a full disk, a file-size limit, a
read-only mount or replica), and then every create and call fails while a read-only health
check says all is well. The probe makes the smallest real write each store has, in its own
transaction: SQLite rewrites its header's ``user_version`` with the value it holds (one page
through the WAL, the path every write takes); PostgreSQL assigns a transaction id, whose
commit is written to its WAL. Neither changes anything a reader sees.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.engine import Connection


def probe(conn: Connection) -> None:
    """Write nothing visible, for real, in ``conn``'s transaction.

    Raises:
        StoreError: the write failed (toolfoundry.registry.StoreError).
    """
    if conn.dialect.name == "sqlite":
        version = int(conn.exec_driver_sql("PRAGMA user_version").scalar() or 0)
        conn.exec_driver_sql(f"PRAGMA user_version = {version}")
        return
    conn.execute(text("SELECT txid_current()"))
