"""Search vectors: each tool's sentence embedding, kept with its full-text document, and the
copy a process searches them in.

A tool's vector is written in the transaction that writes its search document (the pointer
move: a new active version, a rollback, an approval) from what the model reads of it, its
name and description (:func:`text_of`); a status change rewrites only the status. Each change
takes the next generation from ``tf_search_clock`` under its row lock, so generations commit
in order. :class:`VectorIndex` keeps the vectors in memory as one float32 matrix and, before a
search, reads the clock (one row) and only the rows of later generations: brute-force cosine
over 10 000 tools is one matrix-vector product (about 1 ms), no vector index needed.

A process without the model (the ``[search]`` extra is optional) writes the row with no
vector; a process with it embeds the tools whose vector is missing or of another model in a
background pass (:meth:`VectorIndex.backfill`: one thread, a batch of :data:`BACKFILL_BATCH`
per write transaction), checking that each tool still points to the version it embedded. A
search never waits for that pass and embeds nothing but its query: until a tool has its
vector it is found by its words alone (at 20 000 tools stored without vectors, embedding a
batch per search made each search take 0.5-2 s).
"""

from __future__ import annotations

import atexit
import logging
import re
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import and_, func, or_, select, text, update
from sqlalchemy.engine import Connection

from toolfoundry.registry.embedder import DIMENSIONS, MODEL_ID, Embedder
from toolfoundry.registry.engine import upsert_insert
from toolfoundry.registry.schema import search_clock, search_vectors, tools, versions

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

log = logging.getLogger(__name__)

# Tools without a vector of the current model that the background pass embeds and stores in
# one write transaction.
BACKFILL_BATCH = 64
# Put before a query as the model embeds it: a need reads as a task, as the tools' texts do
# ("Convert a YAML document to JSON."). Chosen on the 120 training paraphrases of
# tests/registry/search_paraphrases.py (bench/bench_search_ab.py: 99 first against 94, top 3
# 117 both; with look-alikes 87 against 83); the held-out ones were not looked at to choose.
QUERY_PREFIX = "I need to "
_RETRY_AFTER = 60.0  # seconds before a pass that stopped on an error is started again
_KEPT_TEXTS = 8  # vectors computed before their write transaction, by text
_EMBED_BATCH = 32  # texts per model run (padded to the longest of them)
_KEPT_QUERIES = 256  # query vectors kept, by query (about 5 ms of CPU each to compute)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def text_of(name: str, description: str) -> str:
    """What the model reads of a tool: its name's words, then its description."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return f"{' '.join(_WORD.findall(spaced))}: {description}"


# The newest generation (a search reads it with its other counts, in one statement).
CLOCK_SQL = "SELECT generation FROM tf_search_clock WHERE id = 1"
_HIGHEST = select(func.max(tools.c.id))


def tick(conn: Connection) -> int:
    """The next generation, under the clock row's lock (held until the transaction ends)."""
    clock = search_clock.c.generation
    statement = (
        update(search_clock).where(search_clock.c.id == 1).values(generation=clock + 1)
    ).returning(clock)
    return int(conn.execute(statement).scalar_one())


def store(
    conn: Connection, tool_id: int, status: str, vector: bytes | None, model: str | None
) -> None:
    """Write a tool's row (insert or replace) at the next generation."""
    row = {"generation": tick(conn), "model": model, "status": status, "vector": vector}
    insert = upsert_insert(conn.dialect.name)
    conn.execute(
        insert(search_vectors)
        .values(tool_id=tool_id, **row)
        .on_conflict_do_update(index_elements=[search_vectors.c.tool_id], set_=row)
    )


def set_status(conn: Connection, tool_id: int, status: str) -> None:
    """Follow a status change of the tool's current version (the vector stays)."""
    conn.execute(
        update(search_vectors)
        .where(search_vectors.c.tool_id == tool_id)
        .values(status=status, generation=tick(conn))
    )


@dataclass(frozen=True)
class Similarities:
    """A query's cosine similarity to every kept tool (a view of one search)."""

    ids: NDArray[np.int64]
    scores: NDArray[np.float32]
    active: NDArray[np.bool_]
    position: dict[int, int]

    def of(self, tool_id: int) -> float | None:
        """The similarity of one tool (None: it has no vector)."""
        at = self.position.get(tool_id)
        return None if at is None else float(self.scores[at])

    def best(self, n: int, *, active_only: bool) -> list[tuple[int, float]]:
        """The ``n`` most similar tools, best first."""
        import numpy as np

        scores = np.where(self.active, self.scores, -np.inf) if active_only else self.scores
        n = min(n, int(np.isfinite(scores).sum()))
        if n <= 0:
            return []
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(self.ids[i]), float(scores[i])) for i in top]


class VectorIndex:
    """This process's copy of a registry's search vectors.

    Args:
        load: returns the embedder, or None when the model is unavailable (called lazily).
        begin_write: opens a write transaction on the registry (for the backfill).
    """

    def __init__(
        self,
        load: Callable[[], Embedder | None],
        begin_write: Callable[[], AbstractContextManager[Connection]],
    ) -> None:
        self._load = load
        self._begin_write = begin_write
        self._lock = threading.Lock()
        self._generation = -1
        self._rows: dict[int, tuple[bytes, bool]] = {}  # tool id -> (vector, active)
        self._stale: set[int] = set()  # rows without a vector of the current model
        self._matrix: tuple[Any, Any, Any, dict[int, int]] | None = None
        self._unrowed = True  # tools without a vector row may exist (known at the first read)
        self._texts: OrderedDict[str, bytes] = OrderedDict()
        self._queries: OrderedDict[str, Any] = OrderedDict()
        self._pass: threading.Thread | None = None  # the background backfill, while it runs
        self._closed = threading.Event()
        self._retry_at = 0.0  # after an error, no pass starts before this (monotonic)

    @property
    def embedder(self) -> Embedder | None:
        """The model, or None (search is BM25 alone)."""
        return self._load()

    def prepare(self, name: str, description: str) -> None:
        """Embed a tool's text before its write transaction (so the lock is not held while
        the model runs); :meth:`write` finds it."""
        embedder = self._load()
        if embedder is None:
            return
        text = text_of(name, description)
        vector = embedder.embed_one(text).tobytes()
        with self._lock:
            self._texts[text] = vector
            while len(self._texts) > _KEPT_TEXTS:
                self._texts.popitem(last=False)

    def write(
        self, conn: Connection, tool_id: int, name: str, description: str, status: str
    ) -> None:
        """Store the vector of the version a tool now points to (no vector without a model)."""
        embedder = self._load()
        if embedder is None:
            store(conn, tool_id, status, None, None)
            return
        text = text_of(name, description)
        with self._lock:
            vector = self._texts.pop(text, None)
        if vector is None:
            vector = embedder.embed_one(text).tobytes()
        store(conn, tool_id, status, vector, embedder.model)

    def similarities(
        self, conn: Connection, query: str, generation: int | None = None
    ) -> Similarities | None:
        """The query's similarity to every tool with a vector (None without a model).
        ``generation``: the clock as the caller has just read it (:data:`CLOCK_SQL`, with
        its own statement); None: read it here."""
        embedder = self._load()
        if embedder is None:
            return None
        self._refresh(conn, generation)
        self.backfill()  # tools without a vector: embedded off this thread
        with self._lock:
            query_vector = self._queries.get(query)
        if query_vector is None:  # a model often searches again with the same words
            query_vector = embedder.embed_query(QUERY_PREFIX + query)
            with self._lock:
                self._queries[query] = query_vector
                while len(self._queries) > _KEPT_QUERIES:
                    self._queries.popitem(last=False)
        with self._lock:
            matrix = self._matrix
        if matrix is None:
            return None
        import numpy as np

        rows, ids, active, position = matrix
        # einsum, not ``rows @ query``: BLAS's threaded sgemv took 8 ms of CPU (23 ms wall
        # under load) at 10 000 rows where this takes 0.7 ms
        return Similarities(ids, np.einsum("ij,j->i", rows, query_vector), active, position)

    def backfill(self) -> bool:
        """Start the background pass that embeds the tools whose vector is missing or of
        another model, when there may be any (once: a running pass is left alone); return
        whether a pass is running. It returns at once and never runs the model on the
        caller's thread: a search embeds only its query."""
        if self._load() is None:
            return False
        with self._lock:
            if self._pass is not None and self._pass.is_alive():
                return True
            if self._generation < 0:  # not read yet: the first search's read tells
                return False
            if self._closed.is_set() or (not self._stale and not self._unrowed):
                return False
            if time.monotonic() < self._retry_at:
                return False
            self._pass = threading.Thread(
                target=self._backfill_pass, name="toolfoundry-search-vectors", daemon=True
            )
            _passing.add(self)
            self._pass.start()
            return True

    def settle(self, timeout: float | None = None) -> bool:
        """Wait for the background pass to end (``timeout`` seconds at most); whether it
        has."""
        with self._lock:
            running = self._pass
        if running is not None:
            running.join(timeout)
            return not running.is_alive()
        return True

    def close(self) -> None:
        """Stop the background pass after its current batch (and wait for it)."""
        self._closed.set()
        self.settle()

    def fill(self, limit: int = BACKFILL_BATCH, *, after: int = 0) -> int:
        """Embed and store, on this thread, up to ``limit`` tools (of ids above ``after``)
        whose vector is missing or of another model; how many there were. Nothing to do
        costs one query."""
        return len(self._fill(limit, after))

    def _fill(self, limit: int, after: int) -> list[int]:
        embedder = self._load()
        if embedder is None:
            return []
        with self._begin_write() as conn:
            todo = _missing(conn, embedder.model, limit, after)
        if not todo:
            return []
        texts = [text_of(name, description) for _, name, description, _, _ in todo]
        vectors: list[Any] = []
        for at in range(0, len(texts), _EMBED_BATCH):
            if self._closed.is_set():  # closing (or the process exiting): stop between runs
                return []
            vectors.extend(embedder.embed(texts[at : at + _EMBED_BATCH]))
        with self._begin_write() as conn:
            pointed = dict(
                conn.execute(
                    select(tools.c.id, tools.c.current_version).where(
                        tools.c.id.in_([row[0] for row in todo])
                    )
                ).all()
            )
            for (tool_id, _, _, version, status), vector in zip(todo, vectors, strict=True):
                if pointed.get(tool_id) == version:  # not moved since it was read
                    store(conn, tool_id, status, vector.tobytes(), embedder.model)
        done = [row[0] for row in todo]
        with self._lock:
            self._stale.difference_update(done)
        return done

    def _backfill_pass(self) -> None:
        """The background pass: batches in tool id order until none is left (a tool a write
        makes stale behind the cursor is taken by the next pass, which a search starts)."""
        after = 0
        try:
            while not self._closed.is_set():
                done = self._fill(BACKFILL_BATCH, after)
                if not done:
                    with self._lock:
                        self._unrowed = False
                    return
                after = done[-1]
        except Exception:  # a closed or read-only store: searches go on with what there is
            log.warning("search vectors: the background pass stopped", exc_info=True)
            with self._lock:
                self._retry_at = time.monotonic() + _RETRY_AFTER

    def _refresh(self, conn: Connection, generation: int | None = None) -> None:
        if generation is None:
            generation = conn.execute(text(CLOCK_SQL)).scalar()
        if generation is None:
            return
        with self._lock:
            if generation == self._generation:
                return
            since = self._generation
        changed = conn.execute(
            select(
                search_vectors.c.tool_id,
                search_vectors.c.model,
                search_vectors.c.status,
                search_vectors.c.vector,
            ).where(search_vectors.c.generation > since)
        ).all()
        # the first read has every row: a tool without one (stored before vector rows
        # existed, or loaded in bulk) leaves fewer rows than the highest tool id (one probe;
        # tools are never deleted)
        highest = conn.execute(_HIGHEST).scalar() if since < 0 else None
        with self._lock:
            for tool_id, model, status, vector in changed:
                key = int(tool_id)
                if model == MODEL_ID and vector is not None and len(vector) == 4 * DIMENSIONS:
                    self._rows[key] = (bytes(vector), status == "active")
                    self._stale.discard(key)
                else:
                    self._rows.pop(key, None)
                    self._stale.add(key)
            if since < 0:
                self._unrowed = int(highest or 0) > len(self._rows) + len(self._stale)
            self._generation = max(self._generation, int(generation))
            if changed:
                self._matrix = _stacked(self._rows)


# The indexes that have started a background pass: stopped when the process exits, since a
# daemon thread killed inside onnxruntime aborts the interpreter ("terminate called").
_passing: weakref.WeakSet[VectorIndex] = weakref.WeakSet()


@atexit.register
def _stop_passes() -> None:
    for index in list(_passing):
        index.close()


def _stacked(rows: dict[int, tuple[bytes, bool]]) -> tuple[Any, Any, Any, dict[int, int]] | None:
    import numpy as np

    if not rows:
        return None
    ids = np.fromiter(rows, dtype=np.int64, count=len(rows))
    matrix = np.frombuffer(b"".join(v for v, _ in rows.values()), dtype=np.float32)
    active = np.fromiter((a for _, a in rows.values()), dtype=np.bool_, count=len(rows))
    position = {int(tool_id): i for i, tool_id in enumerate(ids)}
    return matrix.reshape(len(rows), DIMENSIONS), ids, active, position


def _missing(
    conn: Connection, model: str, limit: int, after: int = 0
) -> list[tuple[int, str, str, int, str]]:
    """(id, name, description, version, status) of tools (of ids above ``after``, in id
    order) whose vector is missing or not of ``model``."""
    query = (
        select(
            tools.c.id,
            tools.c.name,
            versions.c.description,
            tools.c.current_version,
            tools.c.current_status,
        )
        .join(
            versions,
            and_(versions.c.tool_id == tools.c.id, versions.c.version == tools.c.current_version),
        )
        .outerjoin(search_vectors, search_vectors.c.tool_id == tools.c.id)
        .where(
            tools.c.id > after,
            or_(
                search_vectors.c.tool_id.is_(None),
                search_vectors.c.model.is_(None),
                search_vectors.c.model != model,
            ),
        )
        .order_by(tools.c.id)
        .limit(limit)
    )
    return [(int(i), str(n), str(d), int(v), str(s)) for i, n, d, v, s in conn.execute(query)]
