"""Draw a histogram of task durations."""

from __future__ import annotations

import math

from sitegen.formatting import duration
from sitegen.svg.text import esc, num

WIDTH = 600.0
HEIGHT = 160.0
LEFT = 36.0
BOTTOM = 22.0
TOP = 12.0


def histogram(values: list[int], title: str, bins: int = 20) -> str:
    """Return an SVG histogram of durations in ms; empty string without values."""
    if not values:
        return ""
    low, high = min(values), max(values)
    # About 1.5·√n bins: enough to show a shape, few enough that bins are not mostly empty.
    count = max(1, min(bins, round(1.5 * math.sqrt(len(values))), high - low + 1))
    width = max(1.0, (high - low + 1) / count)
    counts = [0] * count
    last = count - 1
    for value in values:
        slot = int((value - low) / width)
        counts[slot if slot < last else last] += 1
    peak = max(counts)
    bar_w = (WIDTH - LEFT - 8) / count
    plot_h = HEIGHT - BOTTOM - TOP
    parts = []
    bar_width = num(max(1.0, bar_w - 2))
    for i, n in enumerate(counts):
        h = plot_h * n / peak
        lo = low + i * width
        # Durations and counts only: nothing in the tip needs escaping.
        tip = f"{duration(lo)} – {duration(lo + width)}: {n} task{'s' if n != 1 else ''}"
        parts.append(
            f'<rect class="hist-bar" x="{num(LEFT + i * bar_w + 1)}" y="{num(TOP + plot_h - h)}" '
            f'width="{bar_width}" height="{num(h)}"><title>{tip}</title></rect>'
        )
    base = TOP + plot_h
    parts.append(
        f'<line class="tl-axis" x1="{LEFT}" y1="{num(base)}" x2="{WIDTH - 8}" y2="{num(base)}"/>'
    )
    parts.append(
        f'<text class="tl-time" x="{LEFT}" y="{num(base + 16)}">{esc(duration(low))}</text>'
    )
    parts.append(
        f'<text class="tl-time" x="{WIDTH - 8}" y="{num(base + 16)}" text-anchor="end">'
        f"{esc(duration(high))}</text>"
    )
    parts.append(
        f'<text class="tl-time" x="{LEFT - 6}" y="{num(TOP + 8)}" text-anchor="end">{peak}</text>'
    )
    parts.append(f'<text class="tl-time" x="{LEFT - 6}" y="{num(base)}" text-anchor="end">0</text>')
    return (
        f'<svg class="histogram" viewBox="0 0 {num(WIDTH)} {num(HEIGHT)}" role="img" '
        f'aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}</svg>'
    )
