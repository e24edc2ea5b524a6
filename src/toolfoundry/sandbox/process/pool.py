"""Warm workers: jails started ahead of time, each past interpreter start-up, waiting on stdin.

A worker takes exactly one call and exits; a background thread starts replacements so the
call path never pays for bwrap and the interpreter. Workers share nothing: each is its own
jail (own PID namespace, no fd but its own three pipes and result pipe), so a tool cannot
reach the pool, the next call, or another worker's stdin.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from typing import Any

from toolfoundry.sandbox.host.protocols import FetchProvider
from toolfoundry.sandbox.process.admission import Admission
from toolfoundry.sandbox.process.bwrap import BwrapExecutor, prepare
from toolfoundry.sandbox.process.exchange import exchange
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.jail import Jail, JailConfig, JailUnavailable, spawn
from toolfoundry.spec import CallResult, ErrorKind

READY_TIMEOUT_S = 10.0


class WarmPool:
    """An Executor with ``size`` pre-started jails; falls back to a cold jail when empty.

    Args:
        size: how many idle workers to keep.
        config: how jails are built.
        packages: installed packages the warm workers mount; a call allowed other packages
            runs in a cold jail that mounts them.
        admission: the budget concurrent calls share, warm or cold (``admission.py``).
    """

    def __init__(
        self,
        size: int = 2,
        config: JailConfig | None = None,
        packages: tuple[str, ...] = (),
        *,
        admission: Admission | None = None,
    ) -> None:
        self.size = max(1, size)
        self.cold = BwrapExecutor(config, admission=admission)  # one admission for both
        self.admission = self.cold.admission
        self.packages = frozenset(packages)
        self.config = self.cold.config_for(tuple(packages))
        self._idle: deque[Jail] = deque()
        self._cond = threading.Condition()
        self._closed = False
        self.spawn_failures = 0
        self._filler = threading.Thread(target=self._fill, name="warm-pool", daemon=True)
        self._filler.start()

    def wait_ready(self, timeout: float = 10.0) -> bool:
        """Block until the pool is full (for benchmarks and tests); False on timeout."""
        end = time.monotonic() + timeout
        with self._cond:
            while len(self._idle) < self.size and not self._closed:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def idle(self) -> int:
        """How many workers wait for a call now."""
        with self._cond:
            return len(self._idle)

    def run(
        self,
        code: str,
        args: Any,
        limits: ProcessLimits,
        *,
        tool: str | None = None,
        fetch: FetchProvider | None = None,
    ) -> CallResult:
        """Run one call on a warm worker (or a cold jail if none is idle or fits), once
        :attr:`admission` has room for it (``overloaded`` when none comes)."""
        if not set(limits.allowed_packages) <= self.packages:
            return self.cold.run(code, args, limits, tool=tool, fetch=fetch)
        return self.admission.run(
            limits.memory_bytes, lambda: self._run(code, args, limits, tool=tool, fetch=fetch)
        )

    def _run(
        self,
        code: str,
        args: Any,
        limits: ProcessLimits,
        *,
        tool: str | None,
        fetch: FetchProvider | None,
    ) -> CallResult:
        started = time.monotonic()
        prepared = prepare(code, args, limits, self.cold, started, fetch=fetch is not None)
        if isinstance(prepared, CallResult):
            return prepared
        request, config = prepared
        jail = self._take()
        if jail is None:
            try:
                jail = spawn(config)
            except JailUnavailable as exc:
                return CallResult.failure(ErrorKind.RUNTIME_ERROR, str(exc))
        try:
            return exchange(jail, request, limits, started, fetch=fetch, tool=tool)
        finally:
            self._refill()  # after the call: a refill competing for the CPU would slow it

    def _take(self) -> Jail | None:
        with self._cond:
            while self._idle:
                jail = self._idle.popleft()
                if jail.process.poll() is None:
                    return jail
                jail.close()  # died while idle; never hand it a call
        return None

    def _refill(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def _fill(self) -> None:
        while True:
            with self._cond:
                while len(self._idle) >= self.size and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
            try:
                jail = spawn(self.config)
            except JailUnavailable:
                jail = None
            if jail is None or not jail.await_ready(READY_TIMEOUT_S):
                if jail is not None:
                    jail.close()
                self.spawn_failures += 1
                time.sleep(min(5.0, 0.1 * self.spawn_failures))
                continue
            with self._cond:
                if self._closed:
                    jail.close()
                    return
                self._idle.append(jail)
                self._cond.notify_all()

    def close(self) -> None:
        """Stop refilling and kill every idle worker."""
        with self._cond:
            self._closed = True
            idle, self._idle = list(self._idle), deque()
            self._cond.notify_all()
        for jail in idle:
            jail.close()
        self._filler.join(timeout=5)

    def __enter__(self) -> WarmPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
