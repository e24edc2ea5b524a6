"""``/dev`` in the jail: device nodes on a read-only mount, and ``/dev/shm`` a sized tmpfs whose
pages count against the call's memory budget (with a control group) and are bounded by its
size in any case (without one, tmpfs pages are outside the address-space rlimit)."""

from __future__ import annotations

from typing import Any

import pytest

from toolfoundry.sandbox.process import budget
from toolfoundry.sandbox.process.bwrap import BwrapExecutor
from toolfoundry.sandbox.process.executor import MIB, ProcessLimits

FILL_SHM = (
    "def handler(a):\n"
    "    os = __import__('os', {})\n"
    "    out = {}\n"
    "    for path in ('/dev/planted', '/dev/null'):\n"
    "        try:\n"
    "            fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)\n"
    "            os.write(fd, b'x'); os.close(fd); out[path] = 'written'\n"
    "        except OSError as e:\n"
    "            out[path] = e.strerror\n"
    "    chunk, stored = b'x' * (1024 * 1024), 0\n"
    "    try:\n"
    "        for k in range(a['files']):\n"
    "            fd = os.open('/dev/shm/f%d' % k, os.O_WRONLY | os.O_CREAT, 0o600)\n"
    "            for _ in range(12):\n"
    "                os.write(fd, chunk); stored += 1\n"
    "            os.close(fd)\n"
    "    except OSError as e:\n"
    "        out['shm'] = e.strerror\n"
    "    out['stored_mib'] = stored\n"
    "    return out\n"
)


def fill(executor: BwrapExecutor) -> Any:
    # 60 files of 12 MiB (each under the file-size rlimit): 720 MiB against a 512 MiB budget
    limits = ProcessLimits(timeout_s=60, memory_bytes=512 * MIB)
    return executor.run(FILL_SHM, {"files": 60}, limits)


@pytest.mark.parametrize("groups", [True, False], ids=["control group", "no control group"])
def test_dev_is_read_only_and_shm_is_bounded(
    cold: BwrapExecutor, monkeypatch: pytest.MonkeyPatch, groups: bool
) -> None:
    if groups and budget.detect() is None:
        pytest.skip("no usable memory and pids control group on this machine")
    if not groups:
        monkeypatch.setattr(budget, "detect", lambda: None)
    result = fill(cold)
    assert result.ok, result
    assert result.value["/dev/planted"] == "Read-only file system"
    assert result.value["/dev/null"] == "written"  # the device nodes still work
    assert result.value["shm"] == "No space left on device"
    assert result.value["stored_mib"] <= 64  # the tmpfs's size (JailConfig.tmp_bytes)
