"""Call records on the calling host first: appended to a journal before the call answers,
written to the registry in batches by one thread, off the call path.

On a PostgreSQL registry, counting a call and auditing it cost a round trip and the server's
work (~0.5-1 ms of a ~1 ms call); on the call path they now cost one ``write`` to a local file.
What the journal promises:

- **No answered call is lost to a crash of its process.** :meth:`CallJournal.append` returns
  only once the records are in the journal file (the kernel's page cache: they survive the
  process being killed, as PostgreSQL's ``synchronous_commit = off`` records survive a
  server process crash; a power loss may lose the last ones, as it may there). The next
  process that opens the same registry on this host writes what the dead one had not
  (:meth:`CallJournal.replay`).
- **Nothing is counted twice.** Each journal has a sequence number per record; the registry
  keeps, per journal, the last one written, in the same transaction as the records
  (``tf_journal_marks``), and a batch writes only what is past it. A journal is replayed by
  one process at a time: its owner holds an exclusive ``flock`` on the file while it lives.
- **Reads see every call made before them** in this process: the registry's reads wait for
  the journal to be written (:meth:`CallJournal.flush`). Other processes see a call a few
  milliseconds later, once its batch is committed.

One line per record: ``[seq, at, *fields]`` as JSON, the fields being what the journal's
``codec`` makes of a record (``calls.py``: the ``CallRecord``'s). A line cut short by a crash
was never acknowledged, and is skipped.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import logging
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, TypeVar

log = logging.getLogger(__name__)

BATCH = 500  # records per transaction
LINGER_S = 0.005  # a batch waits this long for more records (a flush does not wait)
ROTATE_BYTES = 4 * 1024 * 1024  # a fully written journal this large starts a new file
RETRY_S = (0.05, 0.2, 1.0, 5.0)  # waits between failed batches (the records stay journaled)


R = TypeVar("R")


@dataclass(frozen=True)
class JournalEntry(Generic[R]):
    """One journaled record: its place in the journal and the time of the call."""

    seq: int
    at: datetime
    call: R


@dataclass(frozen=True)
class Codec(Generic[R]):
    """How a record becomes a journal line's fields (JSON values) and back."""

    fields: Callable[[R], list[Any]]
    record: Callable[[list[Any]], R]


class CallJournal(Generic[R]):
    """This process's journal of call records for one registry (``key``) in ``directory``.

    ``deliver(journal, entries)`` writes, in one transaction, the entries past the journal's
    mark and the new mark; ``forget(journal)`` drops the mark of a journal fully written.
    """

    def __init__(
        self,
        directory: Path,
        key: str,
        codec: Codec[R],
        deliver: Callable[[str, Sequence[JournalEntry[R]]], None],
        forget: Callable[[str], None],
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self._directory, self._key, self._codec = directory, key, codec
        self._deliver, self._forget = deliver, forget
        self._cond = threading.Condition()
        self._pending: list[JournalEntry[R]] = []
        self._seq = 0
        self._written = 0  # the last seq the registry has
        self._bytes = 0
        self._closed = False
        self._hurry = 0  # flushes waiting: the writer does not linger then
        self._fd = -1
        self.id = ""
        self.replay()
        self._open()
        self._thread = threading.Thread(target=self._run, name="tf-call-journal", daemon=True)
        self._thread.start()
        atexit.register(_close_at_exit, weakref.ref(self))

    def append(self, calls: Sequence[R], at: datetime) -> None:
        """Journal ``calls`` (made at ``at``); once this returns they will be written."""
        stamp = at.isoformat()
        with self._cond:
            if self._closed:
                raise RuntimeError("the call journal is closed")
            entries, lines = [], []
            for call in calls:
                self._seq += 1
                entries.append(JournalEntry(self._seq, at, call))
                fields = [self._seq, stamp, *self._codec.fields(call)]
                lines.append(json.dumps(fields, ensure_ascii=False) + "\n")
            data = "".join(lines).encode("utf-8")
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view) :]
            self._bytes += len(data)
            idle = not self._pending
            self._pending += entries
            if idle:  # the writer waits for a first record; later ones join its batch
                self._cond.notify_all()

    def flush(self, timeout: float | None = 30.0) -> bool:
        """Wait until every record appended so far is in the registry; False on timeout."""
        with self._cond:
            target = self._seq
            end = None if timeout is None else time.monotonic() + timeout
            self._hurry += 1
            self._cond.notify_all()
            try:
                while self._written < target and not self._closed:
                    left = None if end is None else end - time.monotonic()
                    if left is not None and left <= 0:
                        return False
                    self._cond.wait(left)
            finally:
                self._hurry -= 1
            return self._written >= target

    def close(self) -> None:
        """Write what is pending, stop the writer, and remove the journal once written."""
        with self._cond:
            if self._closed:
                return
        self.flush()
        with self._cond:
            self._closed = True
            done = self._written >= self._seq
            self._cond.notify_all()
        self._thread.join(timeout=5)
        if done:
            finished = self._retire()
            with contextlib.suppress(Exception):
                self._forget(finished)
        else:  # left for the next process on this host to replay
            os.close(self._fd)

    def replay(self) -> int:
        """Write the journals earlier processes left for this registry; the count replayed.

        A journal whose owner still lives is locked, and left alone."""
        replayed = 0
        for path in sorted(self._directory.glob(f"{self._key}-*.journal")):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
            except FileNotFoundError:
                continue
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # its process lives
                journal = path.stem.removeprefix(f"{self._key}-")
                entries = _read(path, self._codec)
                for start in range(0, len(entries), BATCH):
                    self._deliver(journal, entries[start : start + BATCH])
                path.unlink()
                with contextlib.suppress(Exception):
                    self._forget(journal)
                replayed += len(entries)
            finally:
                os.close(fd)
        return replayed

    def _open(self) -> None:
        self.id = uuid.uuid4().hex
        path = self._path()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX)  # a new file: nobody else holds it
        self._bytes = 0  # sequence numbers go on across files: a mark is per file

    def _path(self) -> Path:
        return self._directory / f"{self._key}-{self.id}.journal"

    def _retire(self) -> str:
        """Remove the fully written journal file; its id, whose mark may be forgotten."""
        self._path().unlink(missing_ok=True)
        os.close(self._fd)
        return self.id

    def _run(self) -> None:
        failures = 0
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if not self._pending:
                    return
                linger = time.monotonic() + LINGER_S
                while len(self._pending) < BATCH and not (self._hurry or self._closed):
                    left = linger - time.monotonic()
                    if left <= 0:
                        break
                    self._cond.wait(left)
                batch = self._pending[:BATCH]
                journal = self.id
            try:
                self._deliver(journal, batch)
            except Exception as exc:  # the records stay journaled: try again later
                log.warning("writing %d call records failed: %s", len(batch), exc)
                time.sleep(RETRY_S[min(failures, len(RETRY_S) - 1)])
                failures += 1
                continue
            failures = 0
            finished = None
            with self._cond:
                del self._pending[: len(batch)]
                self._written = batch[-1].seq
                if not self._pending and self._bytes >= ROTATE_BYTES and not self._closed:
                    finished = self._retire()
                    self._open()
                self._cond.notify_all()
            if finished is not None:
                with contextlib.suppress(Exception):
                    self._forget(finished)


def _close_at_exit(ref: weakref.ref[CallJournal[Any]]) -> None:
    """A process that ends without closing its registry still writes what it journaled."""
    journal = ref()
    if journal is not None:
        journal.close()


def _read(path: Path, codec: Codec[R]) -> list[JournalEntry[R]]:
    """The whole lines of a journal file (a last line cut short by a crash is skipped)."""
    entries = []
    for raw in path.read_bytes().split(b"\n"):
        try:
            seq, at, *fields = json.loads(raw)
            entries.append(JournalEntry(int(seq), datetime.fromisoformat(at), codec.record(fields)))
        except (ValueError, TypeError):
            continue
    return entries
