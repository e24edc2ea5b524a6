"""The optional docker backend; skipped, with the reason, where no engine answers."""

from __future__ import annotations

import pytest

from toolfoundry.sandbox.process.docker import DockerExecutor, docker_available
from toolfoundry.sandbox.process.executor import ProcessLimits

REASON = docker_available()
needs_docker = pytest.mark.skipif(REASON is not None, reason=f"no docker engine: {REASON}")


def test_the_command_line_isolates() -> None:
    argv = DockerExecutor().argv("tf-x", ProcessLimits(max_processes=8))
    for flag in ("--network=none", "--read-only", "--cap-drop=ALL", "--pids-limit=8"):
        assert flag in argv
    assert "--user=65534:65534" in argv
    assert argv[-1] == "stdout"


@needs_docker
def test_docker_runs_and_contains() -> None:
    executor = DockerExecutor()
    ok = executor.run(
        "def handler(a):\n    print('x')\n    return a['n'] * 2\n", {"n": 2}, ProcessLimits()
    )
    assert ok.value == 4
    assert ok.logs == ("x",)
    net = executor.run(
        "def handler(a):\n    s = __import__('socket', {})\n"
        "    return s.create_connection(('1.1.1.1', 53), 2) and 'open'\n",
        {},
        ProcessLimits(),
    )
    assert net.error is not None
    assert net.error.kind.value == "runtime_error"
