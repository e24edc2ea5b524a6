"""The jail's seccomp filter: every denied system call fails with EPERM, plain tools still run.

The tool reaches the kernel directly through ctypes (past the static check and the import
guard, as an attacker would), tries each call of the profile with zeroed arguments and reports
its errno; a call the kernel alone would have answered otherwise (EFAULT, EINVAL, success)
shows the filter at work. ``/proc/self/status`` must say ``Seccomp: 2`` (a filter installed).
"""

from __future__ import annotations

import errno
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolfoundry.sandbox.process.bwrap import BwrapExecutor
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.pool import WarmPool
from toolfoundry.sandbox.process.syscall_filter import (
    CLONE_NAMESPACE_FLAGS,
    DENIED,
    NOT_IMPLEMENTED,
    denied_here,
)

# Each call with zeroed arguments through libc's syscall(); errno per name, and the filter state.
TRY_EACH = """
def handler(args):
    ctypes = __import__('ctypes', {})
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    def attempt(number, *values):
        ctypes.set_errno(0)
        got = libc.syscall(ctypes.c_long(number), *[ctypes.c_long(v) for v in values])
        return 'returned %d' % got if got != -1 else ctypes.get_errno()
    errnos = {name: attempt(number, 0, 0, 0, 0, 0, 0) for name, number in args['denied'].items()}
    flags = args['flags'].items()
    clone = {flag: attempt(args['clone'], bit | 17, 0, 0, 0, 0) for flag, bit in flags}
    status = open('/proc/self/status').read().splitlines()
    seccomp = [line.split(':')[1].strip() for line in status if line.startswith('Seccomp:')]
    return {'errnos': errnos, 'clone': clone, 'clone3': attempt(args['clone3'], 0, 0),
            'seccomp': seccomp}
"""

# What a plain tool does: an async handler (the runner's asyncio: epoll, eventfd, socketpair),
# hashing, JSON, time zones, random and uuid (getrandom), decimal.
PLAIN = """
import datetime, decimal, hashlib, json, random, statistics, uuid, zoneinfo

async def twice(x):
    return 2 * x

async def handler(args):
    assert await twice(21) == 42
    when = datetime.datetime(2024, 7, 1, 12, tzinfo=zoneinfo.ZoneInfo('Europe/Oslo'))
    digest = hashlib.sha256(json.dumps(args).encode()).hexdigest()[:8]
    return [when.utcoffset().seconds, len(str(uuid.uuid4())), 0 <= random.random() < 1,
            str(decimal.Decimal('0.1') * 3), statistics.mean([1, 2, 3]), len(digest)]
"""

# Threads: glibc's pthread_create tries clone3 first, meets ENOSYS and falls back to clone.
THREADS = """
def handler(args):
    threading = __import__('threading', {})
    seen = []
    workers = [threading.Thread(target=seen.append, args=(i,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return sorted(seen)
"""


def call_numbers() -> dict[str, Any]:
    import pyseccomp

    def number(name: str) -> int:
        found: int = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
        return found

    return {
        "denied": denied_here(),
        "clone": number("clone"),
        "clone3": number("clone3"),
        "flags": CLONE_NAMESPACE_FLAGS,
    }


def assert_denied(report: dict[str, Any]) -> None:
    assert report["seccomp"] == ["2"], report["seccomp"]
    refused = {name: got for name, got in report["errnos"].items() if got != errno.EPERM}
    assert refused == {}, f"not refused with EPERM: {refused}"
    assert set(report["errnos"]) == set(denied_here())
    assert report["clone"] == dict.fromkeys(CLONE_NAMESPACE_FLAGS, errno.EPERM)
    assert report["clone3"] == errno.ENOSYS  # so glibc falls back to clone, which is checked


def test_the_profile_covers_the_classes_the_runtimes_deny() -> None:
    for name in (
        "io_uring_setup",
        "keyctl",
        "add_key",
        "request_key",
        "bpf",
        "perf_event_open",
        "userfaultfd",
        "ptrace",
        "mount",
        "unshare",
        "setns",
        "kexec_load",
        "init_module",
        "personality",
    ):
        assert name in DENIED
        assert name in denied_here(), f"{name} is not a system call here"


def test_docs_list_every_call_of_the_profile() -> None:
    security = (Path(__file__).parents[3] / "docs" / "security.md").read_text()
    profile = security[security.index("**The system-call filter.**") :]
    missing = [name for name in [*DENIED, *NOT_IMPLEMENTED] if f"`{name}`" not in profile]
    assert missing == [], f"docs/security.md does not list {missing}"


def test_each_denied_call_fails_with_eperm_through_the_cli(tmp_path: Path) -> None:
    tool = tmp_path / "try_each.py"
    tool.write_text(TRY_EACH)
    command = ["executor", "run", str(tool), "--args", json.dumps(call_numbers()), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "toolfoundry", *command],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    result = json.loads(done.stdout)
    assert result["ok"], result
    assert_denied(result["value"])


@pytest.fixture(params=["cold", "warm"])
def executor(request: pytest.FixtureRequest, cold: BwrapExecutor, pool: WarmPool) -> Any:
    return cold if request.param == "cold" else pool


def test_each_denied_call_fails_with_eperm_in_every_jail(executor: Any) -> None:
    out = executor.run(TRY_EACH, call_numbers(), ProcessLimits())
    assert out.ok, out
    assert_denied(out.value)


def test_plain_tools_and_threads_still_run_under_the_filter(executor: Any) -> None:
    out = executor.run(PLAIN, {"x": 1}, ProcessLimits())
    assert out.ok, out
    assert out.value == [7200, 36, True, "0.3", 2, 8]
    out = executor.run(THREADS, {}, ProcessLimits())
    assert out.ok, out
    assert out.value == [0, 1, 2, 3]
