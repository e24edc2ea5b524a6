"""``toolfoundry tools``: list, show, history, diff, rollback, disable, enable, search, usage
and audit."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import click

from toolfoundry.base.collector import gc_paused
from toolfoundry.base.display import visible, visible_line, visible_lines
from toolfoundry.base.json_gate import encode
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
from toolfoundry.forge.host_display import capabilities_text
from toolfoundry.registry import RegistryError, ToolListing, ToolVersion
from toolfoundry.spec import Capabilities, VersionStatus

if TYPE_CHECKING:  # rich loads only when a table or a styled line is printed, not when piped
    from rich.console import Console
    from rich.table import Table

    from toolfoundry.forge.draft_json import FixtureJson
    from toolfoundry.foundry.review import ToolLinks


def console() -> Console:
    from rich.console import Console

    return Console(soft_wrap=True)


def version_table(rows: list[ToolVersion], title: str) -> Table:
    """A rich table of versions for people (every cell escaped, never read as markup), each
    with what it changed from the version it was made from."""
    from rich.table import Table

    from toolfoundry.foundry.version_changes import version_changes

    changed = version_changes(rows)
    table = Table(title=cell(title))
    columns = ("name", "version", "status", "current", "capabilities", "author", "created")
    for column in (*columns, "changes"):
        table.add_column(column)
    for v in rows:
        table.add_row(
            cell(v.name),
            str(v.version),
            v.status.value,
            "*" if v.current else "",
            cell(encode(v.capabilities.to_dict())) if not v.capabilities.is_pure else "-",
            cell(v.author),
            v.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            cell(changed[v.version].text()),
        )
    return table


@click.group()
def tools() -> None:
    """Inspect and manage registered tools and their versions."""


LIST_COLUMNS = ("name", "version", "status", "capabilities", "description")


@tools.command("list")
@store_options
@json_option
@click.option("--active", is_flag=True, help="Only tools whose current version is active.")
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="At most N tools (default: all).",
)
@click.option(
    "--offset",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="Skip the first N tools (by name).",
)
def list_tools(
    db: str | None,
    config_path: str | None,
    as_json: bool,
    active: bool,
    limit: int | None,
    offset: int,
) -> None:
    """List every tool with its current version, by name.

    In a terminal a listing longer than the screen goes through the pager; piped, it is one
    plain line per tool (columns aligned), cheap at any size.
    """
    with gc_paused():
        with open_foundry(db, config_path) as fd:  # the narrow read: no code, schema or test
            status = VersionStatus.ACTIVE if active else None
            rows = fd.registry.listing(status=status, limit=limit, offset=offset)
        if as_json:
            emit(
                [
                    {
                        **v.summary(),
                        "description": v.description,
                        "pending_versions": list(v.pending_versions),
                    }
                    for v in rows
                ]
            )
        else:
            print_listing(rows, offset)


def print_listing(rows: list[ToolListing], offset: int) -> None:
    """Plain aligned lines when piped; in a terminal a table when it fits, else the pager."""
    cells = listing_cells(rows)
    title = f"{len(rows)} tool(s)" + (f" from #{offset + 1}" if offset and rows else "")
    if not sys.stdout.isatty():
        click.echo("\n".join(plain_lines(title, cells)))
        return
    if len(rows) + 6 <= shutil.get_terminal_size().lines:
        from rich.table import Table
        from rich.text import Text

        table = Table(title=title)
        for column in LIST_COLUMNS:
            table.add_column(column)
        for row in cells:
            table.add_row(*(Text(c) for c in row))
        console().print(table)
        return
    click.echo_via_pager(line + "\n" for line in plain_lines(title, cells))


def listing_cells(rows: list[ToolListing]) -> list[tuple[str, ...]]:
    """The listing's rows, each cell on one line with its control characters escaped; the
    status names the tool's other versions waiting for a human (``active, v3 pending``).
    Built column by column: names and descriptions are escaped in one pass each, and the
    capabilities cell once per set (the rows of one read share their parsed sets)."""
    caps_cells: dict[int, str] = {}

    def caps(c: Capabilities) -> str:
        text = caps_cells.get(id(c))
        if text is None:
            text = caps_cells[id(c)] = "-" if c.is_pure else visible_line(encode(c.to_dict()))
        return text

    def status(v: ToolListing) -> str:
        waiting = [f"v{n}" for n in v.pending_versions if n != v.version]
        return v.status.value + (f", {' '.join(waiting)} pending" if waiting else "")

    return list(
        zip(
            visible_lines([v.name for v in rows]),
            [str(v.version) for v in rows],
            [status(v) if v.pending_versions else v.status.value for v in rows],
            [caps(v.capabilities) for v in rows],
            visible_lines([v.description for v in rows]),
            strict=True,
        )
    )


def plain_lines(title: str, cells: list[tuple[str, ...]]) -> Iterator[str]:
    """The title, a header and one line per row, columns padded to their widest cell (the
    last one, the description, is not padded)."""
    columns = list(zip(*cells, strict=True)) or [()] * len(LIST_COLUMNS)
    widths = [max([len(h), *map(len, c)]) for h, c in zip(LIST_COLUMNS[:-1], columns, strict=False)]
    line = "  ".join([*(f"{{:<{w}}}" for w in widths), "{}"]).format  # one call a row
    yield title
    for row in (LIST_COLUMNS, *cells):
        yield line(*row).rstrip()


@tools.command()
@click.argument("name")
@click.option("--version", "version", type=int, default=None, help="Version (default: current).")
@store_options
@json_option
def show(
    name: str, version: int | None, db: str | None, config_path: str | None, as_json: bool
) -> None:
    """Show one version: description, schema, capabilities, code, tests, results."""
    from toolfoundry.foundry.review import tool_links

    with open_foundry(db, config_path) as fd:
        try:
            v = fd.show(name, version)
        except RegistryError as exc:
            fail(exc, as_json)
        stats = fd.usage(name)
        links = tool_links(fd, v)
    if as_json:
        emit({**v.to_dict(), **links, "usage": stats.to_dict()})
        return
    from rich.text import Text

    out = console()
    current = "  (current)" if v.current else ""
    out.print(Text.assemble((visible(v.name), "bold"), f" v{v.version}  {v.status.value}{current}"))
    out.print(cell(v.description))
    # hosts in both forms, with a lookalike warning (forge/host_display.py)
    out.print(cell(f"capabilities: {capabilities_text(v.capabilities)}   sha256: {v.sha256}"))
    out.print(cell(f"parameters: {encode(v.parameters, indent=2)}"))
    passed = sum(1 for r in v.test_results if r.get("passed"))
    out.print(cell(f"tests: {passed}/{len(v.test_results)} passed   calls: {stats.calls}"))
    for line in (*link_lines(links), *suite_lines(v)):
        out.print(cell(line), highlight=False)
    out.print(cell(v.code), highlight=False)


def link_lines(links: ToolLinks) -> list[str]:
    """What the version calls (code mode), each with the version its tests ran against and
    the callee now, and the versions of other tools that call it."""
    lines = []
    for u in links["uses"]:
        if u["tested_against"] is None:  # an upstream server's tool
            state = u.get("upstream")  # where the upstreams are connected
            changed = state is not None and state["state"] != "unchanged"
            said = f"; {state['state']}: {state['message']}" if state and changed else ""
            lines.append(
                f"uses {u['tool']} (upstream, schema {u.get('schema_hash', '?')[:12]}{said})"
            )
            continue
        now = "gone" if u["status"] is None else f"now v{u['current_version']} {u['status']}"
        lines.append(f"uses {u['tool']} (tested against v{u['tested_against']}; {now})")
    for d in links["used_by"]:
        where = "current" if d["current"] else "waiting"
        tested = f"tested against v{d['tested_against']}" if d["tested_against"] else "tested"
        lines.append(f"used by {d['name']} v{d['version']} ({d['status']}, {where}; {tested})")
    return lines


def suite_lines(v: ToolVersion) -> list[str]:
    """The suite ``v`` was gated by, one test a line (label, input, what it must give,
    result), each test's canned HTTP answers under it, then the tests it retired."""
    from toolfoundry.foundry.review import gating_suite

    suite = gating_suite(v)
    lines = [f"suite: {len(suite['tests'])} test(s) gated v{v.version}"]
    for t in suite["tests"]:
        wants = (
            f"error containing {encode(t['error'])}" if "error" in t else encode(t.get("expected"))
        )
        result = t["result"]
        verdict = "not run" if result is None else ("passed" if result.get("passed") else "FAILED")
        lines.append(f"  {t['label']}: {encode(t['input'])} -> {wants}   {verdict}")
        for f in t["fixtures"]:
            lines.append(f"      fixture {fixture_text(f)}")
    for f in v.fixtures:
        lines.append(f"  fixture (every test) {fixture_text(f)}")
    for r in suite["retired"]:
        lines.append(f"  retired {r['test']}: {r['reason']}")
    return lines


def fixture_text(f: FixtureJson) -> str:
    """A canned HTTP answer on one line: the request it answers, the status and the body."""
    body = str(f.get("body", ""))
    shown = body if len(body) <= 200 else body[:200] + f"... ({len(body)} characters)"
    return f"{f.get('method', 'GET')} {f.get('url')} -> {f.get('status', 200)} {encode(shown)}"


@tools.command()
@click.argument("name")
@store_options
@json_option
def history(name: str, db: str | None, config_path: str | None, as_json: bool) -> None:
    """Every version of a tool, oldest first, with what each changed (code, description,
    parameters, returns, capabilities, tests added or retired)."""
    with open_foundry(db, config_path) as fd:
        try:
            rows = fd.history(name)
        except RegistryError as exc:
            fail(exc, as_json)
    if as_json:
        from toolfoundry.foundry.version_changes import version_changes

        changed = version_changes(rows)
        emit([{**v.summary(), "changes": changed[v.version].to_dict()} for v in rows])
    else:
        console().print(version_table(rows, f"{name}: {len(rows)} version(s)"))


@tools.command()
@click.argument("name")
@click.argument("a", type=int)
@click.argument("b", type=int)
@store_options
@json_option
def diff(name: str, a: int, b: int, db: str | None, config_path: str | None, as_json: bool) -> None:
    """Unified diff of code and schema between versions A and B."""
    with open_foundry(db, config_path) as fd:
        try:
            text = fd.diff(name, a, b)
        except RegistryError as exc:
            fail(exc, as_json)
    if as_json:
        emit({"name": name, "from": a, "to": b, "diff": text})
    else:
        click.echo(visible(text), nl=False)


def _lifecycle(
    action: str, name: str, db: str | None, config_path: str | None, as_json: bool, **kw: Any
) -> None:
    with open_foundry(db, config_path) as fd:
        try:
            v = getattr(fd, action)(name, by=login_name(), **kw)
        except RegistryError as exc:
            fail(exc, as_json)
    if as_json:
        emit(v.summary())
    else:
        say(f"{v.name}: current version {v.version} is {v.status.value}")


@tools.command()
@click.argument("name")
@click.argument("version", type=int)
@store_options
@json_option
def rollback(
    name: str, version: int, db: str | None, config_path: str | None, as_json: bool
) -> None:
    """Make an earlier active VERSION current again (nothing is deleted)."""
    _lifecycle("rollback", name, db, config_path, as_json, to=version)


@tools.command()
@click.argument("name")
@store_options
@json_option
def disable(name: str, db: str | None, config_path: str | None, as_json: bool) -> None:
    """Stop a tool from being called or listed."""
    _lifecycle("disable", name, db, config_path, as_json)


@tools.command()
@click.argument("name")
@store_options
@json_option
def enable(name: str, db: str | None, config_path: str | None, as_json: bool) -> None:
    """Re-enable a disabled tool."""
    _lifecycle("enable", name, db, config_path, as_json)


@tools.command()
@click.argument("query")
@click.option("-k", "k", type=int, default=5, show_default=True, help="How many results.")
@click.option("--all", "include_inactive", is_flag=True, help="Include tools that are not active.")
@store_options
@json_option
def search(
    query: str,
    k: int,
    include_inactive: bool,
    db: str | None,
    config_path: str | None,
    as_json: bool,
) -> None:
    """Search tool names, descriptions and parameter docs (hybrid with the [search] extra):
    strong hits first, then weak ones (the closest there is, sharing little of the query:
    read them before relying on them); the best match's parameters are shown."""
    with open_foundry(db, config_path) as fd:
        hits = fd.search(query, k, include_inactive=include_inactive)
    if as_json:
        emit([h.to_dict() for h in hits])
        return
    from rich.table import Table

    table = Table(title=cell(f"{len(hits)} result(s) for {query!r}"))
    for column in ("name", "version", "status", "strength", "matched", "description"):
        table.add_column(column)
    for h in hits:
        table.add_row(
            cell(h.name),
            str(h.version),
            h.status,
            h.strength,
            cell(" ".join(h.matched)),
            cell(h.description),
        )
    out = console()
    out.print(table)
    if hits and hits[0].parameters is not None:
        out.print(cell(f"{hits[0].name} parameters: {encode(hits[0].parameters)}"), highlight=False)


@tools.command()
@click.argument("name")
@store_options
@json_option
def usage(name: str, db: str | None, config_path: str | None, as_json: bool) -> None:
    """Calls, failures by kind, p50/p95 duration and last use of a tool."""
    with open_foundry(db, config_path) as fd:
        try:
            fd.history(name)  # an unknown name is an error, not a tool without calls
        except RegistryError as exc:
            fail(exc, as_json)
        stats = fd.usage(name)
    if as_json:
        emit(stats.to_dict())
        return
    say(
        f"{name}: {stats.calls} call(s), failures {stats.failures or 'none'}, "
        f"p50 {stats.p50_ms} ms, p95 {stats.p95_ms} ms, last used {stats.last_used}"
    )


@tools.command()
@click.argument("name", required=False)
@click.option("--limit", type=int, default=50, show_default=True, help="Newest N rows.")
@store_options
@json_option
def audit(
    name: str | None, limit: int, db: str | None, config_path: str | None, as_json: bool
) -> None:
    """The append-only audit log (of one tool, or all), oldest first."""
    with open_foundry(db, config_path) as fd:
        rows = fd.audit(name, limit=limit)
    if as_json:
        emit([r.to_dict() for r in rows])
        return
    from rich.table import Table

    table = Table(title="audit")
    for column in ("id", "at", "tool", "version", "event", "actor", "detail"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            str(r.id),
            r.at.strftime("%Y-%m-%d %H:%M:%S"),
            cell(r.tool),
            str(r.version or ""),
            r.event.value,
            cell(r.actor),
            cell(encode(r.detail)),
        )
    console().print(table)


from toolfoundry.cli.tools_verify import report, verify  # noqa: E402  (the periodic checks)

tools.add_command(verify)
tools.add_command(report)
