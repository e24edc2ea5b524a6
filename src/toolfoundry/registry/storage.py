"""localStorage for tools, kept in the registry database (the sandbox's StorageBackend seam)."""

from __future__ import annotations

from sqlalchemy import delete, select
from sqlalchemy.engine import Engine

from toolfoundry.registry.engine import upsert_insert
from toolfoundry.registry.schema import storage


class SqlStorage:
    """The sandbox's ``StorageBackend`` seam over SQLAlchemy (a match by shape: the registry
    imports nothing of the sandbox; the foundry hands this object to it).

    Every write commits on its own, so a value a tool stored survives the process and is
    seen by the next call from any process. Quotas are enforced above this layer.
    """

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._insert = upsert_insert(engine.dialect.name)

    def get_item(self, namespace: str, key: str) -> str | None:
        with self._engine.connect() as conn:
            value = conn.execute(
                select(storage.c.value).where(
                    storage.c.namespace == namespace, storage.c.key == key
                )
            ).scalar()
        return None if value is None else str(value)

    def set_item(self, namespace: str, key: str, value: str) -> None:
        stmt = self._insert(storage).values(namespace=namespace, key=key, value=value)
        stmt = stmt.on_conflict_do_update(
            index_elements=[storage.c.namespace, storage.c.key],
            set_={"value": stmt.excluded.value},
        )
        with self._engine.begin() as conn:
            conn.execute(stmt)

    def remove_item(self, namespace: str, key: str) -> None:
        with self._engine.begin() as conn:
            conn.execute(
                delete(storage).where(storage.c.namespace == namespace, storage.c.key == key)
            )

    def clear(self, namespace: str) -> None:
        with self._engine.begin() as conn:
            conn.execute(delete(storage).where(storage.c.namespace == namespace))

    def keys(self, namespace: str) -> list[str]:
        """Keys in a stable (sorted) order, so ``localStorage.key(i)`` is stable."""
        with self._engine.connect() as conn:
            rows = conn.execute(
                select(storage.c.key)
                .where(storage.c.namespace == namespace)
                .order_by(storage.c.key)
            ).all()
        return [str(r[0]) for r in rows]

    def usage(self, namespace: str) -> tuple[int, int]:
        """(number of keys, total bytes of keys and values in UTF-8)."""
        with self._engine.connect() as conn:
            rows = conn.execute(
                select(storage.c.key, storage.c.value).where(storage.c.namespace == namespace)
            ).all()
        size = sum(len(k.encode()) + len(v.encode()) for k, v in rows)
        return len(rows), size
