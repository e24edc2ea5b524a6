"""Fixtures shared across areas. Area-specific fixtures live in tests/<area>/conftest.py."""

import uuid
from collections.abc import Iterator

import pytest

PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A SQLAlchemy URL to a fresh, empty schema in the real PostgreSQL server; dropped after."""
    from sqlalchemy import create_engine, text

    schema = f"tf_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_SERVER)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    try:
        yield f"{PG_SERVER}?options=-csearch_path%3D{schema}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()
