"""The host's side of one call into a started jail: the request, and what came back.

The result is trusted only as one well-formed frame from the runner; anything else is a
runtime_error naming what went wrong. The frame's JSON passes the JSON gate
(:mod:`toolfoundry.sandbox.answer`): a value nested too deep, a number that is not a finite
double or text that is not valid Unicode is ``invalid_output``. The I/O itself, bounded in time
and bytes, is :mod:`toolfoundry.sandbox.process.watch`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import queue
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from toolfoundry.base.json_gate import check, encode
from toolfoundry.sandbox.answer import read_answer
from toolfoundry.sandbox.host.protocols import FetchProvider
from toolfoundry.sandbox.process import budget
from toolfoundry.sandbox.process.allowlist import ALLOWED_MODULES
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.jail import Jail
from toolfoundry.sandbox.process.watch import MAGIC, Collected, fetch_frames_cap, watch
from toolfoundry.spec import CallResult, ErrorKind
from toolfoundry.spec.limits import FETCH_REQUESTS

TOOL_KINDS = frozenset(
    {
        ErrorKind.TIMEOUT,
        ErrorKind.MEMORY_LIMIT,
        ErrorKind.RUNTIME_ERROR,
        ErrorKind.OUTPUT_TOO_LARGE,
        ErrorKind.CAPABILITY_DENIED,
    }
)


def request_bytes(
    code: str, args: Any, limits: ProcessLimits, packages: list[str], *, fetch: bool = False
) -> bytes:
    """The JSON request the runner reads from stdin (``fetch``: whether fetch is granted).

    Raises:
        InvalidJson: ``args`` breaks the JSON gate's rules (a ValueError, located).
    """
    check(args)  # located under $ (the arguments), before they join the request
    return encode(
        {
            "code": code,
            "fetch": fetch,
            "args": args,
            "packages": packages,
            "allowed": sorted(ALLOWED_MODULES | set(limits.allowed_packages)),
            "limits": {
                "cpu_s": limits.cpu_s,
                "memory_bytes": limits.memory_bytes,
                # without a group RLIMIT_AS binds one process only: then none may be added
                "max_processes": limits.max_processes if budget.detect() is not None else 0,
                "max_file_bytes": limits.max_file_bytes,
                "output_bytes": limits.output_bytes,
            },
        }
    ).encode("utf-8")


def exchange(
    jail: Jail,
    request: bytes,
    limits: ProcessLimits,
    started: float,
    *,
    fetch: FetchProvider | None = None,
    tool: str | None = None,
) -> CallResult:
    """Send ``request`` to the jail's runner and turn what comes back into a CallResult.

    Fetch requests from the tool are answered by ``fetch`` (None refuses them), as many as
    its ``max_requests`` (the default one without a fetch: every request is refused then).
    The jail is always killed before this returns, and reaped off the call path.
    """
    deadline = started + limits.timeout_s
    handler = fetch.handler(deadline=deadline, tool=tool) if fetch is not None else None
    max_requests = fetch.max_requests if fetch is not None else FETCH_REQUESTS
    group = jail.group
    refused: OSError | None = None
    try:
        if group is not None:  # a warm jail's group gets this call's budget before the call
            group.apply(limits.memory_bytes, limits.max_processes)
        collected = watch(jail, request, limits, deadline, handler, max_requests)
    except OSError as exc:  # only apply raises it: the kernel refused this call's budget
        refused, collected = exc, Collected()
    finally:
        jail.kill()
        # read the group before the reaper removes it
        budget_hit = group is not None and group.oom_killed()
        peak = group.peak_bytes() if group is not None else None
        # reaping a killed jail (PID namespace teardown) takes milliseconds: not on the call path
        _reaper.reap(jail)
    details: dict[str, Any] = {"fetches": collected.fetches}
    if peak is not None:
        details["peak_memory_bytes"] = peak
    if refused is not None or budget_hit:
        message = (
            f"the call's processes together used more than {limits.memory_bytes} bytes"
            if refused is None
            else f"cannot set the call's memory budget ({limits.memory_bytes} bytes): {refused}"
        )
        failed = CallResult.failure(
            ErrorKind.MEMORY_LIMIT,
            message,
            logs=_logs(collected),
            duration_ms=(time.monotonic() - started) * 1000,
        )
        return dataclasses.replace(failed, details=details)
    if not collected.result and not collected.timed_out:
        collected.returncode = jail.process.wait()  # how it ended matters only without a result
    result = _result(collected, limits, started)
    return dataclasses.replace(result, details=details)


class _Reaper:
    """One thread that closes killed jails in turn (a thread per call cost ~0.1-0.2 ms on
    the call path to start)."""

    def __init__(self) -> None:
        self._jails: queue.SimpleQueue[Jail] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def reap(self, jail: Jail) -> None:
        self._jails.put(jail)
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._serve, name="jail-reaper", daemon=True
                    )
                    self._thread.start()

    def _serve(self) -> None:
        while True:
            jail = self._jails.get()
            with contextlib.suppress(Exception):  # one jail's teardown never stops the next
                jail.close()
            del jail


_reaper = _Reaper()


def _logs(out: Collected) -> tuple[str, ...]:
    lines = out.logs.decode("utf-8", "replace").splitlines()
    if out.logs_dropped:
        lines.append(f"... ({out.logs_dropped} bytes of output dropped)")
    return tuple(lines)


def _result(out: Collected, limits: ProcessLimits, started: float) -> CallResult:
    elapsed = (time.monotonic() - started) * 1000
    logs = _logs(out)

    def fail(kind: ErrorKind, message: str) -> CallResult:
        return CallResult.failure(kind, message, logs=logs, duration_ms=elapsed)

    if out.timed_out:
        return fail(ErrorKind.TIMEOUT, f"the call took longer than {limits.timeout_s:g} s")
    if out.broken_fetch:
        return fail(ErrorKind.RUNTIME_ERROR, "the tool wrote garbage to the fetch channel")
    if out.fetch_flood:
        limit = out.fetch_limit
        return fail(
            ErrorKind.RUNTIME_ERROR,
            f"the tool sent more than {fetch_frames_cap(limit)} fetch requests in one call: "
            f"it kept asking after its limit of {limit} ([fetch] max_requests)",
        )
    if out.result_overflow:
        return fail(
            ErrorKind.OUTPUT_TOO_LARGE, f"the result is larger than {limits.output_bytes} bytes"
        )
    if not out.result:
        return _no_result(out.returncode, limits, fail)
    body = _frame_body(bytes(out.result))
    if body is None:
        return fail(ErrorKind.RUNTIME_ERROR, "the tool wrote to the result channel; refused")
    answer = read_answer(body)  # through the JSON gate
    if answer.refused is not None:
        return answer.refusal(logs, elapsed)
    if answer.kind is None:
        return CallResult.success(answer.value, logs=logs, duration_ms=elapsed)
    if answer.kind not in TOOL_KINDS:
        return fail(ErrorKind.RUNTIME_ERROR, "the runner's result frame is malformed")
    return fail(ErrorKind(answer.kind), answer.message)


def _frame_body(data: bytes) -> bytes | None:
    if len(data) < 12 or data[:4] != MAGIC:
        return None
    if int.from_bytes(data[4:12], "big") != len(data) - 12:
        return None  # two frames, or a truncated one: someone else wrote to the channel
    return data[12:]


def _no_result(
    returncode: int | None, limits: ProcessLimits, fail: Callable[[ErrorKind, str], CallResult]
) -> CallResult:
    signo = _signal_of(returncode)
    if signo in (signal.SIGXCPU, signal.SIGKILL):
        return fail(ErrorKind.TIMEOUT, f"the call used more than {limits.cpu_s} s of CPU")
    if signo == signal.SIGXFSZ:
        return fail(
            ErrorKind.OUTPUT_TOO_LARGE,
            f"the tool wrote a file larger than {limits.max_file_bytes} bytes",
        )
    if signo is not None:
        return fail(ErrorKind.RUNTIME_ERROR, f"the tool crashed ({signal.Signals(signo).name})")
    return fail(
        ErrorKind.RUNTIME_ERROR,
        f"the tool process exited (status {returncode}) without a result",
    )


def _signal_of(returncode: int | None) -> int | None:
    if returncode is None:
        return None
    if returncode < 0:
        number = -returncode
    elif returncode > 128:
        number = returncode - 128  # bwrap's init reports a child's signal as 128 + n
    else:
        return None
    try:
        return int(signal.Signals(number))
    except ValueError:
        return None
