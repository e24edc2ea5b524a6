"""Alembic environment shipped inside the package; run by ``toolfoundry.registry.engine.migrate``.

The caller passes an open connection (already holding the migration lock) in
``config.attributes["connection"]``; the migrations run inside the caller's transaction.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from toolfoundry.registry.schema import metadata

connection = context.config.attributes.get("connection")
if not isinstance(connection, Connection):
    raise RuntimeError("toolfoundry migrations run through toolfoundry.registry.engine.migrate")

context.configure(
    connection=connection,
    target_metadata=metadata,
    version_table="tf_alembic_version",
    render_as_batch=connection.dialect.name == "sqlite",
)
with context.begin_transaction():
    context.run_migrations()
