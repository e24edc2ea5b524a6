"""The per-call memory and process budget holds for the jail as a whole, children included,
on calls and on a draft's tests, and without a control group no fork multiplies it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolfoundry import Foundry
from toolfoundry.config import Config
from toolfoundry.forge.cases import TestCase
from toolfoundry.forge.sandbox_runner import PythonRunner
from toolfoundry.forge.testrun import run_case
from toolfoundry.sandbox.process import budget
from toolfoundry.sandbox.process.bwrap import BwrapExecutor
from toolfoundry.sandbox.process.executor import MIB, ProcessLimits
from toolfoundry.sandbox.process.pool import WarmPool
from toolfoundry.spec import CallLimits

# 20 children of 100 MiB each (filled, so the memory is really used)
FORK_AND_ALLOCATE = (
    "def handler(a):\n"
    "    os = __import__('os', {})\n"
    "    time = __import__('time', {})\n"
    "    pids = []\n"
    "    for _ in range(20):\n"
    "        pid = os.fork()\n"
    "        if pid == 0:\n"
    "            b = b'x' * (100 * 1024 * 1024)\n"
    "            time.sleep(3)\n"
    "            os._exit(0)\n"
    "        pids.append(pid)\n"
    "    return [os.waitpid(p, 0)[1] for p in pids]\n"
)

# 12 children (within the default 16 processes), in the form a review found the static check
# letting through (operator.attrgetter with a computed name). The check refuses it now; the
# jail's budget must hold for a draft's test run regardless, so that run is made directly.
DRAFT_FORK_AND_ALLOCATE = (
    "import operator\nimport random\nimport time\n\n"
    "def handler(args):\n"
    "    os = operator.attrgetter('_' + 'os')(random)\n"
    "    fork, wait, leave = operator.attrgetter('fo' + 'rk', 'waitpid', '_' + 'exit')(os)\n"
    "    pids = []\n"
    "    for _ in range(12):\n"
    "        pid = fork()\n"
    "        if pid == 0:\n"
    "            b = b'x' * (100 * 1024 * 1024)\n"
    "            time.sleep(3)\n"
    "            leave(0)\n"
    "        pids.append(pid)\n"
    "    return [wait(p, 0)[1] for p in pids]\n"
)

needs_groups = pytest.mark.skipif(
    budget.detect() is None, reason="no usable memory and pids control group on this machine"
)


@needs_groups
def test_forked_children_share_one_budget(cold: BwrapExecutor) -> None:
    limits = ProcessLimits(timeout_s=20, max_processes=32, memory_bytes=512 * MIB)
    started = time.monotonic()
    result = cold.run(FORK_AND_ALLOCATE, {}, limits)
    assert result.error is not None, result
    assert result.error.kind.value == "memory_limit"
    assert "together" in result.error.message
    assert result.details["peak_memory_bytes"] <= 512 * MIB
    assert time.monotonic() - started < 10  # stopped at the budget, not at the deadline


@needs_groups
def test_each_call_gets_a_fresh_budget(pool: WarmPool) -> None:
    code = "def handler(a):\n    return len(bytearray(a['n'] * 1024 * 1024))\n"
    for _ in range(3):  # a call near its budget does not leave the next one less
        result = pool.run(code, {"n": 300}, ProcessLimits(memory_bytes=512 * MIB))
        assert result.ok, result
        assert 300 * MIB <= result.details["peak_memory_bytes"] <= 512 * MIB
    small = pool.run(code, {"n": 100}, ProcessLimits(memory_bytes=64 * MIB))
    assert small.error is not None
    assert small.error.kind.value == "memory_limit"


@needs_groups
def test_a_fork_bomb_stops_at_the_process_budget(cold: BwrapExecutor) -> None:
    code = (
        "def handler(a):\n    os = __import__('os', {})\n    n = 0\n    while True:\n"
        "        try:\n            pid = os.fork()\n"
        "        except OSError:\n            return n\n"
        "        if pid == 0:\n            __import__('time', {}).sleep(30)\n"
        "            os._exit(0)\n        n += 1\n"
    )
    result = cold.run(code, {}, ProcessLimits(max_processes=8))
    assert result.ok, result
    assert result.value <= 8


@needs_groups
def test_groups_are_removed_after_the_call(
    cold: BwrapExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only this test's groups: other workers' calls open and remove theirs meanwhile.
    found = budget.detect()
    assert found is not None
    opened: list[budget.CallGroup] = []
    open_group = found.open

    def recording_open(memory_bytes: int, max_processes: int) -> budget.CallGroup:
        group = open_group(memory_bytes, max_processes)
        opened.append(group)
        return group

    monkeypatch.setattr(found, "open", recording_open)
    for _ in range(3):
        assert cold.run("def handler(a):\n    return 1\n", {}, ProcessLimits()).ok
    assert len(opened) == 3
    folders = {Path(file).parent for group in opened for file in group.procs_files}
    deadline = time.monotonic() + 5
    while any(folder.exists() for folder in folders) and time.monotonic() < deadline:
        time.sleep(0.05)  # the reaper removes a group off the call path
    assert not [folder for folder in folders if folder.exists()]


def test_without_groups_the_tool_cannot_fork(
    cold: BwrapExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(budget, "detect", lambda: None)
    result = cold.run(FORK_AND_ALLOCATE, {}, ProcessLimits(timeout_s=20, max_processes=32))
    assert result.error is not None
    assert result.error.kind.value == "runtime_error"
    assert "Resource temporarily unavailable" in result.error.message
    alone = cold.run(
        "def handler(a):\n    return len(bytearray(600 * 1024 * 1024))\n", {}, ProcessLimits()
    )
    assert alone.error is not None
    assert alone.error.kind.value == "memory_limit"


@pytest.fixture
def foundry(tmp_path: Path) -> Iterator[Foundry]:
    # time enough on a loaded machine: the budget, not the deadline, must stop the draft
    config = Config(limits=CallLimits(timeout_s=10))
    fd = Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}", config=config)
    yield fd
    fd.close()


@needs_groups
def test_a_draft_whose_tests_fork_past_the_budget_is_rejected(foundry: Foundry) -> None:
    draft: dict[str, Any] = {
        "name": "fork_alloc",
        "description": "Forks children that together allocate past the call's budget.",
        "language": "python",
        "parameters": {"type": "object", "properties": {}},
        "code": DRAFT_FORK_AND_ALLOCATE,
        "tests": [{"input": {}, "expected": [0] * 12}],
    }
    created = foundry.create_tool(draft)
    assert created.status == "rejected", created.to_dict()
    assert created.step.blockers == ("static_check_failed",)  # the fence holds first
    assert foundry.tools() == []
    # the boundary holds without it: the draft's test case on the forge's own runner
    executor = foundry.python_executor()
    assert executor is not None
    case = TestCase("#0", "{}", json.dumps([0] * 12))
    limits = foundry.config.limits
    result = run_case(PythonRunner(executor), draft["code"], case, limits=limits, tool="t")
    assert not result.passed
    assert result.error is not None
    assert result.error.kind == "memory_limit", result.to_dict()
