"""Watching one jail through its call: every pipe multiplexed, every byte bounded.

One loop, one thread: it writes the request, keeps logs up to their cap (draining the rest),
reads the result frame, answers fetch requests through the host's fetch handler, and kills
the jail at the deadline, at a result larger than its cap, at garbage on the fetch channel or
at more fetch requests than a call may send. No write blocks: a tool that stops reading its
fetch answers only hurts itself.

The fetch channel is one request at a time, as the runner's ``fetch`` uses it: the next
request is read only once the previous answer is in the pipe, so a tool that floods requests
without reading answers finds its own pipe full and stalls; the host holds at most one answer
and one read of requests for it. Queued bytes leave through :class:`Outgoing` (a queue of
chunks, each written from an offset: linear, never re-concatenated). The deadline is checked
before each ready pipe is handled and before each fetch request is answered, so no run of
host work outlives it by more than one step.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from toolfoundry.base.json_gate import InvalidJson, decode, encode
from toolfoundry.sandbox.host.protocols import FetchHandler
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.jail import READY, Jail
from toolfoundry.spec.limits import FETCH_REQUESTS

MAGIC = b"TFR1"
FRAME_SLACK = 64 * 1024  # an error message and the frame header on top of the value cap
OOM_POLL_S = 0.05  # how often a call's group is checked for a kill at its memory budget
FETCH_REQUEST_CAP = 8 * 1024 * 1024  # a base64 request body of the fetch policy's 1 MiB, and more
NO_FETCH = {
    "error": {
        "kind": "capability_denied",
        "message": "fetch is not allowed: this tool has no network capability",
    }
}


@dataclass
class Collected:
    """What came out of a jail."""

    result: bytearray = field(default_factory=bytearray)
    logs: bytearray = field(default_factory=bytearray)
    logs_dropped: int = 0
    timed_out: bool = False
    result_overflow: bool = False
    broken_fetch: bool = False
    fetch_flood: bool = False
    fetch_limit: int = FETCH_REQUESTS  # the call's max_requests, which a flood is read against
    fetches: int = 0
    fetch_frames: int = 0
    returncode: int | None = None


def frame(payload: Any) -> bytes:
    """One length-prefixed JSON frame (written by the JSON gate's encoder)."""
    body = encode(payload).encode("utf-8")
    return MAGIC + len(body).to_bytes(8, "big") + body


def fetch_frames_cap(max_requests: int) -> int:
    """The fetch requests one call may send before it is ended as a flood: its
    ``max_requests`` (each answered, or refused once the tool has no network or is past a
    limit), then as many again, all refused; one home for both tiers' limit, ``[fetch]
    max_requests``, so a configured value is the Python tier's as much as JavaScript's."""
    return 2 * max_requests


def complete(data: bytearray | bytes) -> bool:
    """Whether ``data`` holds exactly one whole frame's worth of bytes (by its header)."""
    return len(data) >= 12 and int.from_bytes(data[4:12], "big") == len(data) - 12


_NO_FETCH_FRAME = frame(NO_FETCH)


class Outgoing:
    """Bytes waiting for one non-blocking pipe: chunks in order, the first written from an
    offset, so queueing and writing cost what is written (no re-concatenation)."""

    def __init__(self) -> None:
        self._chunks: deque[bytes] = deque()
        self._offset = 0
        self.size = 0

    def add(self, data: bytes) -> None:
        """Queue ``data`` after what is queued."""
        if data:
            self._chunks.append(data)
            self.size += len(data)

    def write(self, fd: int) -> None:
        """Write what the pipe takes now; all of it is dropped when the reader is gone."""
        while self._chunks:
            head = self._chunks[0]
            try:
                written = os.write(fd, memoryview(head)[self._offset :])
            except BlockingIOError:
                return
            except OSError:  # the jail closed its end: nothing more goes there
                self._chunks.clear()
                self._offset = self.size = 0
                return
            self.size -= written
            self._offset += written
            if self._offset < len(head):
                return  # the pipe is full
            self._chunks.popleft()
            self._offset = 0


class _Watch:
    def __init__(
        self,
        jail: Jail,
        limits: ProcessLimits,
        deadline: float,
        fetch: FetchHandler | None,
        max_requests: int,
    ) -> None:
        self.jail, self.limits, self.deadline, self.fetch = jail, limits, deadline, fetch
        self.out = Collected(fetch_limit=max_requests)
        self.frames_cap = fetch_frames_cap(max_requests)
        self.selector = selectors.DefaultSelector()
        self.outgoing: dict[int, Outgoing] = {}
        self.fetch_buffer = bytearray()
        self.fetch_reading = False  # whether the fetch request pipe is being read
        self.fetch_ended = False  # its end of file was read
        self.stdin_fd = -1

    def send(self, fd: int, data: bytes) -> None:
        queue = self.outgoing.get(fd)
        if queue is None:
            os.set_blocking(fd, False)
            queue = self.outgoing[fd] = Outgoing()
            self.selector.register(fd, selectors.EVENT_WRITE, "write")
        queue.add(data)

    def listen(self, fd: int, role: str) -> None:
        os.set_blocking(fd, False)
        self.selector.register(fd, selectors.EVENT_READ, role)

    def run(self, request: bytes) -> Collected:
        process = self.jail.process
        assert process.stdin is not None
        self.stdin_fd = process.stdin.fileno()
        self.send(self.stdin_fd, request)
        self.listen(self.jail.result_read, "result")
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                self.listen(stream.fileno(), "log")
        if self.jail.fetch_requests is not None:
            os.set_blocking(self.jail.fetch_requests, False)
            self._read_fetch(True)
        with self.selector:
            while self.selector.get_map():
                remaining = self.deadline - time.monotonic()
                if remaining <= 0:
                    self.out.timed_out = True
                    return self.out
                group = self.jail.group
                if group is not None:  # a kill for the group's budget ends the call at once
                    remaining = min(remaining, OOM_POLL_S)
                for key, _ in self.selector.select(remaining):
                    if time.monotonic() >= self.deadline:
                        self.out.timed_out = True
                        return self.out
                    if self._step(int(key.fd), str(key.data)):
                        return self.out
                if group is not None and group.oom_killed():
                    return self.out
        try:
            process.wait(max(0.0, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:  # the jail closed its pipes but lives on
            self.out.timed_out = True
        return self.out

    def _step(self, fd: int, role: str) -> bool:
        """Handle one ready fd; True when the watch is over."""
        if role == "write":
            return self._write(fd)
        chunk = _read(fd)
        if chunk is None:
            return False
        if not chunk:
            self.selector.unregister(fd)
            if role == "fetch":  # at its end: never read again
                self.fetch_reading, self.fetch_ended = False, True
            return False
        if role == "log":
            self._keep_log(chunk)
            return False
        if role == "fetch":
            return self._fetch(chunk)
        if not self.jail.ready and chunk[:1] == READY:
            self.jail.ready, chunk = True, chunk[1:]
        self.out.result += chunk
        if len(self.out.result) > self.limits.output_bytes + FRAME_SLACK:
            self.out.result_overflow = True
            return True
        if complete(self.out.result):
            # the runner flushed the tool's output before its frame: take what is in the
            # pipes and stop, without waiting for the jail to exit
            self._drain_logs()
            return True
        return False

    def _write(self, fd: int) -> bool:
        """Write what ``fd`` takes; True when the watch is over."""
        queue = self.outgoing[fd]
        queue.write(fd)
        if queue.size:
            return False
        del self.outgoing[fd]
        self.selector.unregister(fd)
        stdin = self.jail.process.stdin
        if fd == self.stdin_fd and stdin is not None:
            stdin.close()  # the runner reads its request to end of file
        if fd == self.jail.fetch_answers:
            return self._next_fetch()  # the answer is out: the next request may be served
        return False

    def _read_fetch(self, on: bool) -> None:
        """Read the fetch request pipe, or leave it unread (its writer then stalls)."""
        fd = self.jail.fetch_requests
        if fd is None or self.fetch_ended or on == self.fetch_reading:
            return
        if on:
            self.selector.register(fd, selectors.EVENT_READ, "fetch")
        else:
            self.selector.unregister(fd)
        self.fetch_reading = on

    def _fetch(self, chunk: bytes) -> bool:
        self.fetch_buffer += chunk
        return self._next_fetch()

    def _next_fetch(self) -> bool:
        """Answer the next whole request in the buffer once the last answer is out, or read on
        for one; True when the watch is over."""
        answers = self.jail.fetch_answers
        if answers is not None and answers in self.outgoing:
            self._read_fetch(False)  # one request at a time: its answer goes out first
            return False
        buffer = self.fetch_buffer
        if len(buffer) >= 4 and buffer[:4] != MAGIC:
            self.out.broken_fetch = True
            return True
        size = int.from_bytes(buffer[4:12], "big") if len(buffer) >= 12 else 0
        if size > FETCH_REQUEST_CAP:
            self.out.broken_fetch = True
            return True
        if len(buffer) < 12 or len(buffer) < 12 + size:
            self._read_fetch(True)
            return False
        if time.monotonic() >= self.deadline:
            self.out.timed_out = True
            return True
        self.out.fetch_frames += 1
        if self.out.fetch_frames > self.frames_cap:
            self.out.fetch_flood = True
            return True
        body = bytes(buffer[12 : 12 + size])
        del buffer[: 12 + size]
        self._read_fetch(False)
        assert answers is not None
        self.send(answers, _NO_FETCH_FRAME if self.fetch is None else frame(self._answer(body)))
        return False

    def _answer(self, body: bytes) -> dict[str, Any]:
        assert self.fetch is not None
        try:
            request = decode(body)  # through the JSON gate, as the JavaScript tier's requests
        except InvalidJson as exc:  # a fetch the host will not read is one it will not make
            return {"error": {"kind": "capability_denied", "message": f"fetch: {exc}"}}
        if not isinstance(request, dict):
            return {"error": {"kind": "runtime_error", "message": "fetch: malformed request"}}
        if time.monotonic() >= self.deadline:
            return {"error": {"kind": "timeout", "message": "fetch: the time budget is spent"}}
        self.out.fetches += 1
        try:
            return self.fetch.handle(request)
        except Exception as exc:  # a handler must not raise; if one does, the tool sees it
            return {"error": {"kind": "runtime_error", "message": f"fetch failed: {exc}"}}

    def _keep_log(self, chunk: bytes) -> None:
        room = max(0, self.limits.log_bytes - len(self.out.logs))
        self.out.logs += chunk[:room]
        self.out.logs_dropped += len(chunk) - min(room, len(chunk))

    def _drain_logs(self) -> None:
        for key in list(self.selector.get_map().values()):
            if key.data == "log":
                for _ in range(64):  # bounded: a tool still printing from a thread is cut off
                    if time.monotonic() >= self.deadline:
                        return
                    chunk = _read(int(key.fd))
                    if not chunk:
                        break
                    self._keep_log(chunk)


def watch(
    jail: Jail,
    request: bytes,
    limits: ProcessLimits,
    deadline: float,
    fetch: FetchHandler | None = None,
    max_requests: int = FETCH_REQUESTS,
) -> Collected:
    """Run one call's I/O with a started jail until its result, its end, or the deadline;
    ``fetch`` answers the tool's fetch requests (None refuses each), ``max_requests`` is the
    call's (its fetch provider's), read by the flood's cap (:func:`fetch_frames_cap`).

    Does not kill the jail: the caller does, whatever happened.
    """
    return _Watch(jail, limits, deadline, fetch, max_requests).run(request)


def _read(fd: int) -> bytes | None:
    """A chunk, b"" at end of file, None when nothing is there yet."""
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""
