"""Watching one jail through its call: every pipe multiplexed, every byte bounded.

One loop, one thread: it writes the request, keeps logs up to their cap (draining the rest),
reads the result frame, answers fetch requests through the host's fetch handler, and kills
the jail at the deadline, at a result larger than its cap, or at garbage on the fetch channel.
No write blocks: a tool that stops reading its fetch answers only hurts itself.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from toolfoundry.sandbox.host.protocols import FetchHandler
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.jail import READY, Jail
from toolfoundry.spec.json_gate import InvalidJson, decode, encode

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
    fetches: int = 0
    returncode: int | None = None


def frame(payload: Any) -> bytes:
    """One length-prefixed JSON frame (written by the JSON gate's encoder)."""
    body = encode(payload).encode("utf-8")
    return MAGIC + len(body).to_bytes(8, "big") + body


def complete(data: bytearray | bytes) -> bool:
    """Whether ``data`` holds exactly one whole frame's worth of bytes (by its header)."""
    return len(data) >= 12 and int.from_bytes(data[4:12], "big") == len(data) - 12


class _Watch:
    def __init__(
        self, jail: Jail, limits: ProcessLimits, deadline: float, fetch: FetchHandler | None
    ) -> None:
        self.jail, self.limits, self.deadline, self.fetch = jail, limits, deadline, fetch
        self.out = Collected()
        self.selector = selectors.DefaultSelector()
        self.outgoing: dict[int, bytes] = {}
        self.fetch_buffer = bytearray()
        self.stdin_fd = -1

    def send(self, fd: int, data: bytes) -> None:
        os.set_blocking(fd, False)
        if fd in self.outgoing:
            self.outgoing[fd] += data
        else:
            self.outgoing[fd] = data
            self.selector.register(fd, selectors.EVENT_WRITE, "write")

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
            self.listen(self.jail.fetch_requests, "fetch")
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
            self._write(fd)
            return False
        chunk = _read(fd)
        if chunk is None:
            return False
        if not chunk:
            self.selector.unregister(fd)
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

    def _write(self, fd: int) -> None:
        data = self.outgoing[fd]
        try:
            written = os.write(fd, data)
        except BlockingIOError:
            return
        except OSError:  # the jail closed its end: nothing more goes there
            written = len(data)
        rest = data[written:]
        if rest:
            self.outgoing[fd] = rest
            return
        del self.outgoing[fd]
        self.selector.unregister(fd)
        stdin = self.jail.process.stdin
        if fd == self.stdin_fd and stdin is not None:
            stdin.close()  # the runner reads its request to end of file

    def _fetch(self, chunk: bytes) -> bool:
        self.fetch_buffer += chunk
        while len(self.fetch_buffer) >= 12:
            if self.fetch_buffer[:4] != MAGIC:
                self.out.broken_fetch = True
                return True
            size = int.from_bytes(self.fetch_buffer[4:12], "big")
            if size > FETCH_REQUEST_CAP:
                self.out.broken_fetch = True
                return True
            if len(self.fetch_buffer) < 12 + size:
                return False
            body = bytes(self.fetch_buffer[12 : 12 + size])
            del self.fetch_buffer[: 12 + size]
            answer = self._answer(body)
            assert self.jail.fetch_answers is not None
            self.send(self.jail.fetch_answers, frame(answer))
        return False

    def _answer(self, body: bytes) -> dict[str, Any]:
        if self.fetch is None:
            return NO_FETCH
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
) -> Collected:
    """Run one call's I/O with a started jail until its result, its end, or the deadline.

    Does not kill the jail: the caller does, whatever happened.
    """
    return _Watch(jail, limits, deadline, fetch).run(request)


def _read(fd: int) -> bytes | None:
    """A chunk, b"" at end of file, None when nothing is there yet."""
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""
