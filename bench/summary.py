"""The summary at the top of docs/benchmarks.md: a table and a chart of the recorded run's goals.

    .venv/bin/python bench/summary.py            # rewrite the summary block and the chart
    .venv/bin/python bench/summary.py --check    # exit 1 when the committed table drifted

Every bench script declares its headline results as goal lines, one structured line each
(:func:`goal_text`, printed by ``harness.goal_line``): the measure, its figure (a ratio ``x``
against a baseline measured in the same run, or an absolute one such as ``ms``), the goal the
script holds it to and whether the run met it. This reads those lines, and nothing else, back
from the recorded run (the section ``bench/run_all.py`` writes) and writes between the
``summary`` markers at the top of docs/benchmarks.md one table (area, measure, figure, goal,
verdict) and ``docs/benchmarks/summary.svg``, the ratios drawn on a log scale around 1x by
matplotlib (the ``bench`` extra; its SVG backend, no date or random ids in the file, so the
same record gives the same file). ``run_all.py`` calls it after every recorded run; nothing
else of the page is touched. A script recorded before it declared its goal lines is missing
from the summary until it is recorded again.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

BENCH = Path(__file__).resolve().parent
DOC = BENCH.parent / "docs" / "benchmarks.md"
CHART = BENCH.parent / "docs" / "benchmarks" / "summary.svg"
BEGIN = "<!-- summary: begin (bench/summary.py writes this block from the recorded run) -->"
END = "<!-- summary: end -->"
RECORD_BEGIN = "<!-- recorded run: begin"
RECORD_END = "<!-- recorded run: end -->"
# What starts a goal line in a script's output; the rest of the line is one JSON object.
GOAL_PREFIX = "goal line: "
RATIO = "x"  # the unit of a figure that is ours / a baseline measured in the same run


@dataclass(frozen=True)
class GoalLine:
    """One headline result a bench script declared.

    Attributes:
        script: the script that printed it (``bench_call``).
        measure: what was measured, in words.
        value: the figure: ours / the baseline when ``unit`` is ``x``, else in ``unit``.
        unit: ``x`` for a ratio against a baseline of the same run, else ``ms``, ``µs``...
        goal: what the script holds it to (``<= 1.5x``, ``<= 1 ms``), or "" when nothing.
        met: whether this run met ``goal``; None without a goal.
    """

    script: str
    measure: str
    value: float
    unit: str
    goal: str = ""
    met: bool | None = None

    @property
    def verdict(self) -> str:
        return "" if self.met is None else "met" if self.met else "missed"


def goal_text(
    measure: str, value: float, unit: str = RATIO, *, goal: str = "", met: bool | None = None
) -> str:
    """The one line a script prints for a goal line (``harness.goal_line`` prints it)."""
    fields = {"measure": measure, "value": round(value, 4), "unit": unit, "goal": goal}
    return GOAL_PREFIX + json.dumps({**fields, "met": met}, ensure_ascii=False)


def goal_lines(recorded: str) -> list[GoalLine]:
    """The goal lines of each ``### bench_*.py`` section of a recorded run, in its order."""
    found: list[GoalLine] = []
    for part in re.split(r"(?m)^(?=### bench_\w+\.py$)", recorded):
        if not part.startswith("### "):
            continue
        script = part.split("\n", 1)[0][4:].removesuffix(".py")
        for line in part.splitlines()[1:]:
            text = line.strip()
            if text.startswith(GOAL_PREFIX):
                fields = json.loads(text.removeprefix(GOAL_PREFIX))
                found.append(GoalLine(script, **fields))
    return found


def figure(line: GoalLine) -> str:
    """``0.91x``, ``3.2 ms``: the value as the table shows it."""
    number = f"{line.value:.3g}" if line.value < 1000 else f"{line.value:.0f}"
    return f"{number}x" if line.unit == RATIO else f"{number} {line.unit}"


def table(found: list[GoalLine]) -> str:
    """The Markdown of the summary: one table, its rows grouped by script."""
    lines = [
        "| area | measure | figure | goal | verdict |",
        "|---|---|---:|---|---|",
    ]
    for g in found:
        area = g.script.removeprefix("bench_")
        measure = g.measure.replace("|", "/")
        lines.append(f"| {area} | {measure} | {figure(g)} | {g.goal} | {g.verdict} |")
    return "\n".join(lines)


def block(found: list[GoalLine]) -> str:
    return (
        f"{BEGIN}\n\n## Summary\n\nThe goal lines each script declares (`harness.goal_line`), "
        "from the recorded run at the end of this page: a figure `x` is ours against the "
        "baseline measured in the same run (below 1x: ours is faster or smaller); the chart "
        "draws those. `bench/run_all.py` rewrites this block and the chart.\n\n"
        "![ours / baseline per measure, log scale](benchmarks/summary.svg)\n\n"
        f"{table(found)}\n\n{END}"
    )


def recorded_run(doc: str) -> str:
    start = doc.find(RECORD_BEGIN)
    end = doc.find(RECORD_END)
    if start < 0 or end < start:
        raise SystemExit(f"{DOC}: no recorded run between its markers")
    return doc[start:end]


def with_block(doc: str, found: list[GoalLine]) -> str:
    """``doc`` with its summary block replaced (or put right under the page's title)."""
    new = block(found)
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        return head + new + rest.split(END, 1)[1]
    title, _, body = doc.partition("\n")
    return f"{title}\n\n{new}\n{body}"


def chart(found: list[GoalLine], path: Path = CHART) -> None:
    """The ratios (goal lines in ``x``) as horizontal bars on a log scale, with 1x marked;
    SVG, reproducible."""
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "toolfoundry-bench"  # stable ids in the file
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text: small, and searchable
    found = [g for g in found if g.unit == RATIO]
    labels = [f"{g.script.removeprefix('bench_')}: {g.measure[:48]}" for g in found]
    values = [g.value for g in found]
    fig, ax = plt.subplots(figsize=(9, 0.28 * len(found) + 1.2))
    colours = ["#2f6fdf" if v <= 1 else "#c4321f" for v in values]
    ax.barh(range(len(found)), values, color=colours)
    ax.set_xscale("log")
    ax.axvline(1.0, color="#555", linewidth=1)
    ax.set_yticks(range(len(found)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("ours / baseline (log scale; left of the line: ours is faster or smaller)")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def write(doc_path: Path = DOC, *, draw: bool = True) -> None:
    """Rewrite the summary block of ``doc_path`` (and the chart) from its recorded run."""
    doc = doc_path.read_text(encoding="utf-8")
    found = goal_lines(recorded_run(doc))
    doc_path.write_text(with_block(doc, found), encoding="utf-8")
    if draw:
        chart(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the table drifted")
    args = parser.parse_args()
    if args.check:
        doc = DOC.read_text(encoding="utf-8")
        if with_block(doc, goal_lines(recorded_run(doc))) != doc:
            sys.exit(f"{DOC}: the summary is not the recorded run's; run bench/summary.py")
        return
    write()
    print(f"wrote the summary of {DOC} and {CHART}")


if __name__ == "__main__":
    main()
