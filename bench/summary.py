"""The summary at the top of docs/benchmarks.md: a table and a chart of the recorded run's ratios.

    .venv/bin/python bench/summary.py            # rewrite the summary block and the chart
    .venv/bin/python bench/summary.py --check    # exit 1 when the committed table drifted

Every bench script measures its side against a baseline in the same run and prints the ratio
(``1.33x``, ``x 1.05 of baseline``). This reads those lines back from the recorded run (the
section ``bench/run_all.py`` writes), keeps the first few of each script, and writes between
the ``summary`` markers at the top of docs/benchmarks.md a table per area (measure, ratio,
goal when the script states one) and ``docs/benchmarks/summary.svg``, the ratios drawn on a
log scale around 1x by matplotlib (the ``bench`` extra; its SVG backend, no date or random
ids in the file, so the same record gives the same file). ``run_all.py`` calls it after
every recorded run; nothing else of the page is touched.
"""

from __future__ import annotations

import argparse
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
PER_SCRIPT = 4  # rows kept of each script: its headline measures come first

_RATIO = re.compile(r"(?:\bx ?(\d+(?:\.\d+)?) of baseline)|(?<![\w.])(\d+(?:\.\d+)?)x(?![\w])")
_GOAL = re.compile(r"goal[^|]*?(?:: (met|MISSED))?\s*$|\|\s*([<>]=[^|]*?)\s*\|?\s*$")


@dataclass(frozen=True)
class Ratio:
    """One measure against its baseline, as a script printed it."""

    script: str
    measure: str
    ratio: float
    goal: str


def ratios(recorded: str) -> list[Ratio]:
    """The ratios of each ``### bench_*.py`` section of a recorded run, in its order."""
    found: list[Ratio] = []
    for part in re.split(r"(?m)^(?=### bench_\w+\.py$)", recorded):
        if not part.startswith("### "):
            continue
        script = part.split("\n", 1)[0][4:].removesuffix(".py")
        rows = [r for line in part.splitlines()[1:] if (r := _row(script, line)) is not None]
        found += rows[:PER_SCRIPT]
    return found


def _row(script: str, line: str) -> Ratio | None:
    text = line.strip()
    if not text or text.startswith(("`", "#", "|---", "|:")):
        return None
    match = _RATIO.search(text)
    if match is None:
        return None
    value = float(match.group(1) or match.group(2))
    if text.startswith("|"):
        measure = text.strip("|").split("|")[0].strip()
    else:
        # fixed-width output: columns are two or more spaces apart
        measure = re.split(r"\s{2,}", text, maxsplit=1)[0].removesuffix(" p50").strip()
    if not measure or value <= 0 or measure.startswith(("goal", "what ")):
        return None
    goal = _GOAL.search(text)
    said = ""
    if goal is not None:
        said = (goal.group(2) or "").strip() or (goal.group(1) or "stated")
    return Ratio(script, measure.replace("|", "/"), value, said)


def table(found: list[Ratio]) -> str:
    """The Markdown of the summary: one table, its rows grouped by script."""
    lines = [
        "| area | measure | ours / baseline | goal |",
        "|---|---|---:|---|",
    ]
    for r in found:
        lines.append(
            f"| {r.script.removeprefix('bench_')} | {r.measure} | {r.ratio:g}x | {r.goal} |"
        )
    return "\n".join(lines)


def block(found: list[Ratio]) -> str:
    return (
        f"{BEGIN}\n\n## Summary\n\nEach measure against the baseline measured in the same run "
        "(below 1x: ours is faster or smaller), from the recorded run at the end of this page; "
        "the first rows of each script. `bench/run_all.py` rewrites this block and the chart.\n\n"
        "![ours / baseline per measure, log scale](benchmarks/summary.svg)\n\n"
        f"{table(found)}\n\n{END}"
    )


def recorded_run(doc: str) -> str:
    start = doc.find(RECORD_BEGIN)
    end = doc.find(RECORD_END)
    if start < 0 or end < start:
        raise SystemExit(f"{DOC}: no recorded run between its markers")
    return doc[start:end]


def with_block(doc: str, found: list[Ratio]) -> str:
    """``doc`` with its summary block replaced (or put right under the page's title)."""
    new = block(found)
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        return head + new + rest.split(END, 1)[1]
    title, _, body = doc.partition("\n")
    return f"{title}\n\n{new}\n{body}"


def chart(found: list[Ratio], path: Path = CHART) -> None:
    """The ratios as horizontal bars on a log scale, with 1x marked; SVG, reproducible."""
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "toolfoundry-bench"  # stable ids in the file
    matplotlib.rcParams["svg.fonttype"] = "none"  # text as text: small, and searchable
    labels = [f"{r.script.removeprefix('bench_')}: {r.measure[:48]}" for r in found]
    values = [r.ratio for r in found]
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
    found = ratios(recorded_run(doc))
    doc_path.write_text(with_block(doc, found), encoding="utf-8")
    if draw:
        chart(found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the table drifted")
    args = parser.parse_args()
    if args.check:
        doc = DOC.read_text(encoding="utf-8")
        if with_block(doc, ratios(recorded_run(doc))) != doc:
            sys.exit(f"{DOC}: the summary is not the recorded run's; run bench/summary.py")
        return
    write()
    print(f"wrote the summary of {DOC} and {CHART}")


if __name__ == "__main__":
    main()
