"""``toolfoundry demo``: the whole cycle, offline, on a fresh embedded SQLite store.

Every stage goes through the real parts: the forge's static check, tests in the WebAssembly
sandbox, the capability policy, the registry, and a second process that finds the tool after a
restart. The drafts are scripted (what an agent would submit); no model is involved.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.panel import Panel
from rich.table import Table

from toolfoundry.foundry import CreateResult, Foundry

SLUG_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The title to turn into a slug."},
        "max_length": {"type": "integer", "minimum": 1, "default": 60},
    },
    "required": ["text"],
    "additionalProperties": False,
}
SLUG_TESTS: list[dict[str, Any]] = [
    {"name": "basic", "input": {"text": "Hello, World!"}, "expected": "hello-world"},
    {
        "name": "accents",
        "input": {"text": "Crème Brûlée à Paris"},
        "expected": "creme-brulee-a-paris",
    },
    {"name": "cut", "input": {"text": "a b c d", "max_length": 3}, "expected": "a-b"},
]
SLUG_BUGGY = """
export function handler({ text, max_length = 60 }) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").slice(0, max_length);
}
"""
SLUG_V1 = """
export function handler({ text, max_length = 60 }) {
  const plain = text.normalize("NFKD").replace(/[\\u0300-\\u036f]/g, "");
  const slug = plain.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "");
  return slug.slice(0, max_length).replace(/-+$/, "");
}
"""
# v2 "improves" the separator but silently breaks v1's behaviour: the regression gate refuses it.
SLUG_V2_REGRESSES = SLUG_V1.replace('"-"', '"_"').replace("/-+$/", "/_+$/")
# v2 done right: same behaviour, plus a `separator` option and a test for it.
SLUG_V2 = SLUG_V1.replace("max_length = 60 }", 'max_length = 60, separator = "-" }').replace(
    'return slug.slice(0, max_length).replace(/-+$/, "");',
    'return slug.slice(0, max_length).replace(/-+$/, "").replaceAll("-", separator);',
)
WEATHER_CODE = """
export async function handler({ city }) {
  const r = await fetch(`https://api.weather.example/v1/now?city=${encodeURIComponent(city)}`);
  if (!r.ok) throw new Error(`weather service answered ${r.status}`);
  const { temp_c } = await r.json();
  return { city, temp_c };
}
"""


def slug_draft(code: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": "slugify",
        "description": "Turn a title into a URL slug (ASCII, lowercase, hyphen-separated).",
        "parameters": extra.pop("parameters", SLUG_PARAMS),
        "code": code,
        "tests": extra.pop("tests", SLUG_TESTS),
        **extra,
    }


@click.command()
@click.option(
    "--db",
    default=None,
    metavar="URL",
    help="Registry URL (default: a fresh ./.toolfoundry/demo.db, reset on every run).",
)
def demo(db: str | None) -> None:
    """Run the whole cycle offline: draft, check, test, register, reuse, improve, roll back."""
    console = Console()
    if db is None:
        path = Path(".toolfoundry/demo.db")
        path.parent.mkdir(parents=True, exist_ok=True)
        for stale in path.parent.glob("demo.db*"):
            stale.unlink()
        db = f"sqlite:///{path}"
    console.print(
        Panel.fit(
            f"toolfoundry demo — scripted drafts, real forge, sandbox and registry\nstore: {db}"
        )
    )
    with Foundry.open(db) as foundry:
        run_stages(foundry, db, console)


def stage(console: Console, title: str) -> None:
    console.rule(f"[bold]{title}")


def show_create(console: Console, result: CreateResult) -> None:
    colour = {"active": "green", "pending_approval": "yellow"}.get(result.status, "red")
    where = f"v{result.version}" if result.version else "(nothing registered)"
    console.print(f"[{colour}]{result.status}[/] {result.name} {where}")
    console.print(f"  step: {json.dumps(result.step.to_dict(), ensure_ascii=False)}")
    for test in result.test_results:
        mark = "[green]pass[/]" if test.get("passed") else "[red]FAIL[/]"
        console.print(f"  {mark} {test.get('name')}  {test.get('diff') or test.get('error') or ''}")
    for finding in result.findings:
        console.print(f"  finding: {finding}")


def run_stages(foundry: Foundry, db: str, console: Console) -> None:
    stage(console, "1. The agent needs a slug tool: is there one already?")
    console.print(f"search_tools('slug for a title') -> {foundry.search('slug for a title')}")

    stage(console, "2. First draft: checked, tested in the sandbox, refused (a test fails)")
    show_create(console, foundry.create_tool(slug_draft(SLUG_BUGGY)))

    stage(console, "3. Repaired draft: pure computation, tests pass, active at once")
    show_create(console, foundry.create_tool(slug_draft(SLUG_V1)))
    out = foundry.call("slugify", {"text": "Ünïcödé Tools, Made Safe"})
    console.print(f"call slugify -> {out.to_dict()}")

    stage(console, "4. Restart: a new process finds and calls the tool")
    args = json.dumps({"text": "Found Again After a Restart"})
    proc = subprocess.run(
        [sys.executable, "-m", "toolfoundry", "call", "slugify", "--db", db, "--args", args],
        capture_output=True,
        text=True,
        check=False,
    )
    console.print(f"[dim]$ toolfoundry call slugify ...[/]\n{proc.stdout.strip() or proc.stderr}")

    stage(console, "5. A network tool waits for a human; tests use fixtures, never the network")
    weather = foundry.create_tool(
        {
            "name": "weather_now",
            "description": "Current temperature in a city, from the weather service.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
            "code": WEATHER_CODE,
            "capabilities": {"network": ["api.weather.example"]},
            "fixtures": [
                {
                    "url": "https://api.weather.example/v1/now?city=Paris",
                    "status": 200,
                    "body": '{"temp_c": 17.5}',
                }
            ],
            "tests": [{"input": {"city": "Paris"}, "expected": {"city": "Paris", "temp_c": 17.5}}],
        }
    )
    show_create(console, weather)
    decision = foundry.approve("weather_now", by="alice", reason="reviewed: one read-only GET")
    console.print(f"approve weather_now as alice -> {decision.to_dict()}")

    stage(console, "6. Improving the tool: a regression is refused, a good v2 is accepted")
    underscored = [{**t, "expected": t["expected"].replace("-", "_")} for t in SLUG_TESTS]
    show_create(console, foundry.create_tool(slug_draft(SLUG_V2_REGRESSES, tests=underscored)))
    params_v2 = json.loads(json.dumps(SLUG_PARAMS))
    params_v2["properties"]["separator"] = {"type": "string", "default": "-"}
    tests_v2 = [
        *SLUG_TESTS,
        {"name": "sep", "input": {"text": "A B", "separator": "_"}, "expected": "a_b"},
    ]
    show_create(
        console, foundry.create_tool(slug_draft(SLUG_V2, parameters=params_v2, tests=tests_v2))
    )
    console.print(
        f"call v2 -> {foundry.call('slugify', {'text': 'Two Words', 'separator': '.'}).value}"
    )

    stage(console, "7. Roll back to v1 (nothing is deleted), then the history and usage")
    foundry.rollback("slugify", to=1, by="demo")
    table = Table("version", "status", "current", "sha256")
    for version in foundry.history("slugify"):
        table.add_row(
            str(version.version), version.status.value, str(version.current), version.sha256[:12]
        )
    console.print(table)
    usage = foundry.usage("slugify")
    console.print(f"usage: {usage.calls} calls, p50 {usage.p50_ms} ms, failures {usage.failures}")
    console.print(f"audit trail: {', '.join(str(e.event.value) for e in foundry.audit('slugify'))}")
    console.print(
        "\nNext: [bold]toolfoundry serve[/] exposes the active tools and the meta-tools over MCP."
    )
