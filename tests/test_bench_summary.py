"""docs/benchmarks.md's summary is the recorded run's (bench/summary.py): the table at the top
and docs/benchmarks/summary.svg are regenerated from the record, never edited by hand."""

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
    found = summary.ratios(summary.recorded_run(doc))
    assert len(found) >= 10
    assert summary.with_block(doc, found) == doc, "run: .venv/bin/python bench/summary.py"
    assert doc.index(summary.BEGIN) < doc.index(summary.RECORD_BEGIN)  # at the top


def test_ratios_are_read_from_each_form_the_scripts_print() -> None:
    recorded = "\n".join(
        [
            "### bench_a.py",
            "| measure | ours | baseline | ratio | goal |",
            "|---|---:|---:|---:|---:|",
            "| ten calls | 28.9 ms | 31.7 ms | 0.91x | <= 0.5x |",
            "### bench_b.py",
            "cold jail                 95.61   158.03        1.33x                  14.3",
            "  call path, back to back   p50 1.1 ms   x 2.43 of baseline   goal <= 1 ms: MISSED",
            "goal warm p50 <= 5 ms: met (3.26)",
        ]
    )
    assert [(r.script, r.measure, r.ratio, r.goal) for r in summary.ratios(recorded)] == [
        ("bench_a", "ten calls", 0.91, "<= 0.5x"),
        ("bench_b", "cold jail", 1.33, ""),
        ("bench_b", "call path, back to back", 2.43, "MISSED"),
    ]


def test_the_chart_is_the_recorded_runs(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")  # the bench extra
    doc = summary.DOC.read_text(encoding="utf-8")
    drawn = tmp_path / "summary.svg"
    summary.chart(summary.ratios(summary.recorded_run(doc)), drawn)
    assert drawn.read_bytes() == summary.CHART.read_bytes()
