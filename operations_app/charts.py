"""Charts drawn by the server as inline SVG: no script, no library, nothing fetched, so they work
offline and print. Every bar and point carries its numbers in a ``<title>`` (shown on hover), and the
pages put the same numbers in a table beside each chart."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from html import escape

from django.utils.safestring import SafeString, mark_safe

# Distinct in light and dark themes, and for the common colour-vision deficiencies (Okabe-Ito).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
WIDTH, HEIGHT = 640, 180
LEFT, RIGHT, TOP, BOTTOM = 48, 8, 10, 26


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def bucket_label(moment: datetime, bucket: str) -> str:
    return moment.strftime("%H:%M") if bucket == "hour" else moment.strftime("%d %b")


def _number(value: float) -> str:
    """An axis or hover number: whole numbers with thousands separators, small ones with the digits
    that matter (0.0023, not 0)."""
    if float(value).is_integer():
        return f"{int(value):,}"
    if abs(value) < 1:
        return f"{value:.2g}" if abs(value) >= 0.0001 else f"{value:.1e}"
    return f"{value:,.1f}"


def _nice_max(value: float) -> float:
    """A round number at or above ``value`` (1, 2, 2.5 or 5 times a power of ten), for an axis's top;
    small values (a cost of $0.0023) get a small top, not 1."""
    if value <= 0:
        return 1.0
    magnitude = 10 ** math.floor(math.log10(value))
    for step in (1, 2, 2.5, 5, 10):
        if value <= step * magnitude * (1 + 1e-9):
            return step * magnitude
    return 10 * magnitude


def _text(x: float, y: float, text: str, anchor: str = "start") -> str:
    return f'<text class="axis" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}">{escape(text)}</text>'


def _tip(label: str, name: str, value: float, unit: str) -> str:
    """The hover text of one bar or point: where, which series, how much."""
    return f"<title>{escape(label)}: {escape(name)} {escape(_number(value))}{escape(unit and ' ' + unit)}</title>"


def _frame(title: str, top: float, unit: str, labels: Sequence[str], inner: list[str]) -> SafeString:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    parts = [
        f'<svg class="ops-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}"'
        ' preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for fraction in (0, 0.5, 1):
        y = TOP + plot_h * (1 - fraction)
        parts.append(f'<line class="grid" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/>')
        parts.append(_text(LEFT - 4, y + 4, _number(top * fraction), "end"))
    if unit:
        parts.append(f'<text class="axis" x="2" y="{TOP + 8}">{escape(unit)}</text>')
    step = max(1, -(-len(labels) // 8))  # at most about eight labels along the bottom
    slot = plot_w / max(1, len(labels))
    for index in range(0, len(labels), step):
        x = LEFT + slot * (index + 0.5)
        parts.append(
            f'<text class="axis" x="{x:.1f}" y="{HEIGHT - 8}" text-anchor="middle">{escape(labels[index])}</text>'
        )
    parts += inner
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text in it is escaped above)


def stacked_bars(
    *, title: str, labels: Sequence[str], series: dict[str, Sequence[float]], unit: str = ""
) -> SafeString:
    """One bar per label, its segments stacked in the order of ``series``."""
    totals = [sum(values[i] for values in series.values()) for i in range(len(labels))]
    top = _nice_max(max(totals, default=0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(1, len(labels))
    bar = max(1.0, slot * 0.72)
    inner = []
    for index, label in enumerate(labels):
        y = TOP + plot_h
        for number, (name, values) in enumerate(series.items()):
            value = values[index]
            if not value:
                continue
            height = plot_h * value / top
            y -= height
            x = LEFT + slot * index + (slot - bar) / 2
            box = f'x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{max(height, 0.5):.1f}"'
            inner.append(f'<rect {box} fill="{colour(number)}">{_tip(label, name, value, unit)}</rect>')
    return _frame(title, top, unit, labels, inner)


def lines(*, title: str, labels: Sequence[str], series: dict[str, Sequence[float]], unit: str = "") -> SafeString:
    """One line per series; a bucket without data (0) is a gap, not a fall to zero."""
    top = _nice_max(max((v for values in series.values() for v in values), default=0))
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / max(1, len(labels))
    inner = []
    for number, (name, values) in enumerate(series.items()):
        segment: list[str] = []
        runs: list[list[str]] = []
        for index, value in enumerate(values):
            x = LEFT + slot * (index + 0.5)
            y = TOP + plot_h * (1 - value / top)
            if not value:
                if segment:
                    runs.append(segment)
                segment = []
                continue
            segment.append(f"{x:.1f},{y:.1f}")
            inner.append(
                f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{colour(number)}">'
                f"{_tip(labels[index], name, value, unit)}</circle>"
            )
        if segment:
            runs.append(segment)
        for run in runs:
            if len(run) > 1:
                inner.insert(
                    0,
                    f'<polyline fill="none" stroke="{colour(number)}" stroke-width="2" points="{" ".join(run)}"/>',
                )
    return _frame(title, top, unit, labels, inner)


def horizontal_bars(
    *, title: str, rows: Sequence[tuple[str, Sequence[float]]], names: Sequence[str], unit: str
) -> SafeString:
    """One group of bars per row (e.g. a stage's p50 and p95), drawn across."""
    top = _nice_max(max((v for _, values in rows for v in values), default=0))
    row_h, label_w = 22, 190
    height = TOP + row_h * len(rows) + BOTTOM
    plot_w = WIDTH - label_w - RIGHT
    parts = [
        f'<svg class="ops-chart" viewBox="0 0 {WIDTH} {height}" role="img" aria-label="{escape(title)}"'
        ' xmlns="http://www.w3.org/2000/svg">',
        f"<title>{escape(title)}</title>",
    ]
    for fraction in (0, 0.5, 1):
        x = label_w + plot_w * fraction
        parts.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{height - BOTTOM}"/>')
        anchor = {0: "start", 1: "end"}.get(fraction, "middle")  # the ends' labels stay inside the chart
        parts.append(_text(x, height - 8, f"{_number(top * fraction)} {unit}", anchor))
    bar_h = (row_h - 6) / max(1, len(names))
    for row, (label, values) in enumerate(rows):
        y = TOP + row * row_h
        parts.append(
            f'<text class="axis" x="{label_w - 6}" y="{y + row_h / 2 + 4:.1f}" text-anchor="end">{escape(label)}</text>'
        )
        for number, (name, value) in enumerate(zip(names, values, strict=True)):
            box = f'x="{label_w}" y="{y + 3 + number * bar_h:.1f}" width="{max(plot_w * value / top, 0.5):.1f}"'
            parts.append(
                f'<rect {box} height="{bar_h:.1f}" fill="{colour(number)}">{_tip(label, name, value, unit)}</rect>'
            )
    parts.append("</svg>")
    return mark_safe("".join(parts))  # noqa: S308 (every text in it is escaped above)


def legend(names: Sequence[str]) -> list[tuple[str, str]]:
    """(name, colour) in the order the charts draw them, for the template's legend."""
    return [(name, colour(index)) for index, name in enumerate(names)]
