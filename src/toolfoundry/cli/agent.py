"""``toolfoundry agent "TASK" --model PROVIDER:MODEL``: run the agent loop in the terminal.

Exit 0 when the model finished, 1 when the run stopped at a limit or on a provider error,
2 on a usage error (unknown provider, missing key, bad configuration).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.prompt import Confirm
from rich.syntax import Syntax

from toolfoundry.agent import (
    AgentEvent,
    ApprovalDecision,
    ApprovalRequest,
    Approver,
    ProviderError,
    StopReason,
    approve_as,
    defer,
    provider_for,
    run_agent,
)
from toolfoundry.agent.providers import ReplayProvider
from toolfoundry.agent.providers.replay import FORMAT, RecordingJson
from toolfoundry.agent.transcript import recording_session
from toolfoundry.base.display import visible
from toolfoundry.base.json_gate import encode
from toolfoundry.cli.catalog import load_project, source_option
from toolfoundry.cli.options import (
    Seconds,
    cell,
    emit,
    json_option,
    markup_safe,
    open_foundry,
    store_options,
)
from toolfoundry.spec.limits import Bound

_SHOWN = 240


class AgentView:
    """Prints each event of a run with rich: turns, the model's words and calls, outcomes.

    Everything a model or a tool wrote is shown escaped (control characters as ``\\x1b``,
    rich markup as literal brackets): only this view's own markup styles the terminal.
    """

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, event: AgentEvent) -> None:
        show = getattr(self, f"_{event.kind}", None)
        if show is not None:
            show(event)

    def _turn(self, event: AgentEvent) -> None:
        offered = event.data["offered"]
        self.console.rule(f"[bold]turn {event.turn}")
        self.console.print(f"[dim]offered ({len(offered)}): {markup_safe(', '.join(offered))}[/]")

    def _model(self, event: AgentEvent) -> None:
        if event.data["text"]:
            self.console.print(f"[cyan]model:[/] {markup_safe(event.data['text'])}")
        for call in event.data["calls"]:
            args = markup_safe(_cut(_json(call["arguments"])))
            name = markup_safe(call["name"])
            self.console.print(f"  [bold]→ {name}[/]({args})", highlight=False)
        usage = event.data.get("usage") or {}
        if usage.get("input_tokens") or usage.get("output_tokens"):
            self.console.print(
                f"  [dim]tokens: {usage['input_tokens']} in, {usage['output_tokens']} out[/]"
            )

    def _tool(self, event: AgentEvent) -> None:
        data, result = event.data, event.data["result"]
        mark = (
            "[green]✓[/]" if data["ok"] else ("[red]✗[/]" if data["is_error"] else "[yellow]…[/]")
        )
        value = result.get("value")
        if data["name"] == "create_tool" and isinstance(value, dict):
            where = f"v{value.get('version')}" if value.get("version") else "(nothing registered)"
            said = markup_safe(f"{value.get('status')} {value.get('name')} {where}")
            self.console.print(f"  {mark} create_tool: {said}")
            for test in value.get("test_results") or []:
                passed = "[green]pass[/]" if test.get("passed") else "[red]FAIL[/]"
                extra = "regression " if test.get("regression") else ""
                detail = str(test.get("diff") or test.get("error") or "")
                detail = detail.strip().replace("\n", "\n        ")
                said = markup_safe(f"{extra}{test.get('name')}  {_cut(detail)}")
                self.console.print(f"      {passed} {said}")
        else:
            shown = result.get("error") if "error" in result else value
            said = markup_safe(f"{data['name']} → {_cut(_json(shown))}")
            self.console.print(f"  {mark} {said}", highlight=False)
        step = result.get("step") or {}
        if step.get("status") != "completed":
            self.console.print(f"      step: {markup_safe(_json(step))}", highlight=False)

    def _approval(self, event: AgentEvent) -> None:
        d = event.data
        who = f" by {d['by']}" if d["by"] else ""
        said = markup_safe(f"{d['name']} v{d['version']}: {d['action']}{who}")
        self.console.print(f"  [yellow]approval[/] {said}")

    def _stop(self, event: AgentEvent) -> None:
        colour = "green" if event.data["reason"] == StopReason.COMPLETED.value else "red"
        self.console.print(
            f"[{colour}]stopped after {event.turn} turn(s): {event.data['reason']}[/] "
            f"({markup_safe(event.data['message'])})"
        )


def _cut(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "…"


def _json(value: Any) -> str:
    return encode(value, compact=False, default=str)


def load_recording(path: Path) -> RecordingJson:
    """The recording at ``path`` to add a session to (a new one when the file is missing)."""
    if not path.exists():
        return {"format": FORMAT, "label": "recorded with toolfoundry agent", "sessions": {}}
    try:
        data: RecordingJson = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise click.UsageError(f"--record {path} is not JSON: {exc}") from None
    if data.get("format") != FORMAT or not isinstance(data.get("sessions", {}), dict):
        raise click.UsageError(f"--record {path} is not a {FORMAT} recording")
    return data


def terminal_approver(console: Console) -> Approver:
    """Ask the person at the terminal; end of input leaves the version pending."""

    def decide(request: ApprovalRequest) -> ApprovalDecision:
        console.rule(f"[yellow]approval needed: {markup_safe(request.name)} v{request.version}")
        console.print(cell(request.description))
        console.print(cell(f"capabilities: {encode(request.capabilities)}"))
        # the code a person approves, with every control and bidi character shown
        console.print(Syntax(visible(request.code), "javascript", line_numbers=True))
        try:
            yes = Confirm.ask("Approve this version?", console=console, default=False)
        except EOFError:
            return ApprovalDecision("defer")
        if yes:
            return ApprovalDecision("approve", by="terminal", reason="approved at the terminal")
        return ApprovalDecision("reject", by="terminal", reason="declined at the terminal")

    return decide


@click.command()
@click.argument("task")
@click.option(
    "--model",
    default=None,
    metavar="PROVIDER:MODEL",
    help="e.g. openai:gpt-4o-mini, "
    "openai-responses:..., anthropic:..., compat:NAME, replay:demo "
    "(default: [provider] model in toolfoundry.toml).",
)
@click.option("--base-url", default=None, help="The vendor's base URL (compat servers, proxies).")
@click.option(
    "--max-turns",
    type=click.IntRange(1),
    default=12,
    show_default=True,
    help="Model turns at most.",
)
@click.option(
    "--max-tokens",
    type=click.IntRange(1),
    default=200_000,
    show_default=True,
    help="Input plus output tokens at most, over the run.",
)
@click.option(
    "--max-seconds",
    type=Seconds(Bound(0, 7 * 24 * 3600, integer=False)),
    default=600.0,
    show_default=True,
    help="Wall time at most.",
)
@click.option(
    "--top-k",
    type=click.IntRange(1),
    default=20,
    show_default=True,
    help="Offer only the best K registry tools for the task when there are more.",
)
@click.option(
    "--auto-approve/--ask",
    "auto_approve",
    default=None,
    help="Approve risky tools at once, or ask at the terminal (default: ask when "
    "interactive, else leave them pending).",
)
@click.option(
    "--record",
    type=click.Path(dir_okay=False),
    default=None,
    help="Add this run as a session to a replay recording (JSON), to play it back with "
    "--model replay:PATH.",
)
@store_options
@source_option
@json_option
def agent(
    task: str,
    model: str | None,
    base_url: str | None,
    max_turns: int,
    max_tokens: int,
    max_seconds: float,
    top_k: int,
    auto_approve: bool | None,
    record: str | None,
    db: str | None,
    config_path: str | None,
    sources: tuple[str, ...],
    as_json: bool,
) -> None:
    """Run TASK with a model that uses, creates and reuses the registry's tools.

    The project's declared tools ([catalog] sources, or --source) are offered on every turn;
    a registry tool of the same name is hidden.
    """
    console = Console(stderr=as_json, soft_wrap=True)
    recording = load_recording(Path(record)) if record else None
    with open_foundry(db, config_path) as foundry:
        declared = load_project(foundry.config, sources).tools
        names = {tool.spec.name for tool in declared}
        for spec in foundry.active_specs() if names else []:
            if spec.name in names:
                console.print(
                    f"[yellow]warning:[/] registry tool {spec.name!r} is hidden by the "
                    "project's declared tool of the same name"
                )
        chosen = model or foundry.config.provider.get("model")
        if not chosen:
            raise click.UsageError(
                "give --model PROVIDER:MODEL (or [provider] model in toolfoundry.toml)"
            )
        url = base_url or foundry.config.provider.get("base_url")
        try:
            # no single request may outlive the run's wall-time limit
            timeout = max(1.0, min(120.0, max_seconds))
            provider = provider_for(str(chosen), base_url=url, timeout=timeout)
        except ProviderError as exc:
            raise click.UsageError(exc.message) from None
        if isinstance(provider, ReplayProvider):
            console.print(
                f"[bold magenta]REPLAY[/] of a recorded session ({markup_safe(provider.label)}); "
                "every tool call runs for real"
            )
        if auto_approve is True:
            approver = approve_as("cli --auto-approve")
        elif auto_approve is False or sys.stdin.isatty():
            approver = terminal_approver(console)
        else:
            approver = defer
        run = run_agent(
            task,
            provider,
            foundry,
            max_turns=max_turns,
            max_tokens=max_tokens,
            max_seconds=max_seconds,
            top_k=top_k,
            approval=approver,
            tools=declared,
            on_event=AgentView(console),
        )
    if record and recording is not None:
        recording.setdefault("sessions", {})[run.id[:8]] = recording_session(run)
        text = encode(recording, indent=1) + "\n"
        Path(record).write_text(text, encoding="utf-8")
        console.print(f"[dim]recorded as session {run.id[:8]} in {markup_safe(record)}[/]")
    if as_json:
        emit(run.to_dict())
    elif run.final_text:
        console.print(f"\n[bold]answer:[/] {markup_safe(run.final_text)}")
    sys.exit(0 if run.stop_reason is StopReason.COMPLETED else 1)
