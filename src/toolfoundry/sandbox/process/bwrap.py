"""The cold executor: a fresh bubblewrap jail per call, started on the call path."""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Any

from toolfoundry.sandbox.host.protocols import FetchProvider
from toolfoundry.sandbox.process.admission import Admission
from toolfoundry.sandbox.process.exchange import exchange, request_bytes
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.jail import JailConfig, JailUnavailable, package_dirs, spawn
from toolfoundry.spec import CallResult, ErrorKind


class BwrapExecutor:
    """Runs each call in a new jail (see :mod:`toolfoundry.sandbox.process.jail`).

    Args:
        config: how jails are built; its ``site_dirs`` are extended with the directories of
            each call's ``allowed_packages``.
        admission: the budget concurrent calls share (``admission.py``; default: its own).
    """

    def __init__(
        self, config: JailConfig | None = None, *, admission: Admission | None = None
    ) -> None:
        self.config = config or JailConfig()
        self.admission = admission or Admission()
        self._configs: dict[tuple[str, ...], JailConfig] = {}
        self._lock = threading.Lock()

    def config_for(self, packages: tuple[str, ...]) -> JailConfig:
        """The jail config that mounts these packages (cached per package set).

        Raises:
            JailUnavailable: a package is not installed here.
        """
        key = tuple(sorted(packages))
        with self._lock:
            found = self._configs.get(key)
        if found is None:
            dirs = [d for d in package_dirs(key) if d not in self.config.site_dirs]
            found = dataclasses.replace(self.config, site_dirs=self.config.site_dirs + tuple(dirs))
            with self._lock:
                self._configs[key] = found
        return found

    def run(
        self,
        code: str,
        args: Any,
        limits: ProcessLimits,
        *,
        tool: str | None = None,
        fetch: FetchProvider | None = None,
    ) -> CallResult:
        """Run ``handler(args)`` of ``code`` in a new jail; never raises for the tool's doing.

        The call waits for room in :attr:`admission` first (``overloaded`` when none comes).
        """

        def admitted() -> CallResult:
            started = time.monotonic()
            prepared = prepare(code, args, limits, self, started, fetch=fetch is not None)
            if isinstance(prepared, CallResult):
                return prepared
            request, config = prepared
            try:
                jail = spawn(config)
            except JailUnavailable as exc:
                return CallResult.failure(ErrorKind.RUNTIME_ERROR, str(exc))
            return exchange(jail, request, limits, started, fetch=fetch, tool=tool)

        return self.admission.run(limits.memory_bytes, admitted, wait_s=limits.queue_s)

    def close(self) -> None:
        """Nothing is kept between calls."""


def prepare(
    code: str,
    args: Any,
    limits: ProcessLimits,
    cold: BwrapExecutor,
    started: float,
    *,
    fetch: bool = False,
) -> tuple[bytes, JailConfig] | CallResult:
    """The request bytes and the jail config for a call, or the failure that stops it."""

    def fail(kind: ErrorKind, message: str) -> CallResult:
        return CallResult.failure(kind, message, duration_ms=(time.monotonic() - started) * 1000)

    if not isinstance(code, str):
        return fail(ErrorKind.INVALID_ARGUMENTS, "code must be a string")
    try:
        config = cold.config_for(limits.allowed_packages)
    except JailUnavailable as exc:
        return fail(ErrorKind.CAPABILITY_DENIED, str(exc))
    try:
        request = request_bytes(code, args, limits, config.site_paths(), fetch=fetch)
    except (TypeError, ValueError) as exc:
        return fail(ErrorKind.INVALID_ARGUMENTS, f"the arguments are not JSON: {exc}")
    return request, config
