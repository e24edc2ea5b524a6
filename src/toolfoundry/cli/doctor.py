"""``toolfoundry doctor``: is every part of this installation there and working?

One row per component: the sandbox's guest, polyfills and libraries (checked, then run once),
the module cache, the registry database, bubblewrap (the Python tier) and the user-facing pip
extras (the ones not installed on one line). ``--all`` adds what only working on toolfoundry
needs: chromium (the page tests) and the dev, bench and build extras, one row per extra. Exit 0
when everything a tool needs to be made and called works (optional parts may be absent), 1
otherwise. Nothing is created: a registry that does not exist yet is reported as such.
"""

from __future__ import annotations

import os
import platform
import shutil
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TypedDict

import click

from toolfoundry.cli.options import (
    config_option,
    db_option,
    emit,
    json_option,
    registry_problem,
)

# One module: the bundled library, two polyfilled web APIs; the expected answer is fixed.
PROBE = """import Decimal from "decimal.js";
export default [new Decimal("0.1").plus("0.2").toString(),
  new URL("https://example.test/a?b=1").searchParams.get("b"),
  new TextEncoder().encode("\\u00e9").length];
"""
PROBE_ANSWER = ["0.3", "1", 2]
ALL_HINT = "doctor --all also checks chromium and the dev, bench and build extras"


@dataclass(frozen=True)
class Check:
    """One component's state.

    Attributes:
        name: the component.
        status: ``ok``, ``absent`` (an optional part that is not installed) or ``failed``.
        detail: what was found.
        required: whether tools cannot be made or called without it.
        fix: what to do when it is not ok.
    """

    name: str
    status: str
    detail: str
    required: bool = True
    fix: str = ""

    @property
    def healthy(self) -> bool:
        return self.status == "ok" or not self.required


def sandbox_checks() -> list[Check]:
    """The built files, then one real call through them."""
    from toolfoundry.sandbox.js.installation import fix, installed
    from toolfoundry.sandbox.js.modules import MANIFEST

    problems = installed().problems()
    if problems:
        return [Check("sandbox files", "failed", "; ".join(problems), fix=fix())]
    files = installed()
    libs = _manifest_versions(MANIFEST)
    checks = [
        Check("guest", "ok", f"{files.guest} ({files.guest.stat().st_size // 1024} KiB)"),
        Check("polyfills", "ok", str(files.root / "polyfills.js")),
        Check("libraries", "ok", f"{len(libs)} packages: " + ", ".join(libs)),
    ]
    from toolfoundry.sandbox import run_js
    from toolfoundry.sandbox.js.module_cache import cache_dir
    from toolfoundry.sandbox.policy import SandboxPolicy

    started = time.monotonic()
    # first run on a machine compiles the guest and bakes its snapshot: allow for that
    result = run_js(PROBE, {}, SandboxPolicy(timeout_s=30.0))
    took = f"{(time.monotonic() - started) * 1000:.0f} ms"
    if result.ok and result.value == PROBE_ANSWER:
        checks.append(Check("sandbox run", "ok", f"decimal.js, URL and TextEncoder ({took})"))
    else:
        said = result.error.to_dict() if result.error else result.value
        checks.append(Check("sandbox run", "failed", f"the probe answered {said!r}", fix=fix()))
    cache = cache_dir()  # the run above has filled it, unless it cannot be written
    writable = cache.is_dir() and os.access(cache, os.W_OK)
    checks.append(
        Check(
            "module cache",
            "ok" if writable else "failed",
            str(cache) if writable else f"{cache} is not writable: every process compiles anew",
            required=False,
            fix="" if writable else "set XDG_CACHE_HOME to a writable directory",
        )
    )
    return checks


def _manifest_versions(manifest: Path) -> list[str]:
    """``name version`` per npm package (a package's extra entry points, e.g. dayjs plugins,
    counted with it)."""
    import json

    libs = json.loads(manifest.read_text(encoding="utf-8"))["libs"]
    packages: dict[str, tuple[str, int]] = {}
    for name, entry in libs.items():
        parts = name.split("/")
        package = "/".join(parts[:2]) if name.startswith("@") else parts[0]
        version, count = packages.get(package, (str(entry.get("version", "?")), 0))
        packages[package] = (version, count + 1)
    return [
        f"{package} {version}" + (f" ({count} modules)" if count > 1 else "")
        for package, (version, count) in sorted(packages.items())
    ]


def database_check(db: str | None, config_path: str | None) -> list[Check]:
    """Whether the registry the commands would open is reachable (nothing is created)."""
    from toolfoundry.config import ConfigError, load_config
    from toolfoundry.registry.engine import create_registry_engine, schema_revision, shown_url
    from toolfoundry.registry.sqlite_file import DEFAULT_DIR, DEFAULT_FILE, SCHEMA_HEAD

    try:
        config = load_config(config_path)
    except ConfigError as exc:
        return [Check("configuration", "failed", str(exc), fix="correct toolfoundry.toml")]
    shown = str(config.path) if config.path else "none (defaults)"
    checks = [Check("configuration", "ok", shown)]
    url = db or os.environ.get("TOOLFOUNDRY_DB") or config.registry_url
    if url is None:
        default = Path.cwd() / DEFAULT_DIR / DEFAULT_FILE
        if not default.exists():
            detail = f"{default} does not exist yet (the first command that needs it makes it)"
            return [*checks, Check("database", "ok", detail)]
        url = f"sqlite:///{default}"
    safe = shown_url(url)
    try:
        engine = create_registry_engine(url)
        try:
            with engine.connect() as conn:
                revision = schema_revision(conn)
        finally:
            engine.dispose()
    except Exception as exc:  # unreachable, unusable URL, missing driver: all one line
        return [*checks, Check("database", "failed", f"{safe}: {registry_problem(exc)}")]
    state = (
        "empty (made on first use)"
        if revision is None
        else f"schema {revision}"
        + ("" if revision == SCHEMA_HEAD else f" (this toolfoundry migrates to {SCHEMA_HEAD})")
    )
    return [*checks, Check("database", "ok", f"{safe}: reachable, {state}")]


def upstream_checks(config_path: str | None, timeout: float = 15.0) -> list[Check]:
    """One row per ``[[upstream]]`` MCP server: connected with its tools listed, or why not
    (an upstream that is down does not stop toolfoundry: its calls are ``unavailable``)."""
    from toolfoundry.config import ConfigError, load_config

    try:
        config = load_config(config_path)
    except ConfigError:
        return []  # the configuration row says why
    if not config.upstreams:
        return []
    from toolfoundry.sandbox.host.credentials import environment_store
    from toolfoundry.upstream import UpstreamServers

    # the store serve and every command read (a program's own store is not known here)
    servers = UpstreamServers(config.upstreams, secret_store=environment_store())
    try:
        servers.wait(timeout)
        statuses = servers.statuses()
    finally:
        servers.close()
    checks = []
    for status in statuses:
        where = f"{status.transport} {status.target}"
        if status.state.value == "ready":
            skipped = f"; {len(status.skipped)} left out" if status.skipped else ""
            detail = f"{status.tools} tools from {status.server or 'its server'} ({where}){skipped}"
            checks.append(Check(f"upstream {status.name}", "ok", detail, required=False))
            continue
        why, fix = _down(status.transport, status.target, status.error, status.connected_at)
        if why is None:
            why = f"no answer within {timeout:.0f} s"
        tail = status.stderr_tail.strip().splitlines()
        said = f"{status.state.value}: {why} ({where})"
        if tail:
            said += f"; its stderr ends: {tail[-1]}"
        checks.append(Check(f"upstream {status.name}", "failed", said, required=False, fix=fix))
    return checks


def _down(
    transport: str, target: str, error: str | None, connected_at: float | None
) -> tuple[str | None, str]:
    """Why an upstream is down, said for a person, and what to do about it."""
    if error is not None and error.startswith("its credential:"):
        return (
            error,
            "set the credential's environment variable or secret ([[upstream.credentials]])",
        )
    if transport == "stdio":
        if error == "Connection closed" and connected_at is None:
            error = "its process ended (or closed its output) before the MCP handshake"
        return error, f"run it by hand to see why: {target}"
    return error, f"check that an MCP server answers at {target} (and its credentials)"


def tool_checks(everything: bool = True) -> list[Check]:
    """Optional system tools: bubblewrap for the Python tier, and with ``everything`` chromium
    for the page tests (toolfoundry's own)."""
    from toolfoundry.sandbox.process import probe
    from toolfoundry.sandbox.process.jail import find_bwrap

    checks = []
    bwrap = find_bwrap()
    if bwrap is None:
        checks.append(
            Check(
                "bubblewrap",
                "absent",
                "not on PATH: Python-tier drafts are refused (JavaScript tools are unaffected)",
                required=False,
                fix="apt-get install bubblewrap",
            )
        )
    else:
        why = probe(timeout=10.0)
        checks.append(
            Check(
                "bubblewrap",
                "ok" if why is None else "failed",
                f"{bwrap}: jails start" if why is None else f"{bwrap}: {why}",
                required=False,
                fix=""
                if why is None
                else "allow unprivileged user namespaces, or use "
                "TOOLFOUNDRY_EXECUTOR (docs/configuration.md)",
            )
        )
    if not everything:
        return checks
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    checks.append(
        Check(
            "chromium",
            "ok" if chromium else "absent",
            chromium or "not on PATH (only the review page's browser tests use it)",
            required=False,
            fix="" if chromium else "apt-get install chromium",
        )
    )
    return checks


def extra_checks(everything: bool = True) -> list[Check]:
    """Each pip extra of toolfoundry: installed, or which distributions are missing.

    Without ``everything``: only the extras a user installs (not the developer ones, nor the
    ``all`` bundle), and those not installed together on one line: none is a fault.
    """
    from toolfoundry.base.extras import (
        BUNDLE_EXTRAS,
        DEVELOPER_EXTRAS,
        extras,
        missing_distributions,
    )

    checks = []
    absent = []
    for extra, wanted in sorted(extras().items()):
        if not everything and extra in (*DEVELOPER_EXTRAS, *BUNDLE_EXTRAS):
            continue
        missing = missing_distributions(extra)
        if missing and not everything:
            absent.append(f"[{extra}]")
            continue
        detail = (
            "installed: " + ", ".join(f"{d} {metadata.version(d)}" for d in wanted)
            if not missing
            else f"missing {', '.join(missing)}"
        )
        checks.append(
            Check(
                f"extra [{extra}]",
                "absent" if missing else "ok",
                detail,
                required=False,
                fix=f"install toolfoundry[{extra}]" if missing else "",
            )
        )
    if absent:
        detail = f"{', '.join(absent)} (optional: a command that needs one says which)"
        checks.append(Check("extras not installed", "absent", detail, required=False))
    return checks


def diagnose(db: str | None, config_path: str | None, everything: bool = True) -> list[Check]:
    """Every check, in the order the report shows them (``everything``: also the parts only
    working on toolfoundry needs)."""
    try:
        version = metadata.version("toolfoundry")
    except metadata.PackageNotFoundError:
        version = "not installed (running from a source tree)"
    where = Path(__file__).resolve().parents[1]
    checks = [
        Check("toolfoundry", "ok", f"{version} at {where}"),
        Check("python", "ok", f"{platform.python_version()} ({platform.machine()})"),
    ]
    checks += sandbox_checks()
    checks += database_check(db, config_path)
    checks += upstream_checks(config_path)
    checks += tool_checks(everything)
    checks += extra_checks(everything)
    return checks


@click.command()
@db_option("The registry to check, as --db of every command (default: as each chooses it).")
@config_option
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Also what working on toolfoundry needs: chromium and the dev, bench, build extras.",
)
@json_option
def doctor(db: str | None, config_path: str | None, everything: bool, as_json: bool) -> None:
    """Check every part of this installation: the sandbox (guest, polyfills, libraries, one
    real call), the registry database, each [[upstream]] MCP server, bubblewrap and the pip
    extras.

    Exit 0 when tools can be made and called here, 1 otherwise.
    """
    checks = diagnose(db, config_path, everything)
    healthy = all(c.healthy for c in checks)
    if as_json:
        emit({"ok": healthy, "checks": [_row(c) for c in checks]})
    else:
        marks = {"ok": "ok", "absent": "--", "failed": "FAIL"}
        for c in checks:
            mark = marks[c.status] if c.required or c.status != "failed" else "warn"
            click.echo(f"{mark:>4}  {c.name}: {c.detail}")
            if c.fix and c.status != "ok":
                click.echo(f"      fix: {c.fix}")
        if not everything:
            click.echo(f"      ({ALL_HINT})")
        click.echo("toolfoundry is ready" if healthy else "toolfoundry is NOT ready (see FAIL)")
    raise SystemExit(0 if healthy else 1)


class CheckJson(TypedDict):
    """One check as ``doctor --json`` prints it: the :class:`Check`'s fields, and ``ok``."""

    name: str
    status: str
    detail: str
    required: bool
    fix: str
    ok: bool


def _row(check: Check) -> CheckJson:
    return {
        "name": check.name,
        "status": check.status,
        "detail": check.detail,
        "required": check.required,
        "fix": check.fix,
        "ok": check.healthy,
    }
