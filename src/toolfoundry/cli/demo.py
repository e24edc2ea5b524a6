"""``toolfoundry demo``: the whole cycle offline, on a fresh embedded SQLite store.

A replay provider plays a recorded model session (``toolfoundry/agent/recordings/demo.json``,
written by hand in the replay format: no model is called) through the real agent loop, forge,
WebAssembly sandbox and registry. The need is found, a tool is written, refused, repaired,
registered and called; a network tool waits for a human; a second process reuses the tool
after a restart; a regressing v2 is refused and a good v2 accepted; then v1 is restored. The
replay checks at every turn that the real parts answered as recorded, and stops otherwise.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from toolfoundry.agent import RunStore, StopReason, defer, run_agent
from toolfoundry.agent.providers import ReplayProvider
from toolfoundry.cli.agent import AgentView
from toolfoundry.cli.options import config_option, db_option, open_foundry
from toolfoundry.cli.preflight import require_sandbox
from toolfoundry.foundry import Foundry

RECORDING = "demo"


@click.command()
@db_option("Registry URL (default: a fresh ./.toolfoundry/demo.db, reset on every run).")
@config_option
def demo(db: str | None, config_path: str | None) -> None:
    """Run the whole cycle offline: a replayed agent session makes, reuses, improves and rolls
    back a tool through the real forge, sandbox and registry."""
    require_sandbox()  # one line with the fix, not a replay that stops at its first answer
    console = Console(soft_wrap=True)
    if db is None:
        path = Path(".toolfoundry/demo.db")
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob("demo.db*"):
            stale.unlink()
        db = f"sqlite:///{path}"
    provider = ReplayProvider(RECORDING)
    console.print(
        Panel.fit(
            "toolfoundry demo — [bold magenta]REPLAY[/] of a recorded agent session\n"
            f"{provider.label}\n"
            "real agent loop, forge, sandbox and registry; store: " + db
        )
    )
    with open_foundry(db, config_path) as foundry:
        ok = run_stages(foundry, provider, db, config_path, console)
    sys.exit(0 if ok else 1)


def session(foundry: Foundry, provider: ReplayProvider, name: str, console: Console) -> bool:
    """Play one recorded session through the real loop; False when it did not complete."""
    task = str(provider.recording.sessions[name]["task"])
    console.print(f"[bold]task:[/] {task}")
    run = run_agent(task, provider, foundry, approval=defer, on_event=AgentView(console))
    if run.stop_reason is not StopReason.COMPLETED:
        console.print(f"[red]the replay stopped: {run.stop_message}[/]")
        return False
    return True


def stage(console: Console, title: str) -> None:
    console.print()
    console.rule(f"[bold reverse] {title} ", style="bold")


def run_stages(
    foundry: Foundry,
    provider: ReplayProvider,
    db: str,
    config_path: str | None,
    console: Console,
) -> bool:
    stage(
        console,
        "1. A need no tool covers: searched, written, refused, repaired, registered, called",
    )
    if not session(foundry, provider, "create", console):
        return False

    stage(console, "2. A network tool waits for a human; its tests use fixtures, never the network")
    if not session(foundry, provider, "network", console):
        return False
    decision = foundry.approve("weather_now", by="alice", reason="reviewed: one read-only GET")
    console.print(f"[yellow]reviewer alice approves weather_now[/] -> {decision.to_dict()}")

    stage(console, "3. Restart: a new process (toolfoundry agent) finds slugify and reuses it")
    task = str(provider.recording.sessions["reuse"]["task"])
    command = ["toolfoundry", "agent", task, "--model", f"replay:{RECORDING}", "--db", db]
    if config_path is not None:
        command += ["--config", config_path]
    console.print(f"[dim]$ {' '.join(command[:2])} {task!r} --model replay:{RECORDING} --db …[/]")
    proc = subprocess.run(
        [sys.executable, "-m", "toolfoundry", *command[1:]],
        capture_output=True,
        text=True,
        check=False,
    )
    console.print(proc.stdout.rstrip(), highlight=False, markup=False)
    if proc.returncode != 0:
        console.print(f"[red]the second process failed ({proc.returncode}): {proc.stderr}[/]")
        return False

    stage(console, "4. Improving the tool: a regression is refused, a good v2 is accepted")
    if not session(foundry, provider, "improve", console):
        return False

    stage(console, "5. Roll back to v1 (nothing is deleted), then the history, usage and runs")
    if not session(foundry, provider, "rollback", console):
        return False
    table = Table("version", "status", "current", "sha256")
    for version in foundry.history("slugify"):
        table.add_row(
            str(version.version), version.status.value, str(version.current), version.sha256[:12]
        )
    console.print(table)
    usage = foundry.usage("slugify")
    console.print(f"usage: {usage.calls} calls, p50 {usage.p50_ms} ms, failures {usage.failures}")
    console.print(f"audit trail: {', '.join(str(e.event.value) for e in foundry.audit('slugify'))}")
    runs = RunStore(foundry.registry).recent()
    console.print(f"agent runs stored with their transcripts: {len(runs)}")
    for line in next_steps(db):
        console.print(line, highlight=False, markup=False)
    return True


def next_steps(db: str) -> list[str]:
    """What the demo ends with: where to look at what it made, then where to go next."""
    return [
        "",
        "Look at what it made on the review page (versions, diffs, the approval, the audit):",
        f"  toolfoundry serve --http 127.0.0.1:8765 --db {db}",
        "  then open http://127.0.0.1:8765/ui/",
        "Next: `toolfoundry mcp install claude-desktop` (or claude-code, cursor, vscode) gives "
        'your client these tools; `toolfoundry agent "TASK" --model openai:gpt-4o-mini` runs '
        "a live model.",
    ]
