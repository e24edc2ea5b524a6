"""Search over tools: full text (SQLite FTS5 bm25, PostgreSQL tsvector ts_rank), and, with the
``[search]`` extra, sentence vectors (registry/vectors.py): hybrid ranking.

The full-text index holds one document per tool, built from its current version: the name
(weighted highest), the description, and the parameters' names and descriptions.

A query first asks for tools matching every word (few rows to rank, and the best matches);
when that finds fewer than ``k`` (or the model is there to rank them) it widens to any of its
rarer words, so a model's loose phrasing ("turn a title into a url slug") still finds the
tool. Ranking every tool that matches one common word is what makes OR-only search slow on a
large registry, so the widened search keeps to the words whose matches fit a row budget
(always at least the rarest word). Each hit's relevance is the share of the query's
information its words carry; one under the relevance floor is returned marked ``weak`` (with
the words it matched), never hidden: a model that gets nothing concludes no tool exists.

With the embedding model, the tools most similar in meaning join the full-text matches (a
need put in other words shares no word with its tool), and every hit is ranked by similarity
plus a share of relevance; strength then weighs both (see the constants below).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from sqlalchemy import and_, bindparam, select, text
from sqlalchemy.engine import Connection

from toolfoundry.registry.records import SearchHit
from toolfoundry.registry.schema import tools, versions
from toolfoundry.registry.vectors import CLOCK_SQL, Similarities, VectorIndex

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
# evidence either way. One statement counts every word (a column each, ``{i}`` the word's
# place), with how many tools there are: tools are never deleted, so the highest id (one
# index probe).
_SQLITE_COUNT = (
    "(SELECT count(*) FROM (SELECT 1 FROM tf_search WHERE tf_search MATCH :q{i} LIMIT :cap))"
)
_POSTGRESQL_COUNT = (
    "(SELECT CASE WHEN numnode(to_tsquery('english', :q{i})) = 0 THEN -1 ELSE "
    "(SELECT count(*) FROM (SELECT 1 FROM tf_search "
    "WHERE document @@ to_tsquery('english', :q{i}) LIMIT :cap) c) END)"
)
_TOOLS = "(SELECT max(id) FROM tf_tools)"
# Which of the given tools have the word: one statement for all the words, a UNION ALL arm
# each, naming the word by its place.
_SQLITE_HAS = "SELECT rowid, {i} FROM tf_search WHERE tf_search MATCH :q{i} AND rowid IN :ids"
_POSTGRESQL_HAS = (
    "SELECT tool_id, {i} FROM tf_search "
    "WHERE tool_id = ANY(:ids) AND document @@ to_tsquery('english', :q{i})"
)

# A hit is strong on words when the query words it has carry at least this share of the
# query's information, each word weighted by its inverse document frequency as bm25 weighs it
# (``relevance``); under it, it is weak. A tool that shares one common word with an unrelated
# need ("send an email to my team" and validate_email, "convert a video to mp4" and every
# convert_* tool) falls below it; one with the rarer words of the need stays. Hits that have
# every word (the first, all-words search) are 1.0. Tuned on the library and queries of
# tests/registry/search_library.py: bench/bench_search_relevance.py prints the sweep.
RELEVANCE_FLOOR = 0.35
# With the embedding model (registry/embedder.py) the hits are ranked by the cosine similarity
# of the query and the tool's name and description plus this share of their relevance, and a
# hit is strong when it has every word, or is similar enough in meaning (SIMILAR), or has
# enough of the words and some similarity (SIMILAR_WITH_WORDS: a shared common word alone, as
# "convert a word document to pdf" and yaml_to_json, is not enough). A hit with no word in
# common and a similarity under NOISE is no hit. Tuned with the bench's paraphrased needs.
LEXICAL_WEIGHT = 0.1
SIMILAR = 0.5
SIMILAR_WITH_WORDS = 0.3
NOISE = 0.2
# The most similar tools considered next to the full-text matches.
VECTOR_CANDIDATES = 20


def search(
    conn: Connection,
    query: str,
    k: int,
    *,
    active_only: bool = True,
    floor: float = RELEVANCE_FLOOR,
    vectors: VectorIndex | None = None,
) -> list[SearchHit]:
    """The ``k`` best tools for ``query``, strong hits first, then weak ones (hits whose
    relevance is under ``floor``, or, with the embedding model, too little alike: marked, not
    dropped); only active ones unless told otherwise. The first hit carries its parameters
    schema."""
    words = terms(query)
    if not words or k <= 0:
        return []
    counts: list[tuple[int, str]] = []
    total = 0
    similar = None
    if vectors is not None and vectors.embedder is not None:
        # hybrid weighs every hit's words: count them first, the vectors' clock with them
        # (one round trip fewer on PostgreSQL)
        counts, total, generation = _counts(conn, words[:_MAX_WIDEN_TERMS], clock=True)
        similar = vectors.similarities(conn, query, generation)
    exact = _ranked(conn, words, k, every=True, active_only=active_only)
    found = {tool_id: replace(hit, matched=tuple(words)) for tool_id, hit in exact}
    lexical = list(found)
    loose: list[tuple[int, SearchHit]] = []
    if len(words) > 1 and (len(exact) < k or similar is not None):
        if not counts:
            counts, total, _ = _counts(conn, words[:_MAX_WIDEN_TERMS])
        loose = [
            (tool_id, hit)
            for tool_id, hit in _ranked(
                conn, _rarest(counts), k + len(exact), every=False, active_only=active_only
            )
            if tool_id not in found
        ]
    if similar is not None:
        near = [i for i, _ in similar.best(VECTOR_CANDIDATES, active_only=active_only)]
        known = {i for i, _ in loose} | set(found)
        loose += _described(conn, [i for i in near if i not in known], active_only)
    lexical += [i for i, _ in loose if i not in lexical]
    for tool_id, hit in _weighed(conn, counts, total, loose):
        found[tool_id] = hit
    hits = [_judged(found[i], similar, i, floor) for i in lexical]
    if similar is not None:
        hits = [h for h in hits if h.matched or (h.similarity or 0.0) >= NOISE]
        hits.sort(key=lambda h: (h.strength != "strong", -h.score))
    else:  # full-text order (all words first), strong hits before weak ones
        hits.sort(key=lambda h: h.strength != "strong")
    return _with_parameters(conn, hits[:k])


def _judged(hit: SearchHit, similar: Similarities | None, tool_id: int, floor: float) -> SearchHit:
    """``hit`` with its strength (and, with the model, its similarity and hybrid score)."""
    if similar is None:
        return replace(hit, strength="strong" if hit.relevance >= floor else "weak")
    similarity = similar.of(tool_id)
    alike = similarity if similarity is not None else 0.0
    strong = (
        hit.relevance >= 1.0
        or alike >= SIMILAR
        or (hit.relevance >= floor and alike >= SIMILAR_WITH_WORDS)
    )
    return replace(
        hit,
        strength="strong" if strong else "weak",
        similarity=None if similarity is None else round(similarity, 3),
        score=round(alike + LEXICAL_WEIGHT * hit.relevance, 4),
    )


# Statements built once (building one costs more CPU than running it on an index).
_DESCRIBED = (
    select(
        tools.c.id,
        tools.c.name,
        tools.c.current_version,
        versions.c.description,
        tools.c.current_status,
    )
    .join(
        versions,
        and_(versions.c.tool_id == tools.c.id, versions.c.version == tools.c.current_version),
    )
    .where(tools.c.id.in_(bindparam("ids", expanding=True)))
)
_PARAMETERS = (
    select(versions.c.parameters)
    .join(tools, tools.c.id == versions.c.tool_id)
    .where(tools.c.name == bindparam("name"), versions.c.version == bindparam("version"))
)


def _described(conn: Connection, ids: list[int], active_only: bool) -> list[tuple[int, SearchHit]]:
    """Hits for tools found by similarity alone (their current name, version, description)."""
    if not ids:
        return []
    rows = {int(r[0]): r for r in conn.execute(_DESCRIBED, {"ids": ids})}
    out = []
    for tool_id in ids:  # most similar first
        row = rows.get(tool_id)
        if row is None or (active_only and row[4] != "active"):
            continue
        out.append((tool_id, SearchHit(str(row[1]), int(row[2]), str(row[3]), str(row[4]), 0.0)))
    return out


def _counts(
    conn: Connection, words: list[str], *, clock: bool = False
) -> tuple[list[tuple[int, str]], int, int | None]:
    """How many tools have each word (counted up to the row budget + 1; -1: not a word the
    index knows, a PostgreSQL stopword), how many tools there are, and (``clock``) the
    search vectors' generation (registry/vectors.py; None when not asked)."""
    postgres = conn.dialect.name == "postgresql"
    one = _POSTGRESQL_COUNT if postgres else _SQLITE_COUNT
    columns = [*(one.format(i=i) for i in range(len(words))), _TOOLS]
    if clock:
        columns.append(f"({CLOCK_SQL})")
    params: dict[str, Any] = {f"q{i}": _match(conn, w) for i, w in enumerate(words)}
    row = conn.execute(
        text(f"SELECT {', '.join(columns)}"), {**params, "cap": WIDEN_BUDGET + 1}
    ).one()
    n = len(words)
    counted = [(int(c), w) for c, w in zip(row[:n], words, strict=True)]
    generation = int(row[n + 1]) if clock and row[n + 1] is not None else None
    return counted, int(row[n] or 0), generation


def _match(conn: Connection, word: str) -> str:
    """``word`` as the full-text query of one word (FTS5 takes it quoted)."""
    return word if conn.dialect.name == "postgresql" else f'"{word}"'


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
    conn: Connection,
    counts: list[tuple[int, str]],
    total: int,
    hits: list[tuple[int, SearchHit]],
) -> list[tuple[int, SearchHit]]:
    """``hits`` with their relevance, the IDF weight of the query words each has over that of
    all the query's words (a word no tool has weighs most: the need is about it), and those
    words (``total``: how many tools there are)."""
    if not hits:
        return []
    # a number in a need is a value ("split 100 dollars"), not what the need is about
    weights = {w: _idf(total, n) for n, w in counts if n >= 0 and not w.isdigit()}
    whole = sum(weights.values())
    ids = [tool_id for tool_id, _ in hits]
    had: dict[int, set[int]] = {tool_id: set() for tool_id in ids}
    asked = [i for i, (n, w) in enumerate(counts) if n > 0 and w in weights]
    if asked:
        postgres = conn.dialect.name == "postgresql"
        arm = _POSTGRESQL_HAS if postgres else _SQLITE_HAS
        sql = text(" UNION ALL ".join(arm.format(i=i) for i in asked))
        if not postgres:
            sql = sql.bindparams(bindparam("ids", expanding=True))
        params = {f"q{i}": _match(conn, counts[i][1]) for i in asked}
        for tool_id, i in conn.execute(sql, {**params, "ids": ids}):
            had[int(tool_id)].add(int(i))
    held = {tool_id: [counts[i][1] for i in sorted(had[tool_id])] for tool_id in ids}
    return [
        (
            tool_id,
            replace(
                hit,
                relevance=round(sum(weights[w] for w in held[tool_id]) / whole, 3)
                if whole
                else 0.0,
                matched=tuple(held[tool_id]),
            ),
        )
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
    found = conn.execute(_PARAMETERS, {"name": top.name, "version": top.version})
    parameters = found.scalar_one_or_none()
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
