"""What a user gives as the registry becomes a SQLite or PostgreSQL URL, or is refused in our
words."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolfoundry import Foundry
from toolfoundry.registry import Registry
from toolfoundry.registry.store_url import SUPPORTED, UnsupportedStore, as_store_url


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ("registry.db", "sqlite:///registry.db"),
        ("/srv/tf/registry.db", "sqlite:////srv/tf/registry.db"),
        ("a #1?%.db", "sqlite:///a %231%3F%25.db"),
        ("sqlite:///x.db", "sqlite:///x.db"),
        ("sqlite:///:memory:", "sqlite:///:memory:"),
        ("postgres://u:p@h:5/d", "postgresql+psycopg://u:p@h:5/d"),
        ("postgresql://u@h/d?sslmode=require", "postgresql+psycopg://u@h/d?sslmode=require"),
        ("POSTGRESQL+psycopg://u@h/d", "postgresql+psycopg://u@h/d"),
    ],
)
def test_what_a_user_types_becomes_a_store_url(given: str, url: str) -> None:
    assert as_store_url(given) == url


def test_a_home_relative_path_is_expanded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    assert as_store_url("~/registry.db") == f"sqlite:///{tmp_path}/registry.db"


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (
            "mysql://u@h/d",
            "mysql:// is not a store toolfoundry keeps its registry in; "
            f"it keeps it in {SUPPORTED}",
        ),
        ("mssql+pyodbc://h/d", "mssql+pyodbc:// is not a store"),
        ("postgress://h/d", "postgress:// is not a store"),
        (
            "postgres+asyncpg://u:pw@h/d",
            "postgres+asyncpg:// asks for the asyncpg driver; toolfoundry speaks to PostgreSQL "
            "with psycopg 3: write postgresql://u:***@h/d",
        ),
    ],
)
def test_another_database_is_refused_naming_the_supported_stores(given: str, message: str) -> None:
    with pytest.raises(UnsupportedStore) as caught:
        as_store_url(given)
    assert str(caught.value).startswith(message)
    assert "pw" not in str(caught.value)


def test_the_python_api_takes_a_bare_path_and_refuses_another_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with Foundry.open("here.db") as foundry:
        assert foundry.tools() == []
    assert (tmp_path / "here.db").is_file()
    registry = Registry.open("here.db")  # the registry alone reads the same file
    registry.close()
    for opener in (Foundry.open, Registry.open):
        with pytest.raises(UnsupportedStore, match=r"^mysql:// is not a store"):
            opener("mysql://u@h/d")
