"""localStorage for tools, kept in the registry database (the sandbox's StorageBackend seam)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import LargeBinary, cast, delete, func, select, text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from toolfoundry.registry.engine import upsert_insert, write_options
from toolfoundry.registry.records import store_error_text
from toolfoundry.registry.schema import storage
from toolfoundry.spec.local_storage import (
    StorageQuota,
    StorageRefusal,
    StorageUnavailable,
    entry_refusal,
    key_refusal,
    usage_refusal,
)

# The first key of the two-key advisory locks that serialise a namespace's writes on
# PostgreSQL ("tfst"); the second is the namespace's hashtext. Two-key locks never collide
# with the one-key lock of migrations (engine._MIGRATION_LOCK).
_NAMESPACE_LOCKS = 0x7466_7374


class SqlStorage:
    """The sandbox's ``StorageBackend`` seam over SQLAlchemy (a match by shape: the registry
    imports nothing of the sandbox; the foundry hands this object to it).

    Every write commits on its own, so a value a tool stored survives the process and is
    seen by the next call from any process. A write checks the namespace's quota and stores
    in one transaction that holds the namespace's lock first, so the writers of every process
    on the database take turns: ``BEGIN IMMEDIATE`` on SQLite (the database's one write lock),
    a transaction-scoped advisory lock on the namespace on PostgreSQL (writers of other
    namespaces go on). Sizes are the values' UTF-8 bytes, counted by the database. A database
    that fails under any of them raises ``StorageUnavailable`` (the seam's one failure).
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._insert = upsert_insert(engine.dialect.name)
        self._postgres = engine.dialect.name == "postgresql"

    def _bytes(self, column: Any) -> Any:
        """The UTF-8 size of a text column, in SQL (PostgreSQL's databases are UTF-8 here)."""
        return (
            func.octet_length(column) if self._postgres else func.length(cast(column, LargeBinary))
        )

    def get_item(self, namespace: str, key: str) -> str | None:
        if key_refusal(key) is not None:
            return None  # never stored (PostgreSQL's driver refuses a NUL even in a lookup)
        with _failures(), self._engine.connect() as conn:
            value = conn.execute(
                select(storage.c.value).where(
                    storage.c.namespace == namespace, storage.c.key == key
                )
            ).scalar()
        return None if value is None else str(value)

    def set_item(
        self, namespace: str, key: str, value: str, quota: StorageQuota
    ) -> StorageRefusal | None:
        refusal = entry_refusal(key, value, quota)
        if refusal is not None:
            return refusal
        stmt = self._insert(storage).values(namespace=namespace, key=key, value=value)
        stmt = stmt.on_conflict_do_update(
            index_elements=[storage.c.namespace, storage.c.key],
            set_={"value": stmt.excluded.value},
        )
        options = write_options(self._engine)
        with (
            _failures(),
            self._engine.connect().execution_options(**options) as conn,
            conn.begin(),
        ):
            if self._postgres:
                conn.execute(
                    text("SELECT pg_advisory_xact_lock(:space, hashtext(:namespace))"),
                    {"space": _NAMESPACE_LOCKS, "namespace": namespace},
                )
            old_bytes = conn.execute(
                select(self._bytes(storage.c.value)).where(
                    storage.c.namespace == namespace, storage.c.key == key
                )
            ).scalar()
            usage = self._usage(conn, namespace)
            refusal = usage_refusal(quota, usage, key, value, old_bytes)
            if refusal is not None:
                return refusal
            conn.execute(stmt)
        return None

    def remove_item(self, namespace: str, key: str) -> None:
        if key_refusal(key) is not None:
            return
        with _failures(), self._engine.begin() as conn:
            conn.execute(
                delete(storage).where(storage.c.namespace == namespace, storage.c.key == key)
            )

    def clear(self, namespace: str) -> None:
        with _failures(), self._engine.begin() as conn:
            conn.execute(delete(storage).where(storage.c.namespace == namespace))

    def keys(self, namespace: str) -> list[str]:
        """Keys in a stable (sorted) order, so ``localStorage.key(i)`` is stable."""
        with _failures(), self._engine.connect() as conn:
            rows = conn.execute(
                select(storage.c.key)
                .where(storage.c.namespace == namespace)
                .order_by(storage.c.key)
            ).all()
        return [str(r[0]) for r in rows]

    def usage(self, namespace: str) -> tuple[int, int]:
        """(number of keys, total bytes of keys and values in UTF-8)."""
        with _failures(), self._engine.connect() as conn:
            return self._usage(conn, namespace)

    def _usage(self, conn: Connection, namespace: str) -> tuple[int, int]:
        size = self._bytes(storage.c.key) + self._bytes(storage.c.value)
        count, total = conn.execute(
            select(func.count(), func.coalesce(func.sum(size), 0)).where(
                storage.c.namespace == namespace
            )
        ).one()
        return int(count), int(total)


@contextmanager
def _failures() -> Iterator[None]:
    """The database failing under a storage operation, as the seam's ``StorageUnavailable``
    (carrying the database's words for the operator's log)."""
    try:
        yield
    except SQLAlchemyError as exc:
        raise StorageUnavailable(store_error_text(exc)) from exc
