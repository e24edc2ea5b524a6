"""A raw line-by-line client of ``toolfoundry serve`` over stdio (no SDK in between), for the
boundary tests and the stdio fuzz: what a broken or hostile client writes, as it writes it."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .test_mcp_support import env


class RawStdio:
    """``toolfoundry serve`` over stdio, spoken to line by line (no SDK in between)."""

    def __init__(self, db: str, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolfoundry", "serve", "--db", db, "--poll", "0.5"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=env(),
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + b"\n")
        self.proc.stdin.flush()

    def answer(self, request_id: Any, timeout: float = 60) -> dict[str, Any]:
        """The next message with ``request_id`` (notifications in between are skipped)."""
        while True:
            raw = self.lines.get(timeout=timeout)
            raw.decode("utf-8")  # every line the server writes is valid UTF-8 ...
            message = json.loads(raw)  # ... and strict JSON
            if "id" in message and message["id"] == request_id:
                answer: dict[str, Any] = message
                return answer

    def answers(self, *ids: Any, timeout: float = 60) -> dict[Any, dict[str, Any]]:
        """The messages carrying any of ``ids``, read until one of each group has arrived; a
        group is a tuple of ids that answer the same request (``(1, None)``: the answer or a
        parse error that could not read the id)."""
        groups = [group if isinstance(group, tuple) else (group,) for group in ids]
        seen: dict[Any, dict[str, Any]] = {}
        while not all(any(i in seen for i in group) for group in groups):
            raw = self.lines.get(timeout=timeout)
            raw.decode("utf-8")
            message = json.loads(raw)
            if "id" in message and any(message["id"] in group for group in groups):
                seen[message["id"]] = message
        return seen

    def ping(self, request_id: int) -> None:
        self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode())
        assert self.answer(request_id) == {"jsonrpc": "2.0", "id": request_id, "result": {}}

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@contextmanager
def raw_stdio(db: str, cwd: Path) -> Iterator[RawStdio]:
    """A served, initialized stdio connection; closed (and the server gone) afterwards."""
    server = RawStdio(db, cwd)
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    try:
        server.send(json.dumps(init).encode())
        assert "result" in server.answer(0)
        server.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        yield server
    finally:
        server.close()
