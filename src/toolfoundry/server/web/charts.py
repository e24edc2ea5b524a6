"""Small bar charts drawn on the server as inline SVG: the tool page's usage over time, its
call durations and its failures by kind.

No script and no inline style (the page's CSP allows neither): shapes and text only, coloured
by classes from ``static/style.css``. Every label passes through ``markupsafe.escape``; each
bar carries a ``<title>`` (its exact value, shown on hover and read by screen readers) and the
chart a text summary (``role="img"`` with ``aria-label``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

from toolfoundry.registry.usage import UsageSeries

WIDTH, HEIGHT = 360, 120
_TOP, _BOTTOM, _LEFT, _RIGHT = 18, 22, 30, 6  # room for the title, the axis labels, the scale


@dataclass(frozen=True)
class Bar:
    """One bar: its axis label (may be empty), its value and the hover text."""

    label: str
    value: float
    hint: str


def bar_chart(title: str, bars: Sequence[Bar], *, css: str, summary: str) -> Markup:
    """An SVG bar chart of ``bars``, left to right, scaled to the largest value.

    Args:
        title: shown above the bars.
        bars: the bars; an empty sequence draws the frame and "no data".
        css: the chart's class (``chart-calls``...), which colours its bars.
        summary: the chart in words, for ``aria-label``.
    """
    top = max((b.value for b in bars), default=0.0)
    plot_w, plot_h = WIDTH - _LEFT - _RIGHT, HEIGHT - _TOP - _BOTTOM
    parts = [
        f'<svg class="chart {escape(css)}" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'aria-label="{escape(summary)}">',
        f'<text class="chart-title" x="{_LEFT}" y="12">{escape(title)}</text>',
        f'<line class="chart-axis" x1="{_LEFT}" y1="{_TOP + plot_h}" x2="{WIDTH - _RIGHT}" '
        f'y2="{_TOP + plot_h}"/>',
        f'<text class="chart-scale" x="{_LEFT - 4}" y="{_TOP + 8}" text-anchor="end">'
        f"{escape(_short(top))}</text>",
        f'<text class="chart-scale" x="{_LEFT - 4}" y="{_TOP + plot_h}" text-anchor="end">0</text>',
    ]
    if not bars or top <= 0:
        parts.append(
            f'<text class="chart-empty" x="{_LEFT + plot_w / 2:.1f}" y="{_TOP + plot_h / 2:.1f}" '
            'text-anchor="middle">no data yet</text>'
        )
    else:
        step = plot_w / len(bars)
        gap = min(2.0, step / 4)
        labelled = max(1, round(len(bars) / 6))  # at most ~6 labels under the axis
        for i, bar in enumerate(bars):
            h = plot_h * bar.value / top
            x = _LEFT + i * step
            parts.append(
                f'<rect class="bar" x="{x + gap / 2:.1f}" y="{_TOP + plot_h - h:.1f}" '
                f'width="{max(step - gap, 1):.1f}" height="{h:.1f}">'
                f"<title>{escape(bar.hint)}</title></rect>"
            )
            if bar.label and (i % labelled == 0 or len(bars) <= 6):
                parts.append(
                    f'<text class="chart-label" x="{x + step / 2:.1f}" y="{HEIGHT - 8}" '
                    f'text-anchor="middle">{escape(bar.label)}</text>'
                )
    parts.append("</svg>")
    return Markup("".join(parts))


def _short(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}k"
    return f"{value:.0f}" if value == int(value) else f"{value:.1f}"


def duration(ms: float) -> str:
    """A bucket bound as a person reads it: ``40 µs``, ``3.4 ms``, ``1.2 s``."""
    if ms < 1:
        return f"{ms * 1000:.0f} µs"
    if ms < 1000:
        return f"{ms:.1f} ms" if ms < 10 else f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


def usage_charts(series: UsageSeries, failures: Mapping[str, int]) -> list[Markup]:
    """The tool page's three charts: calls per day, call durations, failures by kind."""
    calls = sum(n for _, n in series.days)
    per_day = [
        Bar(day.strftime("%d %b") if i % 7 == 0 else "", n, f"{day.isoformat()}: {n} call(s)")
        for i, (day, n) in enumerate(series.days)
    ]
    latency = [
        Bar(duration(upper), n, f"up to {duration(upper)}: {n} call(s)")
        for upper, n in series.latency
    ]
    kinds = [Bar(kind, n, f"{kind}: {n} call(s)") for kind, n in sorted(failures.items())]
    days = len(series.days)
    return [
        bar_chart(
            f"Calls per day, last {days} days",
            per_day,
            css="chart-calls",
            summary=f"{calls} call(s) in the last {days} days",
        ),
        bar_chart(
            "Duration of calls",
            latency,
            css="chart-latency",
            summary=f"call durations from {latency[0].label} to {latency[-1].label}"
            if latency
            else "no call durations yet",
        ),
        bar_chart(
            "Failures by kind",
            kinds,
            css="chart-failures",
            summary=", ".join(f"{b.label}: {b.value:.0f}" for b in kinds) or "no failures",
        ),
    ]
