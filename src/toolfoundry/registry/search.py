"""Full-text search over tools: SQLite FTS5 (bm25) or PostgreSQL tsvector (ts_rank).

The index holds one document per tool, built from its current version: the name (weighted
highest), the description, and the parameters' names and descriptions.

A query first asks for tools matching every word (few rows to rank, and the best matches);
only when that finds fewer than ``k`` does it widen to any of its rarer words, so a model's
loose phrasing ("turn a title into a url slug") still finds the tool. Ranking every tool that
matches one common word is what makes OR-only search slow on a large registry, so the widened
search keeps to the words whose matches fit a row budget (always at least the rarest word),
and offers a widened hit only when the words it has weigh enough of the query (the relevance
floor below): a tool that shares one common word with a need is not a match for it.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from sqlalchemy import bindparam, select, text
from sqlalchemy.engine import Connection

from toolfoundry.registry.records import SearchHit
from toolfoundry.registry.schema import tools, versions

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
    conn: Connection,
    tool_id: int,
    name: str,
    description: str,
    params: dict[str, Any],
    status: str,
) -> None:
    """(Re)index a tool from the version its pointer now names."""
    n, d, p = document(name, description, params)
    values = {"id": tool_id, "n": n, "d": d, "p": p, "s": status}
    if conn.dialect.name == "postgresql":
        conn.execute(
            text(
                "INSERT INTO tf_search (tool_id, document, status) VALUES (:id, "
                "setweight(to_tsvector('english', :n), 'A') || "
                "setweight(to_tsvector('english', :d), 'B') || "
                "setweight(to_tsvector('english', :p), 'C'), :s) "
                "ON CONFLICT (tool_id) DO UPDATE "
                "SET document = EXCLUDED.document, status = EXCLUDED.status"
            ),
            values,
        )
        return
    conn.execute(text("DELETE FROM tf_search WHERE rowid = :id"), {"id": tool_id})
    conn.execute(
        text(
            "INSERT INTO tf_search (rowid, name, description, params, status) "
            "VALUES (:id, :n, :d, :p, :s)"
        ),
        values,
    )


def set_status(conn: Connection, tool_id: int, status: str) -> None:
    """Follow a status change of the tool's current version."""
    key = "tool_id" if conn.dialect.name == "postgresql" else "rowid"
    conn.execute(
        text(f"UPDATE tf_search SET status = :s WHERE {key} = :id"), {"s": status, "id": tool_id}
    )


# Rank and limit inside the index, then fetch names and descriptions for the k rows only.
_SQLITE = """
WITH m AS (
  SELECT rowid AS id, bm25(tf_search, 10.0, 3.0, 1.0, 0.0) AS rank FROM tf_search
  WHERE tf_search MATCH :q {status} ORDER BY rank LIMIT :k
)
SELECT t.id, t.name, t.current_version AS version, v.description,
       t.current_status AS status, -m.rank AS score
FROM m
JOIN tf_tools t ON t.id = m.id
JOIN tf_versions v ON v.tool_id = t.id AND v.version = t.current_version
ORDER BY m.rank, t.name
"""

_POSTGRESQL = """
WITH q AS (SELECT to_tsquery('english', :q) AS query),
m AS MATERIALIZED (
  SELECT s.tool_id, ts_rank(s.document, q.query) AS score FROM tf_search s, q
  WHERE s.document @@ q.query {status} ORDER BY score DESC, s.tool_id LIMIT :k
)
SELECT t.id, t.name, t.current_version AS version, v.description, t.current_status AS status,
       m.score
FROM m
JOIN tf_tools t ON t.id = m.tool_id
JOIN tf_versions v ON v.tool_id = t.id AND v.version = t.current_version
ORDER BY m.score DESC, t.name
"""
# "Does this word match more than the budget?" stops counting at budget + 1 rows. On
# PostgreSQL a word its english configuration drops (a stopword there) counts -1: it is no
# evidence either way.
_SQLITE_COUNT = "SELECT count(*) FROM (SELECT 1 FROM tf_search WHERE tf_search MATCH :q LIMIT :cap)"
_POSTGRESQL_COUNT = (
    "SELECT CASE WHEN numnode(to_tsquery('english', :q)) = 0 THEN -1 ELSE "
    "(SELECT count(*) FROM (SELECT 1 FROM tf_search "
    "WHERE document @@ to_tsquery('english', :q) LIMIT :cap) c) END"
)
# Which of the given tools have the word.
_SQLITE_HAS = text(
    "SELECT rowid FROM tf_search WHERE tf_search MATCH :q AND rowid IN :ids"
).bindparams(bindparam("ids", expanding=True))
_POSTGRESQL_HAS = text(
    "SELECT tool_id FROM tf_search "
    "WHERE tool_id = ANY(:ids) AND document @@ to_tsquery('english', :q)"
)

# A hit of the widened (any-word) search is offered only when the query words it has carry
# at least this share of the query's information, each word weighted by its inverse document
# frequency as bm25 weighs it (``relevance``). A tool that shares one common word with an
# unrelated need ("send an email to my team" and validate_email, "convert a video to mp4" and
# every convert_* tool) falls below it; one with the rarer words of the need stays. Hits that
# have every word (the first, all-words search) are 1.0. Tuned on the library and queries of
# tests/registry/search_library.py: bench/bench_search_relevance.py prints the sweep.
RELEVANCE_FLOOR = 0.35


def search(
    conn: Connection,
    query: str,
    k: int,
    *,
    active_only: bool = True,
    floor: float = RELEVANCE_FLOOR,
) -> list[SearchHit]:
    """The ``k`` best-ranked tools for ``query`` whose relevance reaches ``floor`` (0 keeps
    every match); only active ones unless told otherwise. The first hit carries its
    parameters schema."""
    words = terms(query)
    if not words or k <= 0:
        return []
    hits = [hit for _, hit in _ranked(conn, words, k, every=True, active_only=active_only)]
    if len(hits) < k and len(words) > 1:
        seen = {h.name for h in hits}
        counts = _counts(conn, words[:_MAX_WIDEN_TERMS])
        wider = [
            (tool_id, hit)
            for tool_id, hit in _ranked(
                conn, _rarest(counts), k + len(hits), every=False, active_only=active_only
            )
            if hit.name not in seen
        ]
        weighed = _weighed(conn, counts, wider)
        hits += [h for h in weighed if h.relevance >= floor][: k - len(hits)]
    return _with_parameters(conn, hits)


def _counts(conn: Connection, words: list[str]) -> list[tuple[int, str]]:
    """How many tools have each word (counted up to the row budget + 1; -1: not a word the
    index knows, a PostgreSQL stopword)."""
    postgres = conn.dialect.name == "postgresql"
    sql = text(_POSTGRESQL_COUNT if postgres else _SQLITE_COUNT)
    counted: list[tuple[int, str]] = []
    for word in words:
        match = word if postgres else f'"{word}"'
        found = conn.execute(sql, {"q": match, "cap": WIDEN_BUDGET + 1}).scalar_one()
        counted.append((int(found), word))
    return counted


def _rarest(counts: list[tuple[int, str]]) -> list[str]:
    """The query's rarest words, as many as keep the widened search within a row budget.

    A word in a large share of the registry says little about relevance (low IDF) yet
    would make the any-word search rank every tool that has it.
    """
    chosen: list[str] = []
    total = 0
    for count, word in sorted(c for c in counts if c[0] >= 0):
        if chosen and total + count > WIDEN_BUDGET:
            break
        chosen.append(word)
        total += count
    return chosen


def _weighed(
    conn: Connection, counts: list[tuple[int, str]], hits: list[tuple[int, SearchHit]]
) -> list[SearchHit]:
    """``hits`` with their relevance: the IDF weight of the query words each has, over that
    of all the query's words (a word no tool has weighs most: the need is about it)."""
    if not hits:
        return []
    # tools are never deleted, so the highest id is how many there are (one index probe)
    total = int(conn.execute(text("SELECT max(id) FROM tf_tools")).scalar() or 0)
    # a number in a need is a value ("split 100 dollars"), not what the need is about
    weights = {w: _idf(total, n) for n, w in counts if n >= 0 and not w.isdigit()}
    whole = sum(weights.values())
    ids = [tool_id for tool_id, _ in hits]
    postgres = conn.dialect.name == "postgresql"
    held: dict[int, float] = dict.fromkeys(ids, 0.0)
    for count, word in counts:
        if count <= 0 or word not in weights:
            continue
        sql, match = (_POSTGRESQL_HAS, word) if postgres else (_SQLITE_HAS, f'"{word}"')
        for tool_id in conn.execute(sql, {"q": match, "ids": ids}).scalars():
            held[int(tool_id)] += weights[word]
    return [
        replace(hit, relevance=round(held[tool_id] / whole, 3) if whole else 0.0)
        for tool_id, hit in hits
    ]


def _idf(total: int, count: int) -> float:
    """bm25's inverse document frequency of a word ``count`` of ``total`` tools have."""
    total = max(total, count)
    return math.log(1 + (total - count + 0.5) / (count + 0.5))


def _with_parameters(conn: Connection, hits: list[SearchHit]) -> list[SearchHit]:
    """``hits`` with the top one's parameters schema (one indexed read)."""
    if not hits:
        return hits
    top = hits[0]
    query = (
        select(versions.c.parameters)
        .join(tools, tools.c.id == versions.c.tool_id)
        .where(tools.c.name == top.name, versions.c.version == top.version)
    )
    parameters = conn.execute(query).scalar_one_or_none()
    return [replace(top, parameters=parameters if isinstance(parameters, dict) else {}), *hits[1:]]


def _ranked(
    conn: Connection, words: list[str], k: int, *, every: bool, active_only: bool
) -> list[tuple[int, SearchHit]]:
    if not words:
        return []
    if conn.dialect.name == "postgresql":
        status = "AND s.status = 'active'" if active_only else ""
        sql, match = _POSTGRESQL, (" & " if every else " | ").join(words)
    else:
        status = "AND status = 'active'" if active_only else ""
        sql, match = _SQLITE, (" AND " if every else " OR ").join(f'"{w}"' for w in words)
    rows = conn.execute(text(sql.format(status=status)), {"q": match, "k": k}).all()
    return [
        (int(r.id), SearchHit(r.name, r.version, r.description, r.status, float(r.score)))
        for r in rows
    ]
