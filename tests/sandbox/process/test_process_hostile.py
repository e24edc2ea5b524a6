"""Hostile Python in real bubblewrap jails: each attack fails with the right kind, leaks
nothing, and leaves the host (this process, its files, the pool) working.

The static check would refuse most of these drafts (see test_process_static.py); here the
code goes straight to the executor, and imports use ``__import__(name, {})``, which also
slips past the runner's import guard: what stops the attack is the jail.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from tests.factories import error_of

from toolfoundry.sandbox.process.bwrap import BwrapExecutor
from toolfoundry.sandbox.process.executor import MIB, ProcessLimits
from toolfoundry.sandbox.process.pool import WarmPool
from toolfoundry.spec import CallResult

from .conftest import SECRET

BYPASS = "def I(name):\n    return __import__(name, {})\n\n"


def run(executor: Any, body: str, args: Any = None, **limits: Any) -> CallResult:
    result = executor.run(BYPASS + body, {} if args is None else args, ProcessLimits(**limits))
    assert isinstance(result, CallResult)
    return result


def assert_clean(result: CallResult) -> None:
    """Nothing secret came back, in the value, the error or the logs."""
    assert SECRET not in repr(result.to_dict())


def assert_host_alive(executor: Any) -> None:
    """This process survived and the executor still serves a plain call."""
    out = executor.run("def handler(a):\n    return a['n'] + 1\n", {"n": 41}, ProcessLimits())
    assert out.ok, out
    assert out.value == 42


def kind(result: CallResult) -> str | None:
    return error_of(result).kind.value if result.error else None


# -- network, in every form ---------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "def handler(a):\n    s = I('socket').create_connection(('127.0.0.1', a['port']), 2)\n"
        "    return s.recv(100).decode()\n",
        "def handler(a):\n    u = I('urllib.request').request\n"
        "    return u.urlopen(f\"http://127.0.0.1:{a['port']}/u\", timeout=2).read().decode()\n",
        "def handler(a):\n    h = I('http.client').client\n"
        "    c = h.HTTPConnection('127.0.0.1', a['port'], timeout=2)\n    c.request('GET', '/h')\n"
        "    return c.getresponse().read().decode()\n",
    ],
    ids=["socket", "urllib", "http.client"],
)
def test_no_network_to_the_host(cold: BwrapExecutor, listener: Any, body: str) -> None:
    port, hits = listener
    result = run(cold, body, {"port": port})
    assert kind(result) == "runtime_error", result
    # the jail's 127.0.0.1 is its own loopback in its own network namespace: nobody listens
    assert "[Errno" in error_of(result).message or "timed out" in error_of(result).message
    assert hits == []
    assert_clean(result)
    assert_host_alive(cold)


def test_udp_never_reaches_the_host(cold: BwrapExecutor) -> None:
    import socket

    host = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    host.bind(("127.0.0.1", 0))
    host.settimeout(0.3)
    try:
        body = (
            "def handler(a):\n    s = I('socket')\n    x = s.socket(s.AF_INET, s.SOCK_DGRAM)\n"
            "    for ip in ('127.0.0.1', '10.0.2.2', '172.17.0.1'):\n"
            "        try:\n            x.sendto(b'q', (ip, a['port']))\n"
            "        except OSError:\n            pass\n    return 'sent'\n"
        )
        result = run(cold, body, {"port": host.getsockname()[1]})
        assert result.ok  # the datagram went to the jail's own loopback, or nowhere
        with pytest.raises(TimeoutError):
            host.recvfrom(10)
    finally:
        host.close()


def test_no_dns(cold: BwrapExecutor) -> None:
    result = run(
        cold,
        "def handler(a):\n    return I('socket').getaddrinfo('example.com', 443)[0][4][0]\n",
    )
    assert kind(result) == "runtime_error"
    assert "gaierror" in error_of(result).message
    assert_host_alive(cold)


def test_the_only_interface_is_the_jails_own_loopback(cold: BwrapExecutor) -> None:
    result = run(
        cold,
        "def handler(a):\n    return sorted(n for _, n in I('socket').if_nameindex())\n",
    )
    assert result.ok, result
    assert result.value == ["lo"]


def test_no_unix_socket_of_the_host(cold: BwrapExecutor, tmp_path: Path) -> None:
    import socket

    path = tmp_path / "host.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(1)
    server.settimeout(0.2)
    try:
        result = run(
            cold,
            "def handler(a):\n    s = I('socket').socket(I('socket').AF_UNIX)\n"
            "    s.connect(a['path'])\n    return 'connected'\n",
            {"path": str(path)},
        )
        assert kind(result) == "runtime_error"
        assert "FileNotFoundError" in error_of(result).message
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


# -- host files ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target",
    ["/etc/shadow", "/etc/passwd", "/root/.bashrc", "/work/main/pyproject.toml", "CANARY"],
)
def test_host_files_are_not_there(cold: BwrapExecutor, canary: Path, target: str) -> None:
    path = str(canary) if target == "CANARY" else target
    result = run(cold, "def handler(a):\n    return open(a['p']).read()\n", {"p": path})
    assert kind(result) == "runtime_error"
    assert "FileNotFoundError" in error_of(result).message
    assert_clean(result)


def test_the_jail_sees_only_the_system_dirs(cold: BwrapExecutor) -> None:
    result = run(cold, "def handler(a):\n    return sorted(I('os').listdir('/'))\n")
    assert result.ok
    assert set(result.value) <= {
        "bin",
        "dev",
        "lib",
        "lib64",
        "proc",
        "sandbox",
        "sbin",
        "tmp",
        "usr",
    }
    assert "etc" not in result.value
    assert "work" not in result.value


@pytest.mark.parametrize("target", ["/usr/evil.py", "/evil", "/proc/sys/kernel/hostname"])
def test_writing_outside_tmp_fails(cold: BwrapExecutor, target: str) -> None:
    result = run(
        cold, "def handler(a):\n    open(a['p'], 'w').write('x')\n    return 1\n", {"p": target}
    )
    assert kind(result) == "runtime_error"
    assert (
        "Read-only file system" in error_of(result).message
        or "Permission" in error_of(result).message
    )
    assert not Path(target).exists() or target.startswith("/proc")


def test_tmp_is_private_and_sized(cold: BwrapExecutor) -> None:
    marker = f"/tmp/tf-jail-{os.getpid()}"
    result = run(
        cold,
        "def handler(a):\n    open(a['p'], 'w').write('x' * 1000)\n"
        "    return len(open(a['p']).read())\n",
        {"p": marker},
    )
    assert result.ok
    assert result.value == 1000
    assert not Path(marker).exists()


def test_file_size_limit(cold: BwrapExecutor) -> None:
    result = run(
        cold,
        "def handler(a):\n    f = open('/tmp/big', 'wb')\n"
        "    for _ in range(64):\n        f.write(b'x' * 1048576)\n    f.close()\n    return 1\n",
        max_file_bytes=4 * MIB,
    )
    assert kind(result) == "runtime_error"
    assert "File too large" in error_of(result).message


# -- environment and /proc ----------------------------------------------------------------


def test_environment_is_empty(cold: BwrapExecutor) -> None:
    assert os.environ["TOOLFOUNDRY_TEST_SECRET"] == SECRET
    result = run(cold, "def handler(a):\n    return dict(I('os').environ)\n")
    assert result.ok
    assert set(result.value) <= {"PATH", "HOME", "LANG", "PYTHONDONTWRITEBYTECODE", "PWD"}
    assert_clean(result)


def test_proc_shows_only_the_jail(cold: BwrapExecutor) -> None:
    body = (
        "def handler(a):\n    os = I('os')\n    out = {}\n"
        "    for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "        try:\n"
        "            out[pid] = [open(f'/proc/{pid}/cmdline', 'rb').read().decode('latin1'),\n"
        "                        open(f'/proc/{pid}/environ', 'rb').read().decode('latin1')]\n"
        "        except OSError as e:\n            out[pid] = [str(e), '']\n"
        "    out['mounts'] = open('/proc/self/mountinfo').read()\n"
        "    out['host'] = os.path.exists(f\"/proc/{a['host_pid']}/environ\")\n"
        "    return out\n"
    )
    result = run(cold, body, {"host_pid": os.getpid()})
    assert result.ok, result
    pids = [p for p in result.value if p.isdigit()]
    assert len(pids) <= 3  # bwrap's init, the runner, and nothing of the host
    assert result.value["host"] is False or os.getpid() in (1, 2)
    assert "/work" not in result.value["mounts"]
    assert "/root" not in result.value["mounts"]
    assert_clean(result)


def test_no_capabilities_and_nobody(cold: BwrapExecutor) -> None:
    body = (
        "def handler(a):\n    s = open('/proc/self/status').read().splitlines()\n"
        "    f = dict(l.split(':', 1) for l in s)\n"
        "    return [f['Uid'].split(), f['CapEff'].strip(), f['CapBnd'].strip(),\n"
        "            f['NoNewPrivs'].strip()]\n"
    )
    result = run(cold, body)
    assert result.ok
    uids, eff, bnd, _ = result.value
    assert set(uids) == {"65534"}
    assert int(eff, 16) == 0
    assert int(bnd, 16) == 0


def test_no_new_user_namespace(cold: BwrapExecutor) -> None:
    body = (
        "def handler(a):\n    c = I('ctypes')\n    libc = c.CDLL(None, use_errno=True)\n"
        "    rc = libc.unshare(0x10000000)\n    return [rc, c.get_errno()]\n"
    )
    result = run(cold, body)
    assert result.ok, result
    assert result.value[0] == -1


# -- processes, signals, bombs ------------------------------------------------------------


def test_fork_bomb_is_contained(cold: BwrapExecutor) -> None:
    body = (
        "def handler(a):\n    os = I('os')\n    n = 0\n    while True:\n"
        "        pid = os.fork()\n        if pid == 0:\n            I('time').sleep(30)\n"
        "            os._exit(0)\n        n += 1\n"
    )
    started = time.monotonic()
    result = run(cold, body, timeout_s=5, max_processes=16)
    assert kind(result) == "runtime_error"
    assert "Resource temporarily unavailable" in error_of(result).message
    assert time.monotonic() - started < 5
    assert_host_alive(cold)


def test_signals_to_the_parent_reach_only_the_jail(cold: BwrapExecutor) -> None:
    body = (
        "def handler(a):\n    os = I('os')\n    out = []\n"
        "    for pid in (os.getppid(), 1, a['host_pid']):\n"
        "        try:\n            os.kill(pid, 9)\n            out.append('sent')\n"
        "        except OSError as e:\n            out.append(type(e).__name__)\n"
        "    return out\n"
    )
    result = run(cold, body, {"host_pid": os.getpid()})
    assert kind(result) in (None, "runtime_error")
    if result.ok:
        assert result.value[2] == "ProcessLookupError"
    assert_host_alive(cold)


def test_kill_everything_kills_only_the_jail(cold: BwrapExecutor) -> None:
    result = run(cold, "def handler(a):\n    I('os').kill(-1, 9)\n    return 'survived'\n")
    assert kind(result) == "runtime_error"
    assert_host_alive(cold)


def test_memory_bomb(cold: BwrapExecutor) -> None:
    result = run(cold, "def handler(a):\n    return len(bytearray(4 * 1024 ** 3))\n")
    assert kind(result) == "memory_limit"


def test_gradual_memory_bomb(cold: BwrapExecutor) -> None:
    body = "def handler(a):\n    xs = []\n    while True:\n        xs.append('x' * 1048576)\n"
    result = run(cold, body, memory_bytes=128 * MIB)
    assert kind(result) == "memory_limit"
    assert_host_alive(cold)


def test_cpu_bomb_wall_clock(cold: BwrapExecutor) -> None:
    started = time.monotonic()
    result = run(cold, "def handler(a):\n    while True:\n        pass\n", timeout_s=1.0)
    assert kind(result) == "timeout"
    assert time.monotonic() - started < 3


def test_cpu_bomb_in_threads_hits_the_cpu_limit(cold: BwrapExecutor) -> None:
    body = (
        "def handler(a):\n    t = I('threading')\n    def spin():\n        while True:\n"
        "            pass\n    for _ in range(4):\n"
        "        t.Thread(target=spin, daemon=True).start()\n"
        "    spin()\n"
    )
    result = run(cold, body, timeout_s=10.0, cpu_s=1)
    assert kind(result) == "timeout"
    assert "CPU" in error_of(result).message or "longer" in error_of(result).message


def test_sleeping_past_the_deadline(cold: BwrapExecutor) -> None:
    started = time.monotonic()
    result = run(cold, "def handler(a):\n    I('time').sleep(60)\n", timeout_s=0.5)
    assert kind(result) == "timeout"
    assert time.monotonic() - started < 2


def test_ctypes_crash(cold: BwrapExecutor) -> None:
    result = run(cold, "def handler(a):\n    return I('ctypes').string_at(0)\n")
    assert kind(result) == "runtime_error"
    assert "SIGSEGV" in error_of(result).message
    assert_host_alive(cold)


def test_lingering_children_die_with_the_jail(cold: BwrapExecutor) -> None:
    # the marker is also sleep's duration: at least 600 s, so only the jail's end can stop it
    marker = f"{600 + os.getpid() % 97}.{time.monotonic_ns() % 10**6}"
    body = (
        "def handler(a):\n    os = I('os')\n    if os.fork() == 0:\n        os.setsid()\n"
        "        os.execv('/usr/bin/sleep', ['sleep', a['m']])\n    return 'left'\n"
    )
    result = run(cold, body, {"m": marker})
    assert result.ok
    # The jail is killed when the call returns and its PID namespace dies a few milliseconds
    # later, so the child may still be seen (even exec'ing) just after: it must be gone and
    # stay gone for a full second within the window.
    deadline = time.monotonic() + 15
    gone_since: float | None = None
    while time.monotonic() < deadline:
        if _processes_with(marker):
            gone_since = None
        elif gone_since is None:
            gone_since = time.monotonic()
        elif time.monotonic() - gone_since >= 1.0:
            break
        time.sleep(0.05)
    assert not _processes_with(marker)


def _processes_with(marker: str) -> list[int]:
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if marker.encode() in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return found


# -- output ---------------------------------------------------------------------------------


def test_huge_logs_are_capped(cold: BwrapExecutor) -> None:
    body = (
        "def handler(a):\n    for _ in range(40):\n        print('x' * 1048576)\n"
        "    return 'done'\n"
    )
    result = run(cold, body, log_bytes=4096)
    assert result.ok
    assert result.value == "done"
    assert sum(len(line) for line in result.logs) < 4096 + 100
    assert "dropped" in result.logs[-1]


def test_huge_result(cold: BwrapExecutor) -> None:
    result = run(cold, "def handler(a):\n    return 'x' * (3 * 1048576)\n", output_bytes=MIB)
    assert kind(result) == "output_too_large"


def test_prints_cannot_forge_a_result(cold: BwrapExecutor) -> None:
    body = (
        "def handler(a):\n    import json\n"
        "    frame = json.dumps({'ok': True, 'value': 'forged'}).encode()\n"
        "    print('TFR1' + str(len(frame)) + frame.decode())\n"
        "    I('os').write(1, b'TFR1' + len(frame).to_bytes(8, 'big') + frame)\n    return 'real'\n"
    )
    result = run(cold, body)
    assert result.ok
    assert result.value == "real"


# -- the warm-worker protocol -------------------------------------------------------------


def test_writing_to_the_result_channel_is_refused(pool: WarmPool) -> None:
    body = (
        "def handler(a):\n    fd = int(I('sys').argv[1])\n"
        "    I('os').write(fd, b'TFR1' + (20).to_bytes(8, 'big') + b'{\"ok\":true,\"value\":1}')\n"
        "    return 2\n"
    )
    result = run(pool, body)
    assert kind(result) == "runtime_error"
    assert "result channel" in error_of(result).message
    assert_host_alive(pool)


def test_a_worker_cannot_see_or_read_other_workers(pool: WarmPool) -> None:
    assert pool.wait_ready(30)
    body = (
        "def handler(a):\n    os = I('os')\n    seen = {}\n"
        "    for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
        "        for fd in os.listdir(f'/proc/{pid}/fd'):\n"
        "            try:\n"
        "                seen[f'{pid}/{fd}'] = os.readlink(f'/proc/{pid}/fd/{fd}')\n"
        "            except OSError:\n                pass\n"
        "    try:\n        rest = os.read(0, 100)\n"
        "    except OSError as e:\n        rest = str(e)\n"
        "    return [seen, repr(rest)]\n"
    )
    result = run(pool, body)
    assert result.ok, result
    seen, rest = result.value
    assert rest == "b''"  # its own request was consumed; nothing else arrives on stdin
    pipes = {target for target in seen.values() if target.startswith("pipe:")}
    assert len(pipes) <= 6  # its own stdin, stdout, stderr, result and fetch pipes
    follow = run(pool, "def handler(a):\n    return a['secret'][::-1]\n", {"secret": SECRET})
    assert follow.ok
    assert follow.value == SECRET[::-1]


def test_each_worker_takes_one_call(pool: WarmPool) -> None:
    body = "def handler(a):\n    return [I('os').getpid(), I('os').getppid()]\n"
    first = run(pool, "def handler(a):\n    open('/tmp/left', 'w').write('x')\n    return 1\n")
    assert first.ok
    second = run(pool, "def handler(a):\n    return I('os').path.exists('/tmp/left')\n")
    assert second.ok
    assert second.value is False
    assert run(pool, body).ok


def test_jails_run_as_nobody_on_the_host_too() -> None:
    # bwrap started by root keeps root's powers outside unless the user is switched first;
    # and RLIMIT_NPROC only binds a non-root user
    from toolfoundry.sandbox.process.jail import JailConfig, spawn

    jail = spawn(JailConfig())
    try:
        assert jail.await_ready(30)
        tree = [jail.process.pid]
        children = Path(f"/proc/{jail.process.pid}/task/{jail.process.pid}/children")
        tree += [int(p) for p in children.read_text().split()]
        for pid in tree:
            status = Path(f"/proc/{pid}/status").read_text()
            uids = next(line for line in status.splitlines() if line.startswith("Uid:"))
            assert set(uids.split()[1:]) == {"65534"}, (pid, uids)
    finally:
        jail.close()


def test_deeply_nested_results_are_refused(cold: BwrapExecutor) -> None:
    body = "def handler(a):\n    v = []\n    for _ in range(300):\n        v = [v]\n    return v\n"
    result = run(cold, body)
    assert kind(result) == "invalid_output"  # was runtime_error: the JSON gate's kind
    assert "nests deeper" in error_of(result).message


def test_a_forged_frame_nested_to_crash_the_host_json_parser(cold: BwrapExecutor) -> None:
    body = (
        "def handler(a):\n    os = I('os')\n    fd = int(I('sys').argv[1])\n"
        "    doc = b'{\"ok\": true, \"value\": ' + b'[' * 200000 + b']' * 200000 + b'}'\n"
        "    os.write(fd, b'TFR1' + len(doc).to_bytes(8, 'big') + doc)\n    os._exit(0)\n"
    )
    result = run(cold, body)
    assert kind(result) == "invalid_output"  # was runtime_error: the JSON gate's kind
    assert_host_alive(cold)


@pytest.mark.parametrize(
    ("value", "path", "fragment"),
    [
        (b"1" * 5000, "$", "not a finite double"),  # Python's own 4300-digit ValueError
        (b"[1e999]", "$[0]", "not a finite double"),
        (b'{"k": NaN}', "$.k", "not a finite double"),
        (b'{"t": "\\ud800"}', "$.t", "lone surrogate"),
        (b'{"t": "\xed\xa0\x80"}', "$", "UTF-8"),
    ],
)
def test_a_forged_frame_with_values_the_host_refuses(
    cold: BwrapExecutor, value: bytes, path: str, fragment: str
) -> None:
    # the runner is not a boundary: the tool writes its own frame, the gate reads it
    body = (
        "def handler(a):\n    os = I('os')\n    fd = int(I('sys').argv[1])\n"
        f"    doc = b'{{\"ok\": true, \"value\": ' + {value!r} + b'}}'\n"
        "    os.write(fd, b'TFR1' + len(doc).to_bytes(8, 'big') + doc)\n    os._exit(0)\n"
    )
    result = run(cold, body)
    assert kind(result) == "invalid_output", result
    assert result.error is not None
    assert error_of(result).problems[0].path == path
    assert fragment in error_of(result).message
    assert_host_alive(cold)


def test_a_lone_surrogate_in_an_error_or_a_print_is_shown_escaped(cold: BwrapExecutor) -> None:
    body = "def handler(a):\n    raise ValueError('bad ' + chr(0xD800))\n"
    result = run(cold, body)
    assert kind(result) == "runtime_error"
    assert result.error is not None
    assert "bad \\ud800" in error_of(result).message
    error_of(result).message.encode("utf-8")  # well-formed: every output can carry it
