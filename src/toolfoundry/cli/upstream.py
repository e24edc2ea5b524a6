"""``toolfoundry upstream``: the ``[[upstream]]`` MCP servers, their tools' standing, approvals.

The same gate as the review page's ``/ui/upstream`` (foundry/upstream_gate.py): an approval is
bound to the upstream's name, the tool's name and the hash of its input schema, so a changed
schema asks again; ``approve --schema-hash`` refuses when the schema changed since the person
looked. Each command connects to the upstreams first (waiting at most ``--wait`` seconds for
their first listing) and ends the connections it made when it ends.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click
from rich.console import Console
from rich.table import Table

from toolfoundry.base.json_gate import encode
from toolfoundry.cli.options import (
    Seconds,
    cell,
    emit,
    json_option,
    login_name,
    open_foundry,
    say,
    store_options,
)
from toolfoundry.spec.names import NAMESPACE_SEPARATOR

if TYPE_CHECKING:
    from toolfoundry.foundry import Foundry
    from toolfoundry.foundry.upstream_gate import UpstreamEntry

WAIT_S = 15.0
_NONE = "no [[upstream]] server is configured (toolfoundry.toml)"


def wait_option(func: Any) -> Any:
    return click.option(
        "--wait",
        "wait_s",
        type=Seconds(),
        default=WAIT_S,
        show_default=True,
        help="Seconds to wait for each upstream's first listing.",
    )(func)


def _refuse(kind: str, message: str, as_json: bool) -> NoReturn:
    if as_json:
        emit({"error": {"kind": kind, "message": message}})
    else:
        say(f"error ({kind}): {message}", err=True)
    sys.exit(1)


def _entry(fd: Foundry, name: str, wait_s: float, as_json: bool) -> UpstreamEntry:
    """``name``'s entry once its upstream answered (or ``wait_s`` passed); exit 1 when no
    upstream lists it, saying why (not configured, down, or not among its tools)."""
    upstream, sep, tool = name.partition(NAMESPACE_SEPARATOR)
    if not (sep and upstream and tool):
        raise click.BadParameter(f"expected UPSTREAM.TOOL, got {name!r}", param_hint="NAME")
    servers = fd.upstreams
    if servers is None:
        _refuse("not_found", _NONE, as_json)
    servers.wait_for(upstream, wait_s)
    entry = fd.upstream_tool(name)
    if entry is not None:
        return entry
    if servers.settings_of(upstream) is None:
        known = ", ".join(s.name for s in servers.settings)
        _refuse("not_found", f"no upstream {upstream!r} is configured (known: {known})", as_json)
    if not servers.ready(upstream):
        why = f"upstream {upstream!r} is {servers.describe_down(upstream)}"
        _refuse("unavailable", f"{why}: {name!r} cannot be looked up now", as_json)
    listed = sorted(t.name for t in servers.tools() if t.upstream == upstream)
    _refuse(
        "not_found",
        f"upstream {upstream!r} does not list {tool!r} ({len(listed)} tools: "
        f"toolfoundry upstream list)",
        as_json,
    )


@click.group()
def upstream() -> None:
    """The [[upstream]] MCP servers: their state, their tools' standing, approvals."""


@upstream.command("list")
@wait_option
@store_options
@json_option
def list_upstream(wait_s: float, db: str | None, config_path: str | None, as_json: bool) -> None:
    """Each upstream's state and each of its tools' policy and standing."""
    with open_foundry(db, config_path) as fd:
        servers = fd.upstreams
        if servers is not None:
            servers.wait(wait_s)
        statuses = [] if servers is None else [s.to_dict() for s in servers.statuses()]
        tools = [e.to_dict() for e in fd.upstream_tools()]
    if as_json:
        emit({"servers": statuses, "tools": tools})
        return
    if servers is None:
        say(_NONE)
        return
    for s in statuses:
        where = f"{s['transport']} {s['target']}"
        if s["state"] == "ready":
            said = f"{s['tools']} tools from {s['server'] or 'its server'} ({where})"
        else:
            said = f"{s['state']}: {s['error'] or 'no answer yet'} ({where})"
        say(f"{s['name']}: {said}")
    waiting = sum(t["standing"] in ("needs_approval", "schema_changed") for t in tools)
    table = Table(title=f"{len(tools)} upstream tool(s), {waiting} waiting for a person")
    for column in ("tool", "standing", "policy", "schema"):
        table.add_column(column)
    for t in tools:
        table.add_row(
            cell(t["name"]), t["standing"], cell(t["policy_reason"]), t["schema_hash"][:12]
        )
    Console(soft_wrap=True).print(table)


@upstream.command()
@click.argument("name", metavar="UPSTREAM.TOOL")
@wait_option
@store_options
@json_option
def show(name: str, wait_s: float, db: str | None, config_path: str | None, as_json: bool) -> None:
    """One upstream tool: description, input schema and its hash, annotations, policy,
    standing, the last decision, and the change since the schema a person approved."""
    from toolfoundry.foundry.upstream_gate import schema_diff

    with open_foundry(db, config_path) as fd:
        entry = _entry(fd, name, wait_s, as_json)
    shown = entry.to_dict()
    shown["diff"] = schema_diff(entry.approved_schema, entry.tool.input_schema)
    if as_json:
        emit(shown)
        return
    say(f"{shown['name']}: {shown['standing']} ({shown['policy']}: {shown['policy_reason']})")
    if shown["description"]:
        say(f"  {shown['description']}")
    say(f"  schema {shown['schema_hash']}")
    if shown["annotations"]:
        hints = ", ".join(f"{k}={encode(v)}" for k, v in sorted(shown["annotations"].items()))
        say(f"  annotations: {hints}")
    decision = shown["decision"]
    if decision is not None:
        verb = "approved" if decision["approved"] else "revoked"
        why = f": {decision['reason']}" if decision["reason"] else ""
        say(f"  {verb} by {decision['by']} at {decision['at']}{why}")
    if shown["diff"]:
        say("input schema, changed since the approval:")
        say(shown["diff"])
    else:
        say("input schema:")
        say(encode(shown["parameters"], indent=2))


def _decide(
    approve: bool,
    name: str,
    schema_hash: str | None,
    by: str | None,
    reason: str,
    wait_s: float,
    db: str | None,
    config_path: str | None,
    as_json: bool,
) -> None:
    with open_foundry(db, config_path) as fd:
        _entry(fd, name, wait_s, as_json)
        who = by or login_name()
        try:
            if approve:
                entry = fd.approve_upstream(name, by=who, reason=reason, schema_hash=schema_hash)
            else:
                entry = fd.revoke_upstream(name, by=who, reason=reason, schema_hash=schema_hash)
        except LookupError as exc:  # the server stopped listing it in the meantime
            _refuse("not_found", str(exc.args[0]), as_json)
        except ValueError as exc:
            _refuse("schema_changed", str(exc), as_json)
    if as_json:
        emit(entry.to_dict())
        return
    verb = "approved" if approve else "revoked the approval of"
    say(
        f"{verb} {entry.tool.name} for schema {entry.tool.schema_hash[:12]}: "
        f"now {entry.standing.value}"
    )


SCHEMA_HELP = "The input schema's hash you reviewed (upstream show): refused if it changed."


@upstream.command()
@click.argument("name", metavar="UPSTREAM.TOOL")
@click.option("--schema-hash", default=None, help=SCHEMA_HELP)
@click.option("--by", default=None, help="Who approves (default: the login name).")
@click.option("--reason", default="", help="Why.")
@wait_option
@store_options
@json_option
def approve(
    name: str,
    schema_hash: str | None,
    by: str | None,
    reason: str,
    wait_s: float,
    db: str | None,
    config_path: str | None,
    as_json: bool,
) -> None:
    """Approve an upstream tool for its current input schema (a changed schema asks again)."""
    _decide(True, name, schema_hash, by, reason, wait_s, db, config_path, as_json)


@upstream.command()
@click.argument("name", metavar="UPSTREAM.TOOL")
@click.option("--reason", required=True, help="Why (required).")
@click.option("--schema-hash", default=None, help=SCHEMA_HELP)
@click.option("--by", default=None, help="Who revokes (default: the login name).")
@wait_option
@store_options
@json_option
def revoke(
    name: str,
    reason: str,
    schema_hash: str | None,
    by: str | None,
    wait_s: float,
    db: str | None,
    config_path: str | None,
    as_json: bool,
) -> None:
    """Withdraw an upstream tool's approval: its calls wait for a person again."""
    _decide(False, name, schema_hash, by, reason, wait_s, db, config_path, as_json)
