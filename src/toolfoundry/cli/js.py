"""``toolfoundry js run FILE.js``: run a one-off ES module in the sandbox.

With ``--db`` (or ``--config``) the module runs through that registry's foundry: its global
``tools`` reaches the registry's active tools (code mode), and the run is kept (its id is
printed; ``create`` takes a draft with ``"from_run"`` in place of ``code``). Without either,
nothing is opened and ``tools`` refuses every call.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from toolfoundry.cli.options import (
    ARGS_HELP,
    Bounded,
    Seconds,
    config_option,
    db_option,
    emit,
    json_args,
    login_name,
    open_foundry,
    print_result,
    say,
)
from toolfoundry.sandbox.policy import MIB
from toolfoundry.spec import CallLimits
from toolfoundry.spec.limits import CALL_LIMIT_BOUNDS

DEFAULT = CallLimits()  # the defaults of every call: js run starts from them too


@click.group()
def js() -> None:
    """Run JavaScript in the sandbox (QuickJS in WebAssembly, nothing ambient)."""


@js.command("run")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--args", "args_json", metavar="JSON", help=ARGS_HELP)
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="HOST",
    help="Host the script may fetch (repeatable; *.suffix and host:port work).",
)
@click.option(
    "--allow-private",
    "allow_private",
    multiple=True,
    metavar="HOST_OR_CIDR",
    help="Private address or host the script may reach (repeatable).",
)
@click.option(
    "--credential",
    "credentials",
    multiple=True,
    metavar="HOST:HEADER:ENV_VAR",
    help="Add header HEADER with $ENV_VAR's value to requests to HOST (repeatable).",
)
@click.option(
    "--timeout",
    type=Seconds(),
    default=DEFAULT.timeout_s,
    show_default=True,
    help="Time budget in seconds, compilation included.",
)
@click.option(
    "--memory",
    type=Bounded(CALL_LIMIT_BOUNDS["memory_mib"]),
    default=DEFAULT.memory_mib,
    show_default=True,
    metavar="MIB",
    help="Linear-memory cap in MiB.",
)
@db_option("The registry whose tools the module's `tools` reaches (default: none).")
@config_option
@click.option("--json", "as_json", is_flag=True, help="Print the whole CallResult as JSON.")
def run(
    file: Path,
    args_json: str | None,
    allow_hosts: tuple[str, ...],
    allow_private: tuple[str, ...],
    credentials: tuple[str, ...],
    timeout: float,
    memory: int,
    db: str | None,
    config_path: str | None,
    as_json: bool,
) -> None:
    """Run FILE (an ES module; top-level await works).

    If it exports handler, handler(args) is called; otherwise its default export is the
    result. With --db, `await tools.NAME(args)` calls that registry's tools (each a real call,
    under the tool's own capabilities) and the run is kept: its id is printed on stderr.
    Exit code 0 when the script succeeded, 1 when it failed, 2 for usage errors.
    """
    from toolfoundry.sandbox import SandboxPolicy, run_js
    from toolfoundry.sandbox.host.storage import MemoryStorage

    args = json_args(args_json)
    try:
        code = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.BadParameter(f"cannot read {file}: {exc}", param_hint="FILE") from exc
    fetch = _fetch_policy(allow_hosts, allow_private, credentials)
    policy = SandboxPolicy(
        timeout_s=timeout,
        memory_bytes=memory * MIB,
        fetch=fetch,
        storage=MemoryStorage(),
        tool=file.stem,
    )
    if db is None and config_path is None:
        result = run_js(code, args, policy)
    else:
        with open_foundry(db, config_path) as fd:
            result = fd.run_js(code, args, by=login_name(), policy=policy)
    run_id = result.details.get("run_id")
    if as_json:
        emit({**result.to_dict(), "run_id": run_id} if run_id else result.to_dict())
    else:
        print_result(result, as_json)
        if run_id:
            say(f"run {run_id} kept: a draft may give it as from_run", err=True)
    sys.exit(0 if result.ok else 1)


def _fetch_policy(
    allow_hosts: tuple[str, ...], allow_private: tuple[str, ...], credentials: tuple[str, ...]
) -> Any:
    if not (allow_hosts or allow_private or credentials):
        return None
    from toolfoundry.sandbox.host.fetch import FetchPolicy

    try:
        return FetchPolicy.from_cli(allow_hosts, allow_private, credentials)
    except ValueError as exc:  # FetchPolicyError: names the flag value at fault
        raise click.UsageError(str(exc)) from exc
