"""``toolfoundry tools verify`` and ``toolfoundry tools report``: the periodic checks.

Thin: the work is :meth:`Foundry.verify` (foundry/verify.py) and :meth:`Foundry.report`
(foundry/report.py); this module only prints. Registered in the ``tools`` group by
cli/tools.py.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import click

from toolfoundry.cli.options import emit, fail, json_option, open_foundry, say, store_options

if TYPE_CHECKING:
    from toolfoundry.foundry.report import HeldCapabilitiesJson, ReviewReport
    from toolfoundry.foundry.verify import ToolVerification

MAX_DIFF_LINES = 40  # of one failing test, in the text output (--json has it whole)


@click.command()
@click.argument("names", nargs=-1, metavar="[NAME]...")
@store_options
@json_option
def verify(names: tuple[str, ...], db: str | None, config_path: str | None, as_json: bool) -> None:
    """Re-run each active tool's accumulated test suite in the current sandbox.

    Every test the current version was gated by (its own and the earlier versions' it kept)
    runs again under the configured [limits], with the version's fixtures: what an upgrade
    of the engine, the prelude or a library, or a tighter limit, broke. A fixture URL that
    today's [fetch] would refuse at call time fails the tool too (its tests pass on canned
    answers; its calls would not). Default: every tool whose current version is active;
    NAME... verifies only those. Exits 1 when a test fails
    (or a NAME is unknown); a tool no sandbox here can run (a Python-tier tool without
    bubblewrap) is reported unavailable, which is not a failure. Records nothing.
    """
    from toolfoundry.registry import RegistryError

    with open_foundry(db, config_path) as fd:
        total = (
            len(set(names)) if names else sum(1 for v in fd.tools() if v.status.value == "active")
        )
        with progress_line(total, shown=not as_json) as on_tool:
            try:
                report = fd.verify(list(names) or None, progress=None if as_json else on_tool)
            except RegistryError as exc:
                fail(exc, as_json)
    if as_json:
        emit(report.to_dict())
    else:
        say(report.step.message)
    if not report.ok:
        sys.exit(1)


@contextmanager
def progress_line(total: int, *, shown: bool) -> Iterator[Callable[[ToolVerification], None]]:
    """Yields what to call as each tool finishes: its line (``_print_tool``), and on a terminal
    a progress line on stderr below them (tools done of ``total``, failed so far, time), gone
    at the end: a long run over many tools says where it is."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    console = Console(stderr=True)
    columns = (
        TextColumn("verifying"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[failed]} failed"),
        TimeElapsedColumn(),
    )
    live = shown and console.is_terminal
    with Progress(*columns, console=console, transient=True, disable=not live) as bar:
        task = bar.add_task("verify", total=total, failed=0)
        failed = 0

        def on_tool(t: ToolVerification) -> None:
            nonlocal failed
            failed += t.outcome == "failed"
            _print_tool(t)
            bar.update(task, advance=1, failed=failed)

        yield on_tool


def _print_tool(t: ToolVerification) -> None:
    """One line per tool as it finishes; under a failing one, each failed test's reason
    and diff."""
    say(f"{t.outcome.upper():<11} {t.name} v{t.version}  {t.message}")
    if t.outcome != "failed":
        return
    for r in t.results:
        if r.passed:
            continue
        say(f"    {r.name}: {r.reason}")
        lines = (r.diff or "").splitlines()
        for line in lines[:MAX_DIFF_LINES]:
            say(f"      {line}")
        if len(lines) > MAX_DIFF_LINES:
            say(f"      ... {len(lines) - MAX_DIFF_LINES} more line(s) (--json has the whole diff)")
    for problem in (*t.unreachable, *t.callees):
        say(f"    {problem.path}: {problem.message}")


@click.command()
@click.option(
    "--unused-days",
    type=click.IntRange(min=0, max=36500),
    default=30,
    show_default=True,
    metavar="N",
    help="List active tools not called for N days (a never-called tool counts from creation).",
)
@store_options
@json_option
def report(unused_days: int, db: str | None, config_path: str | None, as_json: bool) -> None:
    """What a periodic review needs: unused tools, failure rates, capabilities held,
    versions pending approval and retired tests."""
    with open_foundry(db, config_path) as fd:
        review = fd.report(unused_days=unused_days)
    if as_json:
        emit(review.to_dict())
        return
    for line in report_lines(review):
        say(line)


def report_lines(r: ReviewReport) -> list[str]:
    """The report for a person: one heading per section, one line per entry."""
    lines = [f"{r.tools} tool(s), {r.active} active, as of {r.generated_at:%Y-%m-%d %H:%M} UTC"]

    def section(title: str, rows: list[str]) -> None:
        lines.append("")
        lines.append(f"{title}: {len(rows) or 'none'}")
        lines.extend(f"  {row}" for row in rows)

    section(
        f"unused for {r.unused_days} day(s)",
        [
            f"{u['name']} v{u['version']}  idle {u['idle_days']} day(s), {u['calls']} call(s), "
            f"last used {u['last_used'] or 'never'}"
            for u in r.unused
        ],
    )
    section(
        "failing calls",
        [
            f"{f['name']} v{f['version']}  {f['failure_rate']:.1%} of {f['calls']} call(s) "
            f"failed ({', '.join(f'{k} {n}' for k, n in f['by_kind'].items())})"
            for f in r.failures
        ],
    )
    section("capabilities held", [_held_text(c) for c in r.capabilities])
    section(
        "pending approval",
        [
            f"{p['name']} v{p['version']}  by {p['author']}, waiting {p['waiting_days']} day(s)"
            for p in r.pending
        ],
    )
    section(
        "retired tests",
        [
            f"{t['name']} v{t['version']}  retired {t['test']} ({t['reason']}) by {t['actor']} "
            f"at {t['at']}"
            for t in r.retired_tests
        ],
    )
    return lines


def _held_text(c: HeldCapabilitiesJson) -> str:
    """One tool's capabilities; each host in both its Unicode and punycode forms, with the
    lookalike warning (forge/host_display.py), since a reviewer reads them."""
    from toolfoundry.forge.host_display import host_label

    parts = []
    if c["network"]:
        parts.append(f"network {', '.join(host_label(h) for h in c['network'])}")
    if c["credentials"]:
        parts.append(f"secrets for {', '.join(host_label(h) for h in c['credentials'])}")
    if c["storage"] != "none":
        parts.append(f"storage ({c['storage']})")
    if c["system"]:
        parts.append("system access")
    return f"{c['name']} v{c['version']} ({c['status']})  {'; '.join(parts)}"
