"""Draw a histogram of task durations."""

from __future__ import annotations

import functools
import math
from collections import Counter
from itertools import repeat
from operator import sub, truediv

from sitegen.svg.text import num
from sitegen.text.formatting import duration
from sitegen.text.htmlsafe import esc

WIDTH = 600.0
HEIGHT = 160.0
LEFT = 36.0
BOTTOM = 22.0
TOP = 12.0
_PLOT_H = HEIGHT - BOTTOM - TOP
_BASE = TOP + _PLOT_H
# The texts around the bars, the same in every histogram (formatted once).
_AXIS = f'<line class="tl-axis" x1="{LEFT}" y1="{num(_BASE)}" x2="{WIDTH - 8}" y2="{num(_BASE)}"/>'
_LOW = f'<text class="tl-time" x="{LEFT}" y="{num(_BASE + 16)}">'
_HIGH = f'<text class="tl-time" x="{WIDTH - 8}" y="{num(_BASE + 16)}" text-anchor="end">'
_PEAK = f'<text class="tl-time" x="{LEFT - 6}" y="{num(TOP + 8)}" text-anchor="end">'
_ZERO = f'<text class="tl-time" x="{LEFT - 6}" y="{num(_BASE)}" text-anchor="end">0</text>'
# Its width and height: drawn at full size (scrolled, not shrunk) its text stays readable.
_OPEN = (
    f'<svg class="histogram" viewBox="0 0 {num(WIDTH)} {num(HEIGHT)}" width="{num(WIDTH)}" '
    f'height="{num(HEIGHT)}" role="img" aria-label="'
)


# Bars at a given count have the same x and width, and bars of n tasks under a given peak
# the same y and height: format each once.
@functools.lru_cache(maxsize=64)
def _columns(count: int) -> tuple[tuple[str, ...], str]:
    """Return each bar's opening text up to its y, and the text from its y to its height."""
    bar_w = (WIDTH - LEFT - 8) / count
    return (
        tuple(f'<rect class="hist-bar" x="{num(LEFT + i * bar_w + 1)}" y="' for i in range(count)),
        f'" width="{num(max(1.0, bar_w - 2))}" height="',
    )


@functools.lru_cache(maxsize=4096)
def _height(n: int, peak: int) -> tuple[str, str]:
    """Return the y and height of a bar of ``n`` tasks when the tallest holds ``peak``."""
    h = _PLOT_H * n / peak
    return num(TOP + _PLOT_H - h), num(h)


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
    # Each value's bin is int((value - low) / width), computed and counted in C (no loop).
    for slot, n in Counter(
        map(int, map(truediv, map(sub, values, repeat(low)), repeat(width)))
    ).items():
        counts[slot if slot < last else last] += n
    peak = max(counts)
    opens, mid = _columns(count)
    parts = []
    for i, n in enumerate(counts):
        lo = low + i * width
        y, h = _height(n, peak)
        # Durations and counts only: nothing in the tip needs escaping.
        parts.append(
            f'{opens[i]}{y}{mid}{h}"><title>{duration(lo)} – {duration(lo + width)}: '
            f"{n} task{'s' if n != 1 else ''}</title></rect>"
        )
    return (
        f'{_OPEN}{esc(title)}" xmlns="http://www.w3.org/2000/svg">{"".join(parts)}{_AXIS}'
        f"{_LOW}{esc(duration(low))}</text>{_HIGH}{esc(duration(high))}</text>"
        f"{_PEAK}{peak}</text>{_ZERO}</svg>"
    )
