"""Draw a job's task timeline: one lane per executor, one bar per TaskEnd record."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence

from sitegen.eventlog.schema import TaskEnd
from sitegen.formatting import duration
from sitegen.payload import task_status
from sitegen.svg.text import clip, esc, num

WIDTH = 1000.0
GUTTER = 150.0
RIGHT = 12.0
AXIS = 22.0
BAR = 7
PITCH = 9.0
LANE_PAD = 5.0
MAX_ROWS = 48
COLOURS = 10


def nice_step(span: float, ticks: int = 6) -> float:
    """Return a 1, 2 or 5 times 10^k step giving about ``ticks`` ticks over ``span``."""
    raw = max(span, 1.0) / ticks
    base = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if base * factor >= raw:
            return float(base * factor)
    return float(base * 10)


def _pack(tasks: list[TaskEnd]) -> list[tuple[int, TaskEnd]]:
    """Give each overlapping task its own row within the lane (first free row)."""
    rows_end: list[int] = []
    placed = []
    for task in sorted(tasks, key=lambda t: (t.start_exec_time, t.end_exec_time, t.task_id)):
        for row, end in enumerate(rows_end):
            if end <= task.start_exec_time:
                rows_end[row] = task.end_exec_time
                break
        else:
            row = len(rows_end)
            if row < MAX_ROWS:
                rows_end.append(task.end_exec_time)
            else:
                row = MAX_ROWS - 1  # overflow shares the last row rather than growing forever
        placed.append((row, task))
    return placed


def timeline(
    tasks: Sequence[TaskEnd],
    colour_of: Callable[[int], int],
    lane_id: Callable[[str], str],
    title: str,
) -> str:
    """Return the timeline SVG; empty string when there are no task records."""
    # A record without an execution start (0: never ran) has no bar, and must not stretch
    # the time axis back to 1970.
    tasks = [t for t in tasks if t.start_exec_time > 0]
    if not tasks:
        return ""
    t0 = min(t.start_exec_time for t in tasks)
    t1 = max(max(t.end_exec_time, t.start_exec_time) for t in tasks)
    span = max(t1 - t0, 1)
    scale = (WIDTH - GUTTER - RIGHT) / span
    lanes: dict[str, list[TaskEnd]] = defaultdict(list)
    for task in tasks:
        lanes[task.executor_id].append(task)

    body: list[str] = []
    y = AXIS
    for n, executor in enumerate(sorted(lanes)):
        placed = _pack(lanes[executor])
        rows = 1 + max(r for r, _ in placed)
        height = rows * PITCH + 2 * LANE_PAD
        body.append(f'<g class="tl-lane" id="{lane_id(executor)}">')
        body.append(f"<title>{esc(executor)}</title>")
        band = "tl-band odd" if n % 2 else "tl-band"
        body.append(
            f'<rect class="{band}" x="0" y="{num(y)}" width="{num(WIDTH)}" height="{num(height)}"/>'
        )
        body.append(
            f'<text class="tl-label" x="6" y="{num(y + height / 2 + 4)}">'
            f"{esc(clip(executor, 20))}</text>"
        )
        for row, task in placed:
            start, end = task.start_exec_time, max(task.end_exec_time, task.start_exec_time)
            status = task_status(task.status)
            cls = f"tl-bar c{colour_of(task.stage_id) % COLOURS}"
            if status.failed:
                cls += " failed"
            # Short: the lane already names the executor, and there is one tip per task.
            tip = f"Task {task.task_id} · stage {task.stage_id} · {duration(end - start)}"
            if status.word != "Successful":
                tip += f"\n{status.word}: {status.reason} {status.error}".rstrip(": ")
            body.append(
                f'<rect class="{cls}" x="{num(GUTTER + (start - t0) * scale)}" '
                f'y="{num(y + LANE_PAD + row * PITCH)}" '
                f'width="{num(max(1.0, (end - start) * scale))}" '
                f'height="{BAR}"><title>{esc(tip)}</title></rect>'
            )
        body.append("</g>")
        y += height
    height = y + 4
    step = nice_step(span)
    axis = [
        f'<line class="tl-axis" x1="{GUTTER}" y1="{AXIS - 4}" '
        f'x2="{WIDTH - RIGHT}" y2="{AXIS - 4}"/>'
    ]
    tick = 0.0
    while tick <= span:
        x = GUTTER + tick * scale
        axis.append(
            f'<line class="tl-tick" x1="{num(x)}" y1="{AXIS - 4}" '
            f'x2="{num(x)}" y2="{num(height)}"/>'
        )
        anchor = "end" if x > WIDTH - 60 else "middle" if tick else "start"
        axis.append(
            f'<text class="tl-time" x="{num(x)}" y="{AXIS - 8}" text-anchor="{anchor}">'
            f"{'+' if tick else ''}{duration(tick)}</text>"
        )
        tick += step
    return (
        f'<svg class="timeline" viewBox="0 0 {num(WIDTH)} {num(height)}" role="img" '
        f'aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg">'
        f"{''.join(axis)}{''.join(body)}</svg>"
    )
