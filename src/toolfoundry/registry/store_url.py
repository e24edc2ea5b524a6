"""Which store a registry URL names, in our words: a SQLite file or a PostgreSQL database.

What a user types (``--db``, ``TOOLFOUNDRY_DB``, ``[registry] url``) becomes the SQLAlchemy URL
the registry opens, before SQLAlchemy loads (it is not imported here): a bare path is a SQLite
file, ``postgres://`` (what Heroku, Render, Supabase and ``psql`` print) and ``postgresql://``
are PostgreSQL over psycopg 3, and anything else is refused naming the stores there are,
instead of SQLAlchemy's "Can't load plugin" or a missing MySQL driver.
"""

from __future__ import annotations

import os

SUPPORTED = (
    "SQLite (a file path such as registry.db, or sqlite:///PATH) or PostgreSQL "
    "(postgresql://USER@HOST/DATABASE, with the [postgres] extra)"
)
_POSTGRES = "postgresql+psycopg://"


class UnsupportedStore(ValueError):
    """The URL names a database toolfoundry does not keep a registry in (the message says which
    it does)."""


def as_store_url(text: str) -> str:
    """The SQLAlchemy URL for what a user gave as the registry.

    Args:
        text: a URL (``sqlite:///PATH``, ``postgres://...``, ``postgresql://...``) or the path
            of a SQLite file (``registry.db``, ``~/tf/registry.db``, ``/srv/registry.db``).

    Raises:
        UnsupportedStore: another database (``mysql://``, ``mssql://``), a PostgreSQL driver
            other than psycopg 3, or a mistyped scheme; the message names the supported stores.
    """
    scheme, sep, rest = text.partition("://")
    if not sep:
        return "sqlite:///" + _escaped(os.path.expanduser(text))
    backend, _, driver = scheme.lower().partition("+")
    if backend == "sqlite":
        return text
    if backend in ("postgres", "postgresql"):
        if driver in ("", "psycopg"):
            return _POSTGRES + rest
        raise UnsupportedStore(
            f"{scheme}:// asks for the {driver} driver; toolfoundry speaks to PostgreSQL with "
            f"psycopg 3: write postgresql://{_host_part(rest)}"
        )
    raise UnsupportedStore(
        f"{scheme}:// is not a store toolfoundry keeps its registry in; it keeps it in {SUPPORTED}"
    )


def _escaped(path: str) -> str:
    # the URL's database part is percent-decoded when it is opened; a query or fragment ends it
    return path.replace("%", "%25").replace("?", "%3F").replace("#", "%23")


def _host_part(rest: str) -> str:
    """The URL after its scheme with any password masked, to show in a message."""
    credentials, at, location = rest.rpartition("@")
    if not at:
        return rest
    user, colon, _password = credentials.partition(":")
    return f"{user}{':***' if colon else ''}@{location}"
