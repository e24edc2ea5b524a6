"""Full-text search over tools: SQLite FTS5 (bm25) or PostgreSQL tsvector (ts_rank).

The index holds one document per tool, built from its current version: the name (weighted
highest), the description, and the parameters' names and descriptions.

A query first asks for tools matching every word (few rows to rank, and the best matches);
only when that finds fewer than ``k`` does it widen to any of its rarer words, so a model's
loose phrasing ("turn a title into a url slug") still finds the tool. Ranking every tool that
matches one common word is what makes OR-only search slow on a large registry, so the widened
search keeps to the words whose matches fit a row budget (always at least the rarest word).
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import Connection

from toolfoundry.registry.records import SearchHit

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_MAX_TERMS = 32
_MAX_WIDEN_TERMS = 8
# Rows the any-word search may rank (each costs a bm25/ts_rank evaluation).
WIDEN_BUDGET = 2000
# Words that match nearly every description: ranking them costs time and adds nothing.
# (PostgreSQL's english configuration drops its own list; this one serves SQLite.)
_STOPWORD_TEXT = """
a an and any are as at be by can do does for from get gets give given how i in into is it its
me my of on or out so some that the this to tool tools use used uses using want we what when
which with you your
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def document(name: str, description: str, parameters: dict[str, Any]) -> tuple[str, str, str]:
    """The three weighted fields indexed for a tool."""
    return (_words(name), description, " ".join(_param_text(parameters)))


def _words(name: str) -> str:
    # split snake_case, kebab-case and camelCase so each part is a searchable word
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return " ".join(_WORD.findall(spaced))


def _param_text(schema: Any, depth: int = 0) -> list[str]:
    if not isinstance(schema, dict) or depth > 4:
        return []
    out: list[str] = []
    description = schema.get("description")
    if isinstance(description, str) and depth:
        out.append(description)
    props = schema.get("properties")
    if isinstance(props, dict):
        for pname, sub in props.items():
            out.append(_words(str(pname)))
            out.extend(_param_text(sub, depth + 1))
    items = schema.get("items")
    if isinstance(items, dict):
        out.extend(_param_text(items, depth + 1))
    return out


def terms(query: str) -> list[str]:
    """The distinct words of a query, in order, lower-cased, stopwords dropped (unless that
    leaves nothing)."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        seen.setdefault(word, None)
    words = [w for w in seen if w not in STOPWORDS] or list(seen)
    return words[:_MAX_TERMS]


def index(
    conn: Connection, tool_id: int, name: str, description: str, params: dict[str, Any]
) -> None:
    """(Re)index a tool from the version its pointer now names."""
    fields = document(name, description, params)
    if conn.dialect.name == "postgresql":
        conn.execute(
            text(
                "INSERT INTO tf_search (tool_id, document) VALUES (:id, "
                "setweight(to_tsvector('english', :n), 'A') || "
                "setweight(to_tsvector('english', :d), 'B') || "
                "setweight(to_tsvector('english', :p), 'C')) "
                "ON CONFLICT (tool_id) DO UPDATE SET document = EXCLUDED.document"
            ),
            {"id": tool_id, "n": fields[0], "d": fields[1], "p": fields[2]},
        )
        return
    conn.execute(text("DELETE FROM tf_search WHERE rowid = :id"), {"id": tool_id})
    conn.execute(
        text("INSERT INTO tf_search (rowid, name, description, params) VALUES (:id, :n, :d, :p)"),
        {"id": tool_id, "n": fields[0], "d": fields[1], "p": fields[2]},
    )


_SQLITE = """
SELECT t.name, t.current_version AS version, v.description, t.current_status AS status,
       -bm25(tf_search, 10.0, 3.0, 1.0) AS score
FROM tf_search
JOIN tf_tools t ON t.id = tf_search.rowid
JOIN tf_versions v ON v.tool_id = t.id AND v.version = t.current_version
WHERE tf_search MATCH :q {status}
ORDER BY bm25(tf_search, 10.0, 3.0, 1.0)
LIMIT :k
"""

_POSTGRESQL = """
SELECT t.name, t.current_version AS version, v.description, t.current_status AS status,
       ts_rank(s.document, q.query) AS score
FROM tf_search s
CROSS JOIN (SELECT to_tsquery('english', :q) AS query) q
JOIN tf_tools t ON t.id = s.tool_id
JOIN tf_versions v ON v.tool_id = t.id AND v.version = t.current_version
WHERE s.document @@ q.query {status}
ORDER BY score DESC, t.name
LIMIT :k
"""


def search(conn: Connection, query: str, k: int, *, active_only: bool = True) -> list[SearchHit]:
    """The ``k`` best-ranked tools for ``query``; only active ones unless told otherwise."""
    words = terms(query)
    if not words or k <= 0:
        return []
    hits = _ranked(conn, words, k, every=True, active_only=active_only)
    if len(hits) < k and len(words) > 1:
        seen = {h.name for h in hits}
        rare = _rarest(conn, words)
        wider = _ranked(conn, rare, k + len(hits), every=False, active_only=active_only)
        hits += [h for h in wider if h.name not in seen][: k - len(hits)]
    return hits


def _rarest(conn: Connection, words: list[str]) -> list[str]:
    """The query's rarest words, as many as keep the widened search within a row budget.

    A word in a large share of the registry says little about relevance (low IDF) yet
    would make the any-word search rank every tool that has it.
    """
    counted: list[tuple[int, str]] = []
    for word in words[:_MAX_WIDEN_TERMS]:
        if conn.dialect.name == "postgresql":
            sql = "SELECT count(*) FROM tf_search WHERE document @@ to_tsquery('english', :q)"
            match = word
        else:
            sql, match = "SELECT count(*) FROM tf_search WHERE tf_search MATCH :q", f'"{word}"'
        counted.append((int(conn.execute(text(sql), {"q": match}).scalar_one()), word))
    counted.sort()
    chosen: list[str] = []
    total = 0
    for count, word in counted:
        if chosen and total + count > WIDEN_BUDGET:
            break
        chosen.append(word)
        total += count
    return chosen


def _ranked(
    conn: Connection, words: list[str], k: int, *, every: bool, active_only: bool
) -> list[SearchHit]:
    status = "AND t.current_status = 'active'" if active_only else ""
    if conn.dialect.name == "postgresql":
        sql, match = _POSTGRESQL, (" & " if every else " | ").join(words)
    else:
        sql, match = _SQLITE, (" AND " if every else " OR ").join(f'"{w}"' for w in words)
    rows = conn.execute(text(sql.format(status=status)), {"q": match, "k": k}).all()
    return [SearchHit(r.name, r.version, r.description, r.status, float(r.score)) for r in rows]
