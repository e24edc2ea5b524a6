"""``toolfoundry executor``: the Python tier's jails, as a one-off run or an HTTP service."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from toolfoundry.cli.options import (
    ARGS_HELP,
    Bounded,
    Seconds,
    host_port,
    json_args,
    print_result,
)
from toolfoundry.config import LIMIT_BOUNDS
from toolfoundry.sandbox.process import EXECUTOR_TOKEN_ENV
from toolfoundry.sandbox.process.executor import MIB, PROCESS_LIMIT_BOUNDS, ProcessLimits
from toolfoundry.spec.limits import PYTHON_QUEUE_S, PYTHON_TOTAL_BYTES, Bound

_MEMORY = PROCESS_LIMIT_BOUNDS["memory_bytes"]  # the tier's range, in MiB for the flag
MEMORY_MIB = Bound(_MEMORY.low // MIB, _MEMORY.high // MIB)


@click.group()
def executor() -> None:
    """Run Python tools in bubblewrap jails (no network, no host files, no environment)."""


@executor.command("serve")
@click.option("--http", "address", required=True, metavar="HOST:PORT", help="Where to listen.")
@click.option(
    "--token",
    envvar=EXECUTOR_TOKEN_ENV,
    metavar="TOKEN",
    help=f"Bearer token clients must send (default: ${EXECUTOR_TOKEN_ENV}).",
)
@click.option("--pool", "pool_size", default=2, show_default=True, help="Warm workers to keep.")
@click.option(
    "--package",
    "packages",
    multiple=True,
    metavar="NAME",
    help="Installed package tools may import (repeatable).",
)
@click.option(
    "--total-mib",
    type=Bounded(LIMIT_BOUNDS["python_total_mib"]),
    default=PYTHON_TOTAL_BYTES // MIB,
    show_default=True,
    help="The memory budgets of concurrent calls together, in MiB (as [limits] python_total_mib).",
)
@click.option(
    "--queue-s",
    type=Seconds(LIMIT_BOUNDS["python_queue_s"]),
    default=PYTHON_QUEUE_S,
    show_default=True,
    help="How long a call waits for room in that total before it fails as overloaded.",
)
def serve(
    address: str,
    token: str | None,
    pool_size: int,
    packages: tuple[str, ...],
    total_mib: int,
    queue_s: float,
) -> None:
    """Serve POST /v1/run for HttpExecutor clients (one endpoint, token-protected)."""
    import uvicorn

    from toolfoundry.sandbox.process.admission import Admission
    from toolfoundry.sandbox.process.pool import WarmPool
    from toolfoundry.sandbox.process.service import executor_app

    host, port = host_port(address)
    if not token:
        raise click.UsageError(f"a token is required: --token or ${EXECUTOR_TOKEN_ENV}")
    admission = Admission(total_mib * MIB, queue_s)  # this service's calls, whoever sends them
    with WarmPool(pool_size, packages=packages, admission=admission) as pool:
        app = executor_app(pool, token, ProcessLimits(allowed_packages=packages))
        click.echo(f"executor listening on http://{host}:{port}/v1/run", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning")


@executor.command("run")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--args", "args_json", metavar="JSON", help=ARGS_HELP)
@click.option("--timeout", type=Seconds(), default=5.0, show_default=True, help="Seconds.")
@click.option(
    "--memory",
    "memory_mib",
    type=Bounded(MEMORY_MIB),
    default=512,
    show_default=True,
    help="MiB.",
)
@click.option("--package", "packages", multiple=True, metavar="NAME", help="Allowed package.")
@click.option("--json", "as_json", is_flag=True, help="Print the whole CallResult as JSON.")
def run(
    file: Path,
    args_json: str | None,
    timeout: float,
    memory_mib: int,
    packages: tuple[str, ...],
    as_json: bool,
) -> None:
    """Run FILE.py's handler(args) once in a fresh jail; exit 1 when the call fails."""
    from toolfoundry.sandbox.process import default_executor

    args = json_args(args_json)
    if os.environ.get("TOOLFOUNDRY_EXECUTOR") is None:
        from toolfoundry.sandbox.process.bwrap import BwrapExecutor
        from toolfoundry.sandbox.process.jail import find_bwrap

        if find_bwrap() is None:
            raise click.ClickException(
                "bubblewrap (bwrap) is not installed (Debian: apt-get install bubblewrap)"
            )
        chosen: Any = BwrapExecutor()
    else:
        chosen = default_executor()
    limits = ProcessLimits(
        timeout_s=timeout, memory_bytes=memory_mib * MIB, allowed_packages=packages
    )
    result = chosen.run(file.read_text(encoding="utf-8"), args, limits, tool=file.stem)
    chosen.close()
    print_result(result, as_json)
    sys.exit(0 if result.ok else 1)
