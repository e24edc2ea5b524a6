"""``toolfoundry eval degradation``: how well a model picks degradation paths."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from toolfoundry.agent.evaluation import (
    DegradationReport,
    ModelSelectionError,
    Scenario,
    ScenarioError,
    action_specs,
    evaluate_degradation,
    load_scenarios,
    scenario_messages,
    select_model,
)
from toolfoundry.agent.evaluation.scenarios import SCORED_STATUSES
from toolfoundry.base.json_gate import encode

# the arguments scenarios constrain; free text (reasons, query changes) is not shown
_SCORED_ARGUMENTS = ("step", "blocker", "via", "dependency")


@click.group("eval")
def eval_group() -> None:
    """Evaluate the orchestrating model."""


_SCENARIOS = click.option(
    "--scenarios",
    "scenario_paths",
    multiple=True,
    type=click.Path(exists=True, path_type=Path),
    help="Scenario files or folders of them (default: the shipped scenarios). Repeatable.",
)
_STATUS = click.option(
    "--status",
    "statuses",
    multiple=True,
    type=click.Choice(SCORED_STATUSES),
    help="Only scenarios testing this status. Repeatable.",
)


@eval_group.command("degradation")
@click.option(
    "--model",
    required=True,
    metavar="PROVIDER:MODEL",
    help="The model, e.g. anthropic:claude-sonnet-4-5, openai:gpt-4o-mini, scripted:correct.",
)
@_SCENARIOS
@_STATUS
@click.option(
    "--min-share",
    type=click.FloatRange(0.0, 1.0),
    default=None,
    help="Exit 1 when the overall share of correct paths is below this (0..1).",
)
@click.option(
    "--repeat",
    type=click.IntRange(1, 100),
    default=1,
    show_default=True,
    help="Ask each scenario this many times (for sampling models).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
def degradation(
    ctx: click.Context,
    model: str,
    scenario_paths: tuple[Path, ...],
    statuses: tuple[str, ...],
    min_share: float | None,
    repeat: int,
    as_json: bool,
) -> None:
    """Give the model the catalog and a workflow response; score its next action.

    A right answer distinguishes blocked (gather the missing input the blockers name),
    skipped (the operator's intent: leave it), unavailable (route around, or get a session)
    and empty (widen the query, or stop). Prints the share of correct paths per status.
    """
    try:
        provider = select_model(model)
    except ModelSelectionError as exc:
        raise click.UsageError(str(exc)) from None
    scenarios = _scenarios(scenario_paths, statuses)
    try:
        report = evaluate_degradation(provider, scenarios, repeat=repeat)
    except Exception as exc:
        if getattr(exc, "kind", None) != "configuration":
            raise
        raise click.ClickException(f"{model}: {exc}") from None
    failed = [v for v in report.verdicts if v.outcome == "provider_error"]
    nothing_scored = len(failed) == len(report.verdicts)
    if as_json:
        click.echo(encode(report.to_dict(), indent=2))
    elif not nothing_scored:  # a table of 0 % would read as the model's score
        _print(report)
    if nothing_scored:
        reason = failed[0].detail.removeprefix(f"{model}: ")
        raise click.ClickException(
            f"every call to {model} failed ({len(failed)} of {len(failed)}), so nothing was "
            f"scored: {reason}"
        )
    if min_share is not None and report.overall.share < min_share:
        ctx.exit(1)


@eval_group.command("scenarios")
@_SCENARIOS
@_STATUS
@click.option(
    "--prompt",
    "prompt_id",
    metavar="ID",
    help="Print the messages one scenario sends, to try it by hand in any chat.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def scenarios_command(
    scenario_paths: tuple[Path, ...],
    statuses: tuple[str, ...],
    prompt_id: str | None,
    as_json: bool,
) -> None:
    """List the degradation scenarios: the status each tests and the answers counted right."""
    scenarios = _scenarios(scenario_paths, statuses)
    if prompt_id is not None:
        chosen = next((s for s in scenarios if s.id == prompt_id), None)
        if chosen is None:
            raise click.UsageError(f"no scenario {prompt_id!r}; see `toolfoundry eval scenarios`")
        messages = scenario_messages(chosen)
        tools = action_specs()
        if as_json:
            data = {
                "messages": [{"role": m.role, "content": m.content} for m in messages],
                "tools": [spec.to_dict() for spec in tools],
            }
            click.echo(encode(data, indent=2))
        else:
            offered = "\n".join(
                f"- {t.name}({', '.join(p.name for p in t.params)}): {t.description}" for t in tools
            )
            sections = [f"[{m.role}]\n{m.content}" for m in messages]
            click.echo("\n\n".join([*sections, f"[tools offered]\n{offered}"]))
        return
    if as_json:
        rows = [
            {
                "id": s.id,
                "domain": s.domain,
                "status": s.status.value,
                "expected": s.expected,
                "accept": [rule.to_dict() for rule in s.accept],
                "why": s.why,
            }
            for s in scenarios
        ]
        click.echo(encode(rows, indent=2))
        return
    table = Table(title=f"{len(scenarios)} degradation scenarios")
    for column in ("scenario", "status", "expected", "why"):
        table.add_column(column, overflow="fold")
    for s in scenarios:
        table.add_row(s.id, s.status.value, s.expected, s.why)
    Console(soft_wrap=True).print(table)


def _scenarios(paths: tuple[Path, ...], statuses: tuple[str, ...]) -> list[Scenario]:
    try:
        scenarios = load_scenarios(_files(paths) if paths else None)
    except ScenarioError as exc:
        raise click.ClickException(str(exc)) from None
    if statuses:
        scenarios = [s for s in scenarios if s.status.value in statuses]
    if not scenarios:
        raise click.UsageError("no scenario matches the given --scenarios and --status")
    return scenarios


def _files(paths: tuple[Path, ...]) -> list[Path]:
    out: list[Path] = []
    for path in paths:
        out += sorted(path.glob("*.json")) if path.is_dir() else [path]
    return out


def _print(report: DegradationReport) -> None:
    console = Console(soft_wrap=True)
    table = Table(title=f"Degradation paths: {report.model}")
    table.add_column("status")
    table.add_column("correct", justify="right")
    table.add_column("scenarios", justify="right")
    table.add_column("share", justify="right")
    for status, share in report.by_status().items():
        table.add_row(status, str(share.correct), str(share.total), f"{share.share:.0%}")
    overall = report.overall
    table.add_section()
    table.add_row("overall", str(overall.correct), str(overall.total), f"{overall.share:.0%}")
    console.print(table)
    misses = [v for v in report.verdicts if not v.correct]
    if not misses:
        return
    wrong = Table(title="Wrong paths")
    for column in ("scenario", "status", "expected", "answer", "outcome"):
        wrong.add_column(column, overflow="fold")
    for verdict in misses:
        answer = "-"
        if verdict.action is not None:
            named = {k: v for k, v in (verdict.arguments or {}).items() if k in _SCORED_ARGUMENTS}
            answer = f"{verdict.action}({', '.join(f'{k}={v}' for k, v in named.items())})"
        wrong.add_row(
            verdict.scenario.id,
            verdict.scenario.status.value,
            verdict.scenario.expected,
            answer,
            verdict.outcome,
        )
    console.print(wrong)
