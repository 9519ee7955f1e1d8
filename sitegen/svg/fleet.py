"""Draw the fleet over time: a row per executor, a column per hour or day, its speed in colour."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sitegen.diagnose.fleet import DAY_MS, HEALTHY, FleetExecutor, bucket_ms
from sitegen.svg.text import num
from sitegen.text.formatting import plural, timestamp
from sitegen.text.htmlsafe import esc

LEFT = 150.0
RIGHT = 12.0
TOP = 8.0
ROW = 14.0
AXIS = 22.0
PLOT_W = 600.0
# More executors than this are a smear: the judged-bad ones are drawn first, then the busiest.
MAX_ROWS = 40
# A history too long for a column a day gets wider columns, a whole number of days each.
MAX_COLUMNS = 120
# Colours: no job then, at its peers' speed, slower and slower, failing on its own.
_NONE, _OK, _FAIL = "#eeeeee", "#9cc9a0", "#7b1fa2"
_SLOWER = ("#f6d38a", "#f0a04b", "#d9534f")


def _colour(ratio: float, failed: bool) -> str:
    """Return a cell's fill: failing on its own, else by how much slower than its peers."""
    if failed:
        return _FAIL
    if ratio < 1.15:
        return _OK
    return _SLOWER[0 if ratio < 1.4 else 1 if ratio < 2.0 else 2]


def chart(executors: Sequence[FleetExecutor]) -> str:
    """Return the SVG of the fleet over time; empty string when no executor has a cell."""
    shown = sorted(
        (e for e in executors if e.cells),
        key=lambda e: (e.verdict == HEALTHY, -e.jobs, e.executor_id),
    )[:MAX_ROWS]
    if not shown:
        return ""
    first = min(e.cells[0].at for e in shown)
    last = max(e.cells[-1].at for e in shown)
    width = bucket_ms(first, last)
    first -= first % width
    columns = (last - first) // width + 1
    if columns > MAX_COLUMNS:
        width = math.ceil(columns / MAX_COLUMNS) * width
        columns = (last - first) // width + 1
    cell_w = PLOT_W / columns
    height = TOP + ROW * len(shown) + AXIS
    unit = "hour" if width < DAY_MS else "day" if width == DAY_MS else f"{width // DAY_MS} days"
    title = f"Executors over time, a column per {unit}: slower than their peers in warmer colours"
    parts = [
        f'<svg class="fleet" viewBox="0 0 {num(LEFT + PLOT_W + RIGHT)} {num(height)}" '
        f'role="img" aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for row, e in enumerate(shown):
        y = TOP + row * ROW
        parts.append(
            f'<text class="tl-time" x="{num(LEFT - 6)}" y="{num(y + ROW - 4)}" '
            f'text-anchor="end">{esc(e.executor_id[:24])}</text>'
        )
        by_column: dict[int, list[float]] = {}
        for c in e.cells:
            sums = by_column.setdefault((c.at - first) // width, [0, 0.0, 0, 0])
            sums[0] += c.compared
            sums[1] += c.log_sum
            sums[2] += c.own_failed
            sums[3] += c.jobs
        parts.append(
            f'<rect x="{num(LEFT)}" y="{num(y + 1)}" width="{num(PLOT_W)}" '
            f'height="{num(ROW - 2)}" fill="{_NONE}"/>'
        )
        for column, (compared, log_sum, failed, jobs) in sorted(by_column.items()):
            ratio = math.exp(log_sum / compared) if compared else 1.0
            at = first + column * width
            parts.append(
                f'<rect x="{num(LEFT + column * cell_w)}" y="{num(y + 1)}" '
                f'width="{num(max(cell_w, 1.0))}" height="{num(ROW - 2)}" '
                f'fill="{_colour(ratio, bool(failed) and e.verdict == "failing")}">'
                f"<title>{esc(e.executor_id)} from {esc(timestamp(at))}: "
                f"{plural(int(jobs), 'job')}, "
                f"{ratio:.2f}x its peers' time, {int(failed)} failed attempts of its own"
                "</title></rect>"
            )
        if e.window is not None:
            begin = max(0.0, (e.window[0] - first) / width * cell_w)
            end = min(PLOT_W, (e.window[1] - first) / width * cell_w)
            parts.append(
                f'<rect class="fleet-window" x="{num(LEFT + begin)}" y="{num(y + 0.5)}" '
                f'width="{num(max(end - begin, 1.0))}" height="{num(ROW - 1)}" fill="none" '
                'stroke="#222" stroke-width="1.5"/>'
            )
    base = TOP + ROW * len(shown)
    parts.append(
        f'<text class="tl-time" x="{num(LEFT)}" y="{num(base + 15)}">{esc(timestamp(first))}</text>'
    )
    parts.append(
        f'<text class="tl-time" x="{num(LEFT + PLOT_W)}" y="{num(base + 15)}" '
        f'text-anchor="end">{esc(timestamp(first + columns * width))}</text>'
    )
    parts.append("</svg>")
    return "".join(parts)
