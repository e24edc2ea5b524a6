"""``toolfoundry approvals``: review pending versions, approve or reject them."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from toolfoundry.base.display import visible
from toolfoundry.cli.options import (
    cell,
    emit,
    fail,
    json_option,
    login_name,
    open_foundry,
    say,
    store_options,
)
from toolfoundry.cli.tools import link_lines, suite_lines
from toolfoundry.forge.host_display import capabilities_text
from toolfoundry.foundry.review import pending_reviews, version_review
from toolfoundry.registry import RegistryError, ToolVersion
from toolfoundry.spec import Capabilities

if TYPE_CHECKING:
    from toolfoundry.registry.records import ApprovalHoldJson


def _target(spec: str) -> tuple[str, int | None]:
    name, sep, version = spec.partition("@")
    if not sep:
        return name, None
    if not version.isdigit():
        raise click.BadParameter(f"expected NAME or NAME@VERSION, got {spec!r}")
    return name, int(version)


@click.group()
def approvals() -> None:
    """Review versions waiting for a human decision."""


@approvals.command("list")
@store_options
@json_option
def list_pending(db: str | None, config_path: str | None, as_json: bool) -> None:
    """Versions awaiting approval, with what each asks for."""
    with open_foundry(db, config_path) as fd:
        packets = pending_reviews(fd)
    if as_json:
        emit(packets)
        return
    table = Table(title=f"{len(packets)} version(s) awaiting approval")
    for column in ("tool", "version", "capabilities", "why", "tests", "approvable"):
        table.add_column(column)
    for p in packets:
        tally = p["test_tally"]  # the same count as create, the page and the audit
        table.add_row(
            cell(p["name"]),
            str(p["version"]),
            cell(capabilities_text(Capabilities.from_dict(p["capabilities"]))),
            cell("; ".join(p["reasons"])),
            f"{tally['passed']}/{tally['total']} passed",
            _held(p["approval_hold"]),
        )
    Console(soft_wrap=True).print(table)


def _held(hold: ApprovalHoldJson | None) -> str:
    """The queue's word on whether a version may be approved (registry/holds.py)."""
    if hold is None:
        return "yes"
    if hold["kind"] == "superseded":
        return f"no: superseded by v{hold['by_version']} (reject it)"
    return "no: tool disabled (enable it first)"


@approvals.command()
@click.argument("target", metavar="NAME[@VERSION]")
@store_options
@json_option
def show(target: str, db: str | None, config_path: str | None, as_json: bool) -> None:
    """What a reviewer decides on: why it waits, capabilities, findings, tests, code diff."""
    name, version = _target(target)
    waiting: list[ToolVersion] = []
    with open_foundry(db, config_path) as fd:
        try:
            if version is None:
                waiting = [v for v in fd.pending() if v.name == name]
                v = waiting[-1] if waiting else fd.show(name)
            else:
                v = fd.show(name, version)
        except RegistryError as exc:
            fail(exc, as_json)
        packet = version_review(fd, v.name, v.version)
    if as_json:
        emit(packet)
        return
    out = Console(soft_wrap=True)
    out.print(Text.assemble((visible(v.name), "bold"), f" v{v.version}: {v.status.value}"))
    if len(waiting) > 1:  # approve NAME alone is refused then: say which to name
        listed = ", ".join(f"v{w.version}" for w in waiting)
        out.print(
            cell(f"  {len(waiting)} versions await approval ({listed}); approve NAME@VERSION"),
            highlight=False,
        )
    if packet["approval_hold"] is not None:  # refused if approved: say so before
        out.print(cell(f"  cannot be approved: {packet['approval_hold']['message']}"))
    for reason in packet["reasons"]:
        out.print(cell(f"  asks for {reason}"), highlight=False)
    against = packet["capability_changes"]["against"]
    for cap in packet["capability_details"]:
        shown = cap.get("shown", cap["value"])  # a host in both forms, with its warning
        new = f" [new since v{against}]" if against and cap["change"] == "added" else ""
        out.print(cell(f"  {cap['capability']} {shown}{new}: {cap['meaning']}"))
        if "resolution" in cap:  # a credential: whether a value is there to add now
            out.print(cell(f"    {cap['resolution']}"))
    for cap in packet["capability_changes"]["removed"]:
        shown = cap.get("shown", cap["value"])
        out.print(cell(f"  {cap['capability']} {shown} [removed since v{against}]"))
    # code mode: the tools it calls, and the tools an approval lets reach it
    for line in link_lines({"uses": packet["uses"], "used_by": packet["used_by"]}):
        out.print(cell(f"  {line}"), highlight=False)
    for f in packet["findings"]:
        out.print(cell(f"  {f['severity']} {f['rule']}: {f['message']}"), highlight=False)
    tally = packet["test_tally"]
    earlier = (
        f" ({tally['own']} own, {tally['earlier']} from earlier versions)"
        if tally["earlier"]
        else ""
    )
    out.print(f"  tests: {tally['passed']}/{tally['total']} passed{earlier}", highlight=False)
    for line in suite_lines(v):
        out.print(cell(f"  {line}"), highlight=False)
    if packet["identical_to"]:
        out.print(f"  code and parameters identical to v{packet['identical_to']}", highlight=False)
    against = packet["diff_against"]
    out.print(f"diff against v{against}:" if against else "code:", highlight=False)
    out.print(cell(packet["diff"] or v.code), highlight=False)


def _decide(
    approve: bool,
    target: str,
    by: str | None,
    reason: str,
    db: str | None,
    config_path: str | None,
    as_json: bool,
) -> None:
    name, version = _target(target)
    with open_foundry(db, config_path) as fd:
        if approve:
            decision = fd.approve(name, version, by=by or login_name(), reason=reason)
        else:
            decision = fd.reject(name, version, by=by or login_name(), reason=reason)
    if as_json:
        emit(decision.to_dict())
    elif decision.step.blockers:
        say(f"error ({', '.join(decision.step.blockers)}): {decision.step.message}", err=True)
    else:
        say(decision.step.message)
    sys.exit(1 if decision.step.blockers else 0)


@approvals.command()
@click.argument("target", metavar="NAME[@VERSION]")
@click.option("--by", default=None, help="Who approves (default: the login name).")
@click.option("--reason", default="", help="Why.")
@store_options
@json_option
def approve(
    target: str, by: str | None, reason: str, db: str | None, config_path: str | None, as_json: bool
) -> None:
    """Approve a pending version (NAME alone only while exactly one is pending).

    The message names the version approved; with several pending, name the one you
    reviewed as NAME@VERSION."""
    _decide(True, target, by, reason, db, config_path, as_json)


@approvals.command()
@click.argument("target", metavar="NAME[@VERSION]")
@click.option("--reason", required=True, help="Why (required).")
@click.option("--by", default=None, help="Who rejects (default: the login name).")
@store_options
@json_option
def reject(
    target: str, reason: str, by: str | None, db: str | None, config_path: str | None, as_json: bool
) -> None:
    """Reject a pending version."""
    _decide(False, target, by, reason, db, config_path, as_json)
