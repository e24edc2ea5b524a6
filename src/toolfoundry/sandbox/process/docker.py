"""An optional backend: each call in ``docker run --network=none --read-only ...``.

For hosts where a container engine runs and bubblewrap is not wanted. Only stdio crosses a
``docker run``, so the runner keeps stdout for its frames and sends the tool's prints to
stderr. Killing the docker client does not stop a container, so a jail here is killed by
name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
import uuid
from typing import Any

from toolfoundry.sandbox.host.protocols import FetchProvider
from toolfoundry.sandbox.process.exchange import exchange, request_bytes
from toolfoundry.sandbox.process.executor import ProcessLimits
from toolfoundry.sandbox.process.jail import RUNNER_SOURCE, SANDBOX_UID, WORK_DIR, Jail
from toolfoundry.spec import CallResult, ErrorKind


def docker_available() -> str | None:
    """None when a docker engine answers; otherwise why not."""
    binary = shutil.which("docker")
    if binary is None:
        return "no docker client on PATH"
    try:
        probe = subprocess.run([binary, "info"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"docker info failed: {exc}"
    if probe.returncode != 0:
        return "docker info failed: " + probe.stderr.decode(errors="replace").strip()[:200]
    return None


class DockerJail(Jail):
    """A jail that is a named container."""

    name: str = ""

    def kill(self) -> None:
        """Stop the container itself, then the client."""
        subprocess.run(["docker", "kill", self.name], capture_output=True, check=False)
        super().kill()


class DockerExecutor:
    """Runs each call in a fresh container (no network, read-only root, no capabilities).

    Args:
        image: an image with ``python3`` (the stdlib is all the runner needs).
    """

    def __init__(self, image: str = "python:3.11-slim") -> None:
        self.image = image

    def argv(self, name: str, limits: ProcessLimits) -> list[str]:
        """The ``docker run`` command line for one call."""
        return [
            "docker",
            "run",
            "--rm",
            "-i",
            "--name",
            name,
            "--network=none",
            "--read-only",
            "--cap-drop=ALL",
            "--security-opt=no-new-privileges",
            f"--user={SANDBOX_UID}:{SANDBOX_UID}",
            f"--pids-limit={limits.max_processes}",
            f"--memory={limits.memory_bytes}",
            "--tmpfs=/tmp:size=64m",
            f"--tmpfs={WORK_DIR}:size=64m",
            f"--workdir={WORK_DIR}",
            "--env-file=/dev/null",
            self.image,
            "python3",
            "-I",
            "-S",
            "-B",
            "-c",
            RUNNER_SOURCE,
            "stdout",
        ]

    def run(
        self,
        code: str,
        args: Any,
        limits: ProcessLimits,
        *,
        tool: str | None = None,
        fetch: FetchProvider | None = None,
    ) -> CallResult:
        """Run one call in a new container (stdlib only, no fetch)."""
        started = time.monotonic()
        if limits.allowed_packages or fetch is not None:
            return CallResult.failure(
                ErrorKind.CAPABILITY_DENIED,
                "the docker backend offers the stdlib only, without fetch",
            )
        try:
            request = request_bytes(code, args, limits, [])
        except (TypeError, ValueError) as exc:
            return CallResult.failure(
                ErrorKind.INVALID_ARGUMENTS, f"the arguments are not JSON: {exc}"
            )
        name = f"toolfoundry-{uuid.uuid4().hex[:12]}"
        read_fd, write_fd = os.pipe()
        try:
            process = subprocess.Popen(
                self.argv(name, limits),
                stdin=subprocess.PIPE,
                stdout=write_fd,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_fd)
            return CallResult.failure(ErrorKind.RUNTIME_ERROR, f"cannot start docker: {exc}")
        finally:
            os.close(write_fd)
        jail = DockerJail(process, read_fd)
        jail.name = name
        return exchange(jail, request, limits, started, tool=tool)

    def close(self) -> None:
        """Nothing is kept between calls."""
