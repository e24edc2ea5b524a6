"""docs/benchmarks.md's summary is the recorded run's (bench/summary.py): the table at the top
and docs/benchmarks/summary.svg are regenerated from the goal lines each bench script declares
in the record, never edited by hand, and never scraped from the rest of a script's output."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("bench_summary", ROOT / "bench" / "summary.py")
assert spec is not None
assert spec.loader is not None
summary = importlib.util.module_from_spec(spec)
sys.modules["bench_summary"] = summary
spec.loader.exec_module(summary)


def test_the_committed_summary_is_the_recorded_runs() -> None:
    doc = summary.DOC.read_text(encoding="utf-8")
    found = summary.goal_lines(summary.recorded_run(doc))
    assert len(found) >= 10
    assert summary.with_block(doc, found) == doc, "run: .venv/bin/python bench/summary.py"
    assert doc.index(summary.BEGIN) < doc.index(summary.RECORD_BEGIN)  # at the top
    # the scripts a pattern over their output used to miss are there by their own lines
    assert {"bench_otel", "bench_startup", "bench_call"} <= {g.script for g in found}


def test_only_declared_goal_lines_are_read() -> None:
    """What a script prints besides its goal lines (ratios, goals in words) is not read."""
    declared = summary.goal_text("ten inner calls vs ten calls", 0.91, goal="<= 0.5x", met=False)
    recorded = "\n".join(
        [
            "### bench_a.py",
            "| measure | ours | baseline | ratio | goal |",
            "|---|---:|---:|---:|---:|",
            "| ten calls | 28.9 ms | 31.7 ms | 0.91x | <= 0.5x |",
            declared,
            "### bench_b.py",
            "cold jail                 95.61   158.03        1.33x                  14.3",
            "goal warm p50 <= 5 ms: met (3.26)",
            "  " + summary.goal_text("warm pool call p50", 3.26, "ms", goal="<= 5 ms", met=True),
            summary.goal_text("cold jail | subprocess", 1.33),
        ]
    )
    found = summary.goal_lines(recorded)
    assert [(g.script, g.measure, g.value, g.unit, g.goal, g.verdict) for g in found] == [
        ("bench_a", "ten inner calls vs ten calls", 0.91, "x", "<= 0.5x", "missed"),
        ("bench_b", "warm pool call p50", 3.26, "ms", "<= 5 ms", "met"),
        ("bench_b", "cold jail | subprocess", 1.33, "x", "", ""),
    ]
    rows = summary.table(found).splitlines()[2:]
    assert rows == [
        "| a | ten inner calls vs ten calls | 0.91x | <= 0.5x | missed |",
        "| b | warm pool call p50 | 3.26 ms | <= 5 ms | met |",
        "| b | cold jail / subprocess | 1.33x |  |  |",
    ]


def test_the_chart_is_the_recorded_runs(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")  # the bench extra
    doc = summary.DOC.read_text(encoding="utf-8")
    drawn = tmp_path / "summary.svg"
    summary.chart(summary.goal_lines(summary.recorded_run(doc)), drawn)
    assert drawn.read_bytes() == summary.CHART.read_bytes()
