"""The host's side of one call into a started jail: send the request, watch, read the result.

Everything is bounded: the wall clock (the whole jail is killed at the deadline), the logs
(kept up to a cap, the rest drained and dropped), and the result channel (a jail that writes
more than the cap is killed). The result is trusted only as one well-formed frame from the
runner; anything else is a runtime_error naming what went wrong.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from toolfoundry.sandbox.process.allowlist import ALLOWED_MODULES
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.jail import READY, Jail
from toolfoundry.spec import CallResult, ErrorKind

MAGIC = b"TFR1"
FRAME_SLACK = 64 * 1024  # an error message and the frame header on top of the value cap
MAX_DEPTH = 200
TOOL_KINDS = frozenset(
    {
        ErrorKind.TIMEOUT,
        ErrorKind.MEMORY_LIMIT,
        ErrorKind.RUNTIME_ERROR,
        ErrorKind.OUTPUT_TOO_LARGE,
        ErrorKind.CAPABILITY_DENIED,
    }
)


@dataclass
class Collected:
    """What came out of a jail."""

    result: bytearray = field(default_factory=bytearray)
    logs: bytearray = field(default_factory=bytearray)
    logs_dropped: int = 0
    timed_out: bool = False
    result_overflow: bool = False
    returncode: int | None = None


def request_bytes(code: str, args: Any, limits: ProcessLimits, packages: list[str]) -> bytes:
    """The JSON request the runner reads from stdin."""
    return json.dumps(
        {
            "code": code,
            "args": args,
            "packages": packages,
            "allowed": sorted(ALLOWED_MODULES | set(limits.allowed_packages)),
            "limits": {
                "cpu_s": limits.cpu_s,
                "memory_bytes": limits.memory_bytes,
                "max_processes": limits.max_processes,
                "max_file_bytes": limits.max_file_bytes,
                "output_bytes": limits.output_bytes,
            },
        }
    ).encode()


def exchange(jail: Jail, request: bytes, limits: ProcessLimits, started: float) -> CallResult:
    """Send ``request`` to the jail's runner and turn what comes back into a CallResult.

    The jail is always killed and reaped before this returns.
    """
    deadline = started + limits.timeout_s
    try:
        collected = _collect(jail, request, limits, deadline)
    finally:
        jail.kill()
        # reaping a killed jail (PID namespace teardown) takes milliseconds: not on the call path
        threading.Thread(target=jail.close, name="jail-reaper", daemon=True).start()
    if not collected.result and not collected.timed_out:
        collected.returncode = jail.process.wait()  # how it ended matters only without a result
    return _result(collected, limits, started)


def _collect(jail: Jail, request: bytes, limits: ProcessLimits, deadline: float) -> Collected:
    process = jail.process
    assert process.stdin is not None
    out = Collected()
    selector = selectors.DefaultSelector()
    pending = memoryview(request)
    stdin_fd = process.stdin.fileno()
    os.set_blocking(stdin_fd, False)
    selector.register(stdin_fd, selectors.EVENT_WRITE, "stdin")
    channels = [(jail.result_read, "result")]
    channels += [(s.fileno(), "log") for s in (process.stdout, process.stderr) if s is not None]
    for fd, name in channels:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ, name)
    result_cap = limits.output_bytes + FRAME_SLACK
    with selector:
        while selector.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                out.timed_out = True
                jail.kill()
                return out
            for key, _ in selector.select(remaining):
                fd = int(key.fd)
                if key.data == "stdin":
                    try:
                        pending = pending[os.write(fd, pending) :]
                    except (BrokenPipeError, BlockingIOError):
                        pending = pending[:0]
                    if not pending:
                        selector.unregister(fd)
                        process.stdin.close()
                    continue
                chunk = _read(fd)
                if chunk is None:
                    continue
                if not chunk:
                    selector.unregister(fd)
                elif key.data == "result":
                    if not jail.ready and chunk[:1] == READY:
                        jail.ready, chunk = True, chunk[1:]
                    out.result += chunk
                    if len(out.result) > result_cap:
                        out.result_overflow = True
                        jail.kill()
                        return out
                    if _complete(out.result):
                        # the runner flushed the tool's output before its frame: take what
                        # is in the pipes and stop, without waiting for the jail to exit
                        _drain_logs(selector, out, limits)
                        return out
                else:
                    _keep_log(out, chunk, limits)
    try:
        process.wait(max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:  # the jail closed its pipes but lives on
        out.timed_out = True
        jail.kill()
    return out


def _complete(data: bytearray) -> bool:
    return len(data) >= 12 and int.from_bytes(data[4:12], "big") == len(data) - 12


def _keep_log(out: Collected, chunk: bytes, limits: ProcessLimits) -> None:
    room = max(0, limits.log_bytes - len(out.logs))
    out.logs += chunk[:room]
    out.logs_dropped += len(chunk) - min(room, len(chunk))


def _drain_logs(selector: selectors.BaseSelector, out: Collected, limits: ProcessLimits) -> None:
    for key in list(selector.get_map().values()):
        if key.data == "log":
            for _ in range(64):  # bounded: a tool still printing from a thread is cut off
                chunk = _read(int(key.fd))
                if not chunk:
                    break
                _keep_log(out, chunk, limits)


def _read(fd: int) -> bytes | None:
    """A chunk, b"" at end of file, None when nothing is there yet."""
    try:
        return os.read(fd, 65536)
    except BlockingIOError:
        return None
    except OSError:
        return b""


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
    if out.result_overflow:
        return fail(
            ErrorKind.OUTPUT_TOO_LARGE, f"the result is larger than {limits.output_bytes} bytes"
        )
    if not out.result:
        return _no_result(out.returncode, limits, fail)
    frame = _frame(bytes(out.result))
    if frame is None:
        return fail(ErrorKind.RUNTIME_ERROR, "the tool wrote to the result channel; refused")
    if frame.get("ok") is True and "value" in frame:
        if _depth(frame["value"]) > MAX_DEPTH:
            return fail(ErrorKind.RUNTIME_ERROR, f"the result nests deeper than {MAX_DEPTH} levels")
        return CallResult.success(frame["value"], logs=logs, duration_ms=elapsed)
    kind, message = frame.get("kind"), frame.get("message")
    if kind not in TOOL_KINDS or not isinstance(message, str):
        return fail(ErrorKind.RUNTIME_ERROR, "the runner's result frame is malformed")
    return fail(ErrorKind(kind), message)


def _depth(value: Any) -> int:
    """Nesting depth, without recursion (a value nested near the interpreter's limit would
    make every later consumer of the result raise RecursionError)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level <= MAX_DEPTH:
            children = item.values() if isinstance(item, dict) else item
            if isinstance(item, dict | list):
                stack.extend((child, level + 1) for child in children)
    return deepest


def _frame(data: bytes) -> dict[str, Any] | None:
    if len(data) < 12 or data[:4] != MAGIC:
        return None
    if int.from_bytes(data[4:12], "big") != len(data) - 12:
        return None  # two frames, or a truncated one: someone else wrote to the channel
    try:
        frame = json.loads(data[12:])
    except (ValueError, RecursionError):
        return None
    return frame if isinstance(frame, dict) else None


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
