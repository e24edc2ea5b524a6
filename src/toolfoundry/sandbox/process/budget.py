"""Per-call memory and process budgets that hold for a jail as a whole, children included.

RLIMIT_AS binds one process and RLIMIT_NPROC only counts processes, so together they let a
tool multiply its memory by forking (16 processes x 512 MiB). A control group bounds the
sum: each jail gets a fresh child group (memory and pids), its first process joins the
group before it executes bwrap, and every process the tool starts is charged to it.

Mechanisms, detected once per process (:func:`detect`), one small class each:

- :class:`CgroupV1` - the ``memory`` and ``pids`` hierarchies of cgroup v1, under this
  process's own group (``memory.limit_in_bytes``, ``memory.memsw.limit_in_bytes`` when
  swap accounting is on, ``pids.max``).
- :class:`CgroupV2` - a delegated cgroup v2 subtree whose ``cgroup.subtree_control`` already
  enables ``memory`` and ``pids`` (systemd ``Delegate=yes``); ``memory.max``,
  ``memory.swap.max``, ``pids.max``.
- ``None`` - no usable group: the runner then forbids new processes and threads
  (RLIMIT_NPROC 0), so RLIMIT_AS on the single process is the whole call's budget.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Protocol

CGROUP_ROOT = Path("/sys/fs/cgroup")
JAIL_PROCESSES = 4  # setpriv/bwrap, bwrap's pid 1 and the runner, before the tool forks
GROUP_PREFIX = "toolfoundry-call-"
STALE_S = 60.0


class CallGroup(Protocol):
    """One jail's group: the budget it enforces and what it saw."""

    procs_files: tuple[str, ...]  # the first process writes "0" to each to join before exec

    def apply(self, memory_bytes: int, max_processes: int) -> None:
        """Set the group's budgets (a warm jail's group gets its call's budgets); nothing to
        write when they are the ones already set (a warm jail made with the defaults).

        Raises:
            OSError: the kernel refused (e.g. a memory budget below what is already used).
        """
        ...

    def oom_killed(self) -> bool:
        """Whether the kernel killed a process of the group for its memory budget."""
        ...

    def peak_bytes(self) -> int | None:
        """The group's peak memory use, when the kernel reports it."""
        ...

    def remove(self) -> None:
        """Remove the group (its processes must be gone)."""
        ...


class Budgeter(Protocol):
    """Creates one group per jail."""

    name: str

    def sweep(self) -> None:
        """Remove stale empty call groups (see :func:`_sweep`)."""
        ...

    def open(self, memory_bytes: int, max_processes: int) -> CallGroup:
        """A fresh group with these budgets.

        Raises:
            OSError: the group cannot be created.
        """
        ...


def _write(path: Path, value: str) -> None:
    path.write_text(value, encoding="ascii")


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _counter(path: Path, key: str) -> int:
    """The value of ``key`` in a flat-keyed cgroup file (memory.events, memory.oom_control)."""
    with contextlib.suppress(OSError):
        for line in path.read_text(encoding="ascii").splitlines():
            name, _, value = line.partition(" ")
            if name == key and value.strip().isdigit():
                return int(value)
    return 0


def _remove_dir(path: Path) -> None:
    for attempt in range(50):  # a killed jail's last tasks leave the group within milliseconds
        try:
            path.rmdir()
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.01 * (attempt + 1) if attempt < 10 else 0.1)
        else:
            return


class _V1Group:
    def __init__(self, memory: Path, pids: Path) -> None:
        self.memory, self.pids = memory, pids
        self.procs_files: tuple[str, ...] = (
            str(memory / "cgroup.procs"),
            str(pids / "cgroup.procs"),
        )
        self.applied: tuple[int, int] | None = None

    def apply(self, memory_bytes: int, max_processes: int) -> None:
        if self.applied == (memory_bytes, max_processes):
            return  # only this process writes the group's files: they still say so
        self.applied = None
        self._apply(memory_bytes, max_processes)
        self.applied = (memory_bytes, max_processes)

    def _apply(self, memory_bytes: int, max_processes: int) -> None:
        _write(self.pids / "pids.max", str(max_processes + JAIL_PROCESSES))
        memsw = self.memory / "memory.memsw.limit_in_bytes"
        # memsw must stay >= the memory limit: lower memory first, raise memsw first
        order = [memsw.name, "memory.limit_in_bytes"]
        current = _read_int(self.memory / "memory.limit_in_bytes") or 0
        if memory_bytes < current:
            order.reverse()
        for name in order:
            if name == memsw.name and not memsw.exists():
                continue
            _write(self.memory / name, str(memory_bytes))

    def oom_killed(self) -> bool:
        return _counter(self.memory / "memory.oom_control", "oom_kill") > 0

    def peak_bytes(self) -> int | None:
        return _read_int(self.memory / "memory.max_usage_in_bytes")

    def remove(self) -> None:
        _remove_dir(self.memory)
        _remove_dir(self.pids)


class CgroupV1:
    """cgroup v1: a child group in the ``memory`` and ``pids`` hierarchies per jail."""

    name = "cgroup-v1"

    def sweep(self) -> None:
        _sweep((self.memory_parent, self.pids_parent))

    def __init__(self, memory_parent: Path, pids_parent: Path) -> None:
        self.memory_parent, self.pids_parent = memory_parent, pids_parent

    def open(self, memory_bytes: int, max_processes: int) -> CallGroup:
        name = GROUP_PREFIX + uuid.uuid4().hex[:12]
        memory, pids = self.memory_parent / name, self.pids_parent / name
        memory.mkdir()
        try:
            pids.mkdir()
            group = _V1Group(memory, pids)
            group.apply(memory_bytes, max_processes)
        except OSError:
            _remove_dir(pids)
            _remove_dir(memory)
            raise
        return group


class _V2Group:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.procs_files: tuple[str, ...] = (str(path / "cgroup.procs"),)
        self.applied: tuple[int, int] | None = None

    def apply(self, memory_bytes: int, max_processes: int) -> None:
        if self.applied == (memory_bytes, max_processes):
            return  # only this process writes the group's files: they still say so
        self.applied = None
        self._apply(memory_bytes, max_processes)
        self.applied = (memory_bytes, max_processes)

    def _apply(self, memory_bytes: int, max_processes: int) -> None:
        _write(self.path / "pids.max", str(max_processes + JAIL_PROCESSES))
        _write(self.path / "memory.max", str(memory_bytes))
        swap = self.path / "memory.swap.max"
        if swap.exists():
            _write(swap, "0")
        with contextlib.suppress(OSError):
            _write(self.path / "memory.oom.group", "1")  # one OOM kill ends the whole call

    def oom_killed(self) -> bool:
        return _counter(self.path / "memory.events", "oom_kill") > 0

    def peak_bytes(self) -> int | None:
        return _read_int(self.path / "memory.peak")

    def remove(self) -> None:
        _remove_dir(self.path)


class CgroupV2:
    """cgroup v2: a child of a delegated group that enables ``memory`` and ``pids``."""

    name = "cgroup-v2"

    def sweep(self) -> None:
        _sweep((self.parent,))

    def __init__(self, parent: Path) -> None:
        self.parent = parent

    def open(self, memory_bytes: int, max_processes: int) -> CallGroup:
        path = self.parent / (GROUP_PREFIX + uuid.uuid4().hex[:12])
        path.mkdir()
        try:
            group = _V2Group(path)
            group.apply(memory_bytes, max_processes)
        except OSError:
            _remove_dir(path)
            raise
        return group


def _own_groups(text: str) -> tuple[dict[str, str], str | None]:
    """This process's v1 groups by controller, and its v2 group, from /proc/self/cgroup."""
    v1: dict[str, str] = {}
    v2 = None
    for line in text.splitlines():
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            v2 = path
        for controller in controllers.split(","):
            v1[controller] = path
    return v1, v2


def _works(budgeter: Budgeter) -> bool:
    try:
        budgeter.open(64 * 1024 * 1024, 1).remove()
    except OSError:
        return False
    return True


_detected: list[Budgeter | None] = []  # the one verdict, once made
_detecting = threading.Lock()


def detect() -> Budgeter | None:
    """The per-call budget mechanism this machine allows (tried once, by creating a group).

    Concurrent first callers wait for the one try (under a lock) rather than each creating
    and sweeping groups. ``TOOLFOUNDRY_PROCESS_BUDGET=rlimit`` forces the fallback (for tests
    and for machines where groups exist but should not be used).
    """
    if not _detected:
        with _detecting:
            if not _detected:
                _detected.append(_detect())
    return _detected[0]


def _detect() -> Budgeter | None:
    if os.environ.get("TOOLFOUNDRY_PROCESS_BUDGET") == "rlimit":
        return None
    try:
        v1, v2 = _own_groups(Path("/proc/self/cgroup").read_text(encoding="ascii"))
    except (OSError, ValueError):
        return None
    candidates: list[Budgeter] = []
    if "memory" in v1 and "pids" in v1:
        candidates.append(
            CgroupV1(
                CGROUP_ROOT / "memory" / v1["memory"].lstrip("/"),
                CGROUP_ROOT / "pids" / v1["pids"].lstrip("/"),
            )
        )
    if v2 is not None:
        for mount in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
            parent = mount / v2.lstrip("/")
            enabled = (parent / "cgroup.subtree_control").exists() and set(
                (parent / "cgroup.subtree_control").read_text(encoding="ascii").split()
            ) >= {"memory", "pids"}
            if enabled:
                candidates.append(CgroupV2(parent))
    for budgeter in candidates:
        if _works(budgeter):
            budgeter.sweep()
            return budgeter
    return None


def _sweep(parents: tuple[Path, ...]) -> None:
    """Remove empty call groups left by a process that exited before its reaper ran.

    Only groups older than a minute: a younger one may be another process's, not yet joined.
    """
    cutoff = time.time() - STALE_S
    for parent in parents:
        with contextlib.suppress(OSError):
            for path in parent.glob(GROUP_PREFIX + "*"):
                with contextlib.suppress(OSError):
                    if path.stat().st_mtime < cutoff:
                        path.rmdir()  # refused while the group has processes
