"""Draw a recurring job's duration per run over time: one point per run, failed runs marked."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sitegen.svg.text import num
from sitegen.text.formatting import duration, timestamp
from sitegen.text.htmlsafe import esc

WIDTH = 720.0
HEIGHT = 200.0
LEFT = 56.0
RIGHT = 12.0
TOP = 12.0
BOTTOM = 24.0
_PLOT_W = WIDTH - LEFT - RIGHT
_PLOT_H = HEIGHT - TOP - BOTTOM
_BASE = TOP + _PLOT_H
# A chart of more runs than this is a smear: it draws the latest ones (the table has all).
MAX_POINTS = 500


@dataclass(frozen=True)
class Point:
    """One run: when it started, how long it took, how it ended, and where it links."""

    job_id: str
    start_ms: int
    duration_ms: int
    failed: bool = False
    regressed: bool = False


def chart(points: Sequence[Point], title: str, href: Callable[[str], str]) -> str:
    """Return the SVG chart of ``points`` (oldest first); empty string without points."""
    if not points:
        return ""
    points = points[-MAX_POINTS:]
    first, last = points[0].start_ms, points[-1].start_ms
    span = last - first
    peak = max(1, max(p.duration_ms for p in points))

    def x(p: Point) -> float:
        return LEFT + (_PLOT_W / 2 if span <= 0 else _PLOT_W * (p.start_ms - first) / span)

    def y(p: Point) -> float:
        return _BASE - _PLOT_H * p.duration_ms / peak

    line = " ".join(f"{num(x(p))},{num(y(p))}" for p in points if not p.failed)
    parts = [
        f'<svg class="trend" viewBox="0 0 {num(WIDTH)} {num(HEIGHT)}" role="img" '
        f'aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg">',
        f'<line class="tl-axis" x1="{LEFT}" y1="{num(_BASE)}" x2="{num(WIDTH - RIGHT)}" '
        f'y2="{num(_BASE)}"/>',
        f'<text class="tl-time" x="{num(LEFT - 6)}" y="{num(TOP + 8)}" text-anchor="end">'
        f"{esc(duration(peak))}</text>",
        f'<text class="tl-time" x="{num(LEFT - 6)}" y="{num(_BASE)}" text-anchor="end">0</text>',
        f'<text class="tl-time" x="{LEFT}" y="{num(_BASE + 16)}">{esc(timestamp(first))}</text>',
    ]
    if span > 0:
        parts.append(
            f'<text class="tl-time" x="{num(WIDTH - RIGHT)}" y="{num(_BASE + 16)}" '
            f'text-anchor="end">{esc(timestamp(last))}</text>'
        )
    if line:
        parts.append(f'<polyline class="trend-line" points="{line}"/>')
    for p in points:
        kind = "failed" if p.failed else "regressed" if p.regressed else "ok"
        word = "failed" if p.failed else "regressed" if p.regressed else "succeeded"
        tip = f"{p.job_id}: {duration(p.duration_ms)}, {word}, started {timestamp(p.start_ms)}"
        cx, cy = num(x(p)), num(y(p))
        radius = 5 if p.regressed else 3.5
        mark = (
            f'<path class="trend-{kind}" d="M{cx} {cy}m-4 -4l8 8m0 -8l-8 8"/>'
            if p.failed
            else f'<circle class="trend-{kind}" cx="{cx}" cy="{cy}" r="{radius}"/>'
        )
        parts.append(f'<a href="{esc(href(p.job_id))}"><title>{esc(tip)}</title>{mark}</a>')
    parts.append("</svg>")
    return "".join(parts)
