"""The jail's seccomp profile: system calls a Python tool has no use for, refused with EPERM.

A deny-list in the spirit of the container runtimes' default profiles: everything else is
allowed (a tool's interpreter, its threads and the standard library need no more than this
refuses), and each denied call is either kernel attack surface an unprivileged process still
reaches (io_uring, eBPF, perf, userfaultfd, the keyring) or a power the jail already withholds
by namespaces and dropped capabilities, refused once more before the kernel looks at it. The
reason for each is beside it, in :data:`DENIED`; docs/security.md lists the profile.

The filter is compiled to a BPF program by libseccomp (through ``pyseccomp``, the ctypes
binding API-compatible with libseccomp's own) once per process, under a lock, and handed to
each jail on its own file descriptor for bubblewrap's ``--seccomp``. Only the machine's native
architecture is allowed: a call through another ABI (x86's 32-bit ``int 0x80``, x32) kills the
caller, so the list cannot be bypassed by spelling a call for another architecture.
"""

from __future__ import annotations

import errno
import os
import threading
from types import ModuleType

# syscall -> why a tool may not make it. Names absent on this architecture are skipped.
DENIED: dict[str, str] = {
    # kernel attack surface an unprivileged process still reaches, with a record of exploits
    "io_uring_setup": "io_uring: a large kernel interface behind many privilege escalations",
    "io_uring_enter": "io_uring",
    "io_uring_register": "io_uring",
    "bpf": "eBPF programs and maps: in-kernel code and its verifier's bugs",
    "perf_event_open": "performance counters: kernel exploits and side channels on the host",
    "userfaultfd": "pauses kernel page faults at will, widening kernel race windows",
    "keyctl": "the kernel keyring is not namespaced: it is the host's",
    "add_key": "the kernel keyring",
    "request_key": "the kernel keyring",
    "personality": "turns off address randomisation or makes reads executable for what it runs",
    # other processes' memory and state
    "ptrace": "reading and steering other processes",
    "process_vm_readv": "reading another process's memory",
    "process_vm_writev": "writing another process's memory",
    "process_madvise": "advising on another process's memory",
    "pidfd_getfd": "taking another process's file descriptors",
    "kcmp": "comparing kernel objects of other processes (a kernel-pointer oracle)",
    # the jail's namespaces and mounts are set up by bubblewrap, not to be changed
    "unshare": "new namespaces",
    "setns": "entering other namespaces",
    "mount": "mounting",
    "umount2": "unmounting",
    "pivot_root": "changing the root",
    "chroot": "changing the root",
    "open_tree": "the new mount interface",
    "move_mount": "the new mount interface",
    "fsopen": "the new mount interface",
    "fsconfig": "the new mount interface",
    "fsmount": "the new mount interface",
    "fspick": "the new mount interface",
    "mount_setattr": "the new mount interface",
    "name_to_handle_at": "file handles that bypass path lookup",
    "open_by_handle_at": "file handles that bypass path lookup (the 'shocker' escape)",
    # the machine itself: modules, reboot, clock, swap, accounting, quotas, its log, I/O ports
    "init_module": "loading kernel modules",
    "finit_module": "loading kernel modules",
    "delete_module": "unloading kernel modules",
    "kexec_load": "replacing the running kernel",
    "kexec_file_load": "replacing the running kernel",
    "reboot": "rebooting",
    "swapon": "swap",
    "swapoff": "swap",
    "acct": "process accounting",
    "quotactl": "disk quotas",
    "quotactl_fd": "disk quotas",
    "syslog": "the kernel's log",
    "settimeofday": "setting the clock",
    "clock_settime": "setting the clock",
    "vhangup": "hanging up the terminal",
    "iopl": "I/O port access",
    "ioperm": "I/O port access",
    "mbind": "NUMA placement of memory",
    "set_mempolicy": "NUMA placement of memory",
    "migrate_pages": "moving another process's pages",
    "move_pages": "moving another process's pages",
    "fanotify_init": "watching the file system",
    # obsolete interfaces nothing current uses
    "uselib": "obsolete",
    "ustat": "obsolete",
    "sysfs": "obsolete",
    "_sysctl": "obsolete",
    "nfsservctl": "obsolete",
    "lookup_dcookie": "obsolete",
    "create_module": "obsolete",
    "get_kernel_syms": "obsolete",
    "query_module": "obsolete",
}

# clone with a namespace flag is refused (as unshare is); clone3 passes its flags in memory a
# filter cannot read, so it answers ENOSYS, and glibc falls back to clone, which is checked.
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
NOT_IMPLEMENTED = ("clone3",)

_program: list[bytes] = []  # the compiled filter, once made
_making = threading.Lock()


class FilterUnavailable(RuntimeError):
    """libseccomp is missing or refused the profile: no jail starts without its filter."""


def denied_here() -> dict[str, int]:
    """The denied calls this architecture has, by name: their numbers.

    Raises:
        FilterUnavailable: libseccomp cannot be loaded.
    """
    seccomp = _library()
    numbers = {name: seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) for name in DENIED}
    return {name: number for name, number in numbers.items() if number >= 0}


def program() -> bytes:
    """The profile as a BPF program for bubblewrap's ``--seccomp`` (made once per process).

    Raises:
        FilterUnavailable: libseccomp is missing or refused a rule.
    """
    if not _program:
        with _making:
            if not _program:
                _program.append(_compile())
    return _program[0]


def program_fd() -> int:
    """A new file descriptor reading the program from its start (bubblewrap reads it to its
    end, so every jail gets its own); the caller closes it once bubblewrap has started.

    Raises:
        FilterUnavailable: as :func:`program`.
    """
    data = program()
    fd = os.memfd_create("toolfoundry-seccomp", os.MFD_CLOEXEC)
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _library() -> ModuleType:
    try:
        import pyseccomp
    except (ImportError, OSError, RuntimeError) as exc:  # RuntimeError: no libseccomp.so
        raise FilterUnavailable(
            f"the jail's seccomp filter needs libseccomp ({exc}); "
            "install it (Debian: apt-get install libseccomp2) and pyseccomp"
        ) from exc
    module: ModuleType = pyseccomp
    return module


def _compile() -> bytes:
    seccomp = _library()
    refuse = seccomp.ERRNO(errno.EPERM)
    try:
        rules = seccomp.SyscallFilter(seccomp.ALLOW)
        for number in denied_here().values():
            rules.add_rule(refuse, number)
        for flag in CLONE_NAMESPACE_FLAGS.values():
            rules.add_rule(refuse, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, flag, flag))
        for name in NOT_IMPLEMENTED:
            if seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) >= 0:
                rules.add_rule(seccomp.ERRNO(errno.ENOSYS), name)
        with os.fdopen(os.memfd_create("toolfoundry-seccomp"), "w+b") as out:
            rules.export_bpf(out)
            out.seek(0)
            return out.read()
    except OSError as exc:
        raise FilterUnavailable(f"libseccomp refused the jail's profile: {exc}") from exc
