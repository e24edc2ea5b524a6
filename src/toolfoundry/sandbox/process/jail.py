"""One bubblewrap jail around one Python interpreter running the runner, waiting for a call.

The jail: new user, PID, IPC, UTS, cgroup and network namespaces; uid/gid 65534 inside
and, when this process is root, outside too (bwrap run as root keeps full capabilities
unless told otherwise, and RLIMIT_NPROC does not bind root, so we switch user before exec);
no capabilities; a read-only view of the system's /usr only (no /etc, /home, /root, no
project or registry directory); tmpfs /tmp, /sandbox and /dev/shm; a fresh /proc and a
minimal, read-only /dev; an empty environment; a seccomp filter refusing the system calls of
``syscall_filter.py``. Nothing of the host's process state crosses in except three pipes and
the result pipe.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

from toolfoundry.sandbox.process import budget, syscall_filter
from toolfoundry.sandbox.process.budget import CallGroup
from toolfoundry.sandbox.process.executor import MIB, ProcessLimits

RUNNER_SOURCE = (Path(__file__).with_name("runner.py")).read_text(encoding="utf-8")
SANDBOX_UID = 65534
READY = b"R"  # the runner's first byte on the result fd
SETPRIV = shutil.which("setpriv")
SITE_ROOT = "/opt/site"
WORK_DIR = "/sandbox"
JAIL_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": WORK_DIR,
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
}


class JailUnavailable(RuntimeError):
    """bubblewrap or the interpreter is missing, or the kernel refuses the namespaces."""


def find_bwrap() -> str | None:
    """The bwrap binary on PATH, if any."""
    return shutil.which("bwrap")


def package_dirs(packages: tuple[str, ...]) -> tuple[str, ...]:
    """The host directories (site dirs) holding these importable top-level packages.

    Raises:
        JailUnavailable: a package is not installed.
    """
    dirs: list[str] = []
    for name in packages:
        spec = find_spec(name)
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            raise JailUnavailable(f"package {name!r} is not installed where the executor runs")
        location = (
            Path(next(iter(spec.submodule_search_locations))).parent
            if spec.submodule_search_locations
            else Path(spec.origin or "").parent
        )
        if str(location) not in dirs:
            dirs.append(str(location))
    return tuple(dirs)


@dataclass(frozen=True)
class JailConfig:
    """How jails are built.

    Attributes:
        interpreter: the Python inside the jail; it must live under a bound system dir.
        site_dirs: host site directories bound read-only at ``/opt/site/N`` (for allowed
            packages; they must be built for the interpreter's Python version).
        tmp_bytes: size of each tmpfs (/tmp, /sandbox and /dev/shm).
        bwrap: the bubblewrap binary.
        system_dirs: host directories bound read-only at the same path.
    """

    interpreter: str = "/usr/bin/python3"
    site_dirs: tuple[str, ...] = ()
    tmp_bytes: int = 64 * MIB
    bwrap: str = field(default_factory=lambda: find_bwrap() or "bwrap")
    system_dirs: tuple[str, ...] = ("/usr",)

    def site_paths(self) -> list[str]:
        """Where the site dirs appear inside the jail."""
        return [f"{SITE_ROOT}/{i}" for i in range(len(self.site_dirs))]

    def argv(
        self, result_fd: int, fetch_out_fd: int, fetch_in_fd: int, seccomp_fd: int
    ) -> list[str]:
        """The bwrap command line for a jail whose runner reports on ``result_fd`` and sends
        fetch requests on ``fetch_out_fd``, reading the answers on ``fetch_in_fd``; bwrap
        loads the seccomp program it reads from ``seccomp_fd`` just before the runner starts."""
        args = [
            self.bwrap,
            "--unshare-user",
            "--uid",
            str(SANDBOX_UID),
            "--gid",
            str(SANDBOX_UID),
            "--unshare-pid",
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-net",
            "--unshare-cgroup-try",
            "--disable-userns",
            "--hostname",
            "sandbox",
            "--cap-drop",
            "ALL",
            "--die-with-parent",
            "--new-session",
            "--clearenv",
        ]
        for key, value in JAIL_ENV.items():
            args += ["--setenv", key, value]
        for path in self.system_dirs:
            args += ["--ro-bind", path, path]
        for name in ("bin", "lib", "lib64", "lib32", "sbin"):
            host = Path("/") / name
            if host.is_symlink():
                args += ["--symlink", os.readlink(host), str(host)]
            elif host.is_dir():
                args += ["--ro-bind", str(host), str(host)]
        for host_dir, inside in zip(self.site_dirs, self.site_paths(), strict=True):
            args += ["--ro-bind", host_dir, inside]
        args += ["--proc", "/proc", "--dev", "/dev"]
        # /dev/shm gets its own sized tmpfs, and /dev (bwrap's tmpfs of device nodes) is made
        # read-only: without a control group nothing else would bound what a tool stores there
        # (tmpfs pages are not in the address-space rlimit); with one they are charged to it
        for tmp in ("/tmp", WORK_DIR, "/dev/shm"):
            args += ["--size", str(self.tmp_bytes), "--perms", "1777", "--tmpfs", tmp]
        args += ["--remount-ro", "/dev", "--remount-ro", "/"]
        args += ["--chdir", WORK_DIR, "--seccomp", str(seccomp_fd)]
        args += [self.interpreter, "-I", "-S", "-B", "-c", RUNNER_SOURCE]
        args += [str(result_fd), str(fetch_out_fd), str(fetch_in_fd)]
        return args


@dataclass
class Jail:
    """A started jail: its process, the pipes to it and the read end of its result pipe."""

    process: subprocess.Popen[bytes]
    result_read: int
    fetch_requests: int | None = None  # the jail's fetch requests arrive here
    fetch_answers: int | None = None  # and the host's answers go out here
    ready: bool = False
    group: CallGroup | None = None  # the jail's memory and process budget, if groups work

    def await_ready(self, timeout: float) -> bool:
        """Wait until the runner is past start-up and blocks on its request."""
        if not self.ready:
            readable, _, _ = select.select([self.result_read], [], [], timeout)
            if readable and os.read(self.result_read, 1) == READY:
                self.ready = True
        return self.ready

    def kill(self) -> None:
        """Kill the whole jail (bwrap's process group; the PID namespace dies with it)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, 9)

    def close(self) -> None:
        """Kill if still running, reap, and close every pipe."""
        if self.process.poll() is None:
            self.kill()
        self.process.wait()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        for fd in (self.result_read, self.fetch_requests, self.fetch_answers):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if self.group is not None:
            self.group.remove()


def spawn(config: JailConfig) -> Jail:
    """Start a jail whose runner blocks reading its request from stdin.

    Raises:
        JailUnavailable: bwrap cannot be started.
    """
    try:
        seccomp_fd = syscall_filter.program_fd()
    except syscall_filter.FilterUnavailable as exc:
        raise JailUnavailable(str(exc)) from exc
    try:
        group = _open_group()
    except JailUnavailable:
        os.close(seccomp_fd)
        raise
    result_read, result_write = os.pipe()
    requests_read, requests_write = os.pipe()
    answers_read, answers_write = os.pipe()
    ours = (result_read, requests_read, answers_write)
    theirs = (result_write, requests_write, answers_read, seccomp_fd)
    for fd in ours:
        os.set_inheritable(fd, False)
    argv = config.argv(*theirs)
    switch_user = os.geteuid() == 0
    if switch_user and SETPRIV:
        # switching user in an exec'd helper lets subprocess use vfork (user= forces a fork
        # of this whole process, which costs milliseconds for a large server)
        setpriv = [SETPRIV, f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups"]
        argv = setpriv + argv
        switch_user = False
    if group is not None:
        # the first process joins the group before it executes anything: all the jail's
        # processes are then charged to it, from bwrap to the tool's last child
        count = len(group.procs_files)
        joins = " && ".join(f'echo 0 > "${i + 1}"' for i in range(count))
        script = f'{joins} && shift {count} && exec "$@"'
        argv = ["/bin/sh", "-c", script, "sh", *group.procs_files, *argv]
    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=theirs,
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            start_new_session=True,
            user=SANDBOX_UID if switch_user else None,
            group=SANDBOX_UID if switch_user else None,
            extra_groups=[] if switch_user else None,
        )
    except OSError as exc:
        for fd in ours:
            os.close(fd)
        if group is not None:
            group.remove()
        raise JailUnavailable(f"cannot start bubblewrap ({config.bwrap}): {exc}") from exc
    finally:
        for fd in theirs:
            os.close(fd)
    return Jail(process, result_read, requests_read, answers_write, group=group)


def _open_group() -> CallGroup | None:
    """A fresh budget group for one jail (None where this machine has no usable groups).

    Raises:
        JailUnavailable: groups work here but this one could not be made; a jail without
            its group would run with a weaker budget than the runner was told to expect.
    """
    budgeter = budget.detect()
    if budgeter is None:
        return None
    defaults = ProcessLimits()
    try:
        return budgeter.open(defaults.memory_bytes, defaults.max_processes)
    except OSError as exc:
        raise JailUnavailable(f"cannot create the jail's {budgeter.name} group: {exc}") from exc


def probe(config: JailConfig | None = None, timeout: float = 10.0) -> str | None:
    """Start one jail and see its runner get ready: None when jails work here, else why not
    (no bwrap, or a kernel or security policy that refuses the namespaces).

    A jail still starting after ``timeout`` is a slow machine, not a refusal: bwrap got past
    the namespaces it would have failed on, so jails work (calls keep their own deadlines).
    """
    try:
        jail = spawn(config or JailConfig())
    except JailUnavailable as exc:
        return str(exc)
    try:
        if jail.await_ready(timeout):
            return None
        if not select.select([jail.result_read], [], [], 0)[0]:
            return None  # no end of file on its result pipe: the jail is starting still
        jail.kill()
        jail.process.wait()
        stderr = jail.process.stderr.read() if jail.process.stderr else b""
        detail = stderr.decode("utf-8", "replace").strip()[:300] or "no output"
        return f"bubblewrap could not start a jail: {detail}"
    finally:
        jail.close()
