"""Run every bench/ script once and record the run in docs/benchmarks.md.

    .venv/bin/python bench/run_all.py                # every script, then rewrite the record
    .venv/bin/python bench/run_all.py --only bench_sandbox bench_listing --dry-run

Each script runs in its own interpreter, one after another, with the arguments below (chosen
to keep each within a few minutes on the 2-core machine) and a time limit. Its output is kept
whole in ``bench/results/run-<UTC time>.txt`` (gitignored), and docs/benchmarks.md's section
between the ``recorded run`` markers is replaced by the run: its date, commit, machine, the
load average before and after each script, each command and what it printed (a script that
prints Markdown tables, like ``bench_sandbox.py --markdown``, is shown as tables). Everything
outside the markers is hand-maintained and kept as it is, but for the summary at the top
(a table and ``docs/benchmarks/summary.svg`` of the goal lines the scripts declared), which
``summary.py`` rewrites from it; a script missing from ``SCRIPTS``
still runs, with no arguments. ``--only`` re-runs some scripts and keeps the others' record.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import summary  # bench/summary.py, beside this script

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DOC = REPO / "docs" / "benchmarks.md"
BEGIN = "<!-- recorded run: begin (bench/run_all.py writes this section; edit outside it) -->"
END = "<!-- recorded run: end -->"
TIME_LIMIT_S = 900

# script -> arguments for the recorded run (each a few minutes at most)
SCRIPTS: dict[str, list[str]] = {
    "bench_sandbox.py": ["--rounds", "7", "--batch", "50", "--markdown"],
    "bench_crypto.py": ["--rounds", "5"],
    "bench_memory.py": ["--rounds", "3"],
    "bench_process.py": ["--rounds", "60", "--seconds", "5"],
    "bench_agent.py": ["--runs", "20"],
    "bench_listing.py": ["--tools", "10000", "--rounds", "3"],
    "bench_registry.py": ["--no-postgres", "--tools", "20000", "--runs", "20"],
    "bench_validation.py": ["--rounds", "15"],
    "bench_json_gate.py": ["--rounds", "15"],
    "bench_redaction.py": ["--rounds", "10"],
    "bench_otel.py": ["--rounds", "30", "--calls", "30"],
    "bench_fleet.py": ["--rounds", "3", "--seconds", "5"],
    "bench_call.py": ["--rounds", "15", "--postgres"],
    "bench_serve.py": ["--rounds", "3", "--seconds", "3"],
    "bench_scale.py": ["--creates", "5"],  # seeds 10 000 tools: several minutes at load
    "bench_code_mode.py": ["--rounds", "21"],
}
MARKDOWN = {"bench_sandbox.py", "bench_scale.py", "bench_serve.py"}


@dataclass
class Ran:
    script: str
    args: list[str]
    output: str
    returncode: int | None  # None: stopped at the time limit
    seconds: float
    load_before: float
    load_after: float
    at: datetime

    @property
    def command(self) -> str:
        return " ".join([".venv/bin/python", f"bench/{self.script}", *self.args])


def scripts() -> list[str]:
    found = sorted(p.name for p in BENCH.glob("bench_*.py"))
    return [s for s in SCRIPTS if s in found] + [s for s in found if s not in SCRIPTS]


def run(script: str) -> Ran:
    args = SCRIPTS.get(script, [])
    load_before, at = os.getloadavg()[0], datetime.now(UTC)
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, str(BENCH / script), *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=TIME_LIMIT_S,
            check=False,
        )
        output, code = done.stdout + done.stderr, done.returncode
    except subprocess.TimeoutExpired as stopped:
        partial = stopped.stdout or b""
        output = partial.decode() if isinstance(partial, bytes) else partial
        code = None
    took = time.perf_counter() - started
    return Ran(script, args, output.rstrip(), code, took, load_before, os.getloadavg()[0], at)


def section(ran: Ran) -> str:
    if ran.returncode is None:
        status = f"stopped at the {TIME_LIMIT_S} s limit"
    elif ran.returncode:
        status = f"**failed** (exit {ran.returncode})"
    else:
        status = "ok"
    head = (
        f"### {ran.script}\n\n`{ran.command}` at {ran.at:%H:%M} UTC: {status},"
        f" {ran.seconds:.0f} s,"
        f" load average {ran.load_before:.1f} before, {ran.load_after:.1f} after.\n\n"
    )
    if ran.script in MARKDOWN and ran.returncode == 0:
        return head + separated_tables(ran.output) + "\n"
    return head + "```text\n" + ran.output + "\n```\n"


def separated_tables(text: str) -> str:
    """Markdown output with a blank line after each table (a plain line right after one would
    be read as one more row)."""
    out: list[str] = []
    for line in text.splitlines():
        if out and out[-1].startswith("|") and line and not line.startswith("|"):
            out.append("")
        out.append(line)
    return "\n".join(out)


def sections_of(recorded: str) -> dict[str, str]:
    """The per-script sections of an earlier record, by script name."""
    parts = re.split(r"(?m)^(?=### bench_\w+\.py$)", recorded)
    return {p.split("\n", 1)[0][4:]: p.rstrip() + "\n" for p in parts if p.startswith("### ")}


def record(doc: str, runs: list[Ran], keep: dict[str, str], started: datetime) -> str:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--", "src", "bench"],
        cwd=REPO,
        capture_output=True,
        text=True,
    ).stdout.strip()
    where = f"commit `{commit}`{' (with uncommitted changes in the tree)' if dirty else ''}"
    intro = (
        f"One run of `bench/run_all.py`, started {started:%Y-%m-%d %H:%M} UTC on {where}:"
        f" {os.cpu_count()} CPUs, shared with other work (the load average before and after"
        " each script is given; ratios are of sides measured in the same run, absolutes move"
        " with the load). Every section below is that script's output, unedited."
    )
    if keep:  # --only: the earlier run's words stay, and say what was run again
        earlier = doc.split(BEGIN, 1)[1].split("### ", 1)[0]
        intro = " ".join(earlier.split("## Recorded run", 1)[-1].split())
        again = ", ".join(r.script for r in runs)
        intro += f" Run again at {started:%Y-%m-%d %H:%M} UTC on {where}: {again}."
    body = [BEGIN, "", "## Recorded run", "", textwrap.fill(intro, width=98), ""]
    fresh = {r.script: section(r) for r in runs}
    for script in scripts():
        text = fresh.get(script) or keep.get(script)
        if text:
            body.append(text)
    body.append(END)
    generated = "\n".join(body) + "\n"
    if BEGIN in doc and END in doc:
        before, rest = doc.split(BEGIN, 1)
        after = rest.split(END, 1)[1]
        return before + generated + after.lstrip("\n")
    return doc.rstrip("\n") + "\n\n" + generated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", nargs="*", help="script names (bench_x or bench_x.py)")
    parser.add_argument("--dry-run", action="store_true", help="print, do not write the doc")
    opts = parser.parse_args()
    wanted = scripts()
    if opts.only:
        names = {n if n.endswith(".py") else f"{n}.py" for n in opts.only}
        wanted = [s for s in wanted if s in names]
    started = datetime.now(UTC)
    results = BENCH / "results"
    results.mkdir(exist_ok=True)
    log = results / f"run-{started:%Y%m%dT%H%M%SZ}.txt"
    runs = []
    for script in wanted:
        print(f"running {script} {' '.join(SCRIPTS.get(script, []))}", flush=True)
        ran = run(script)
        runs.append(ran)
        with log.open("a", encoding="utf-8") as out:
            out.write(section(ran) + "\n")
        print(f"  {ran.returncode} in {ran.seconds:.0f} s", flush=True)
    doc = DOC.read_text(encoding="utf-8")
    keep = {}
    if opts.only and BEGIN in doc:
        keep = sections_of(doc.split(BEGIN, 1)[1].split(END, 1)[0])
    updated = record(doc, runs, keep, started)
    if opts.dry_run:
        print(updated[updated.index(BEGIN) :])
        return
    DOC.write_text(updated, encoding="utf-8")
    summary.write(DOC)  # the table and chart at the top, from the run just recorded
    print(f"wrote {DOC.relative_to(REPO)}; the whole output is in {log.relative_to(REPO)}")


if __name__ == "__main__":
    main()
