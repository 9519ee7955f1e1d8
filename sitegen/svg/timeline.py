"""Draw a job's task timeline: one lane per executor, one bar per TaskEnd record."""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from operator import attrgetter

from sitegen.eventlog.schema import TaskEnd
from sitegen.formatting import DURATIONS, duration
from sitegen.payload import task_status
from sitegen.svg.text import clip, esc, num

WIDTH = 1000.0
GUTTER = 150.0
RIGHT = 12.0
# Vertical positions are whole pixels: integers format fast and need no rounding.
AXIS = 22
BAR = 7
PITCH = 9
LANE_PAD = 5
MAX_ROWS = 48
COLOURS = 10
# A bar's text from its height to its task id.
_BAR_TIP = f'" height="{BAR}"><title>Task '
_ORDER = attrgetter("start_exec_time", "end_exec_time", "task_id")


def nice_step(span: float, ticks: int = 6) -> float:
    """Return a 1, 2 or 5 times 10^k step giving about ``ticks`` ticks over ``span``."""
    raw = max(span, 1.0) / ticks
    base = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if base * factor >= raw:
            return float(base * factor)
    return float(base * 10)


def _pack(tasks: list[TaskEnd]) -> list[tuple[int, TaskEnd]]:
    """Give each overlapping task its own row within the lane (the first free row)."""
    # Tasks come by start time, so a row that is free now stays free for every later
    # task: keep the free rows in a heap (lowest first) and the busy ones by end time.
    push, pop = heapq.heappush, heapq.heappop
    free: list[int] = []
    busy: list[tuple[int, int]] = []  # (end, row)
    rows = 0
    placed = []
    for task in sorted(tasks, key=_ORDER):
        start = task.start_exec_time
        while busy and busy[0][0] <= start:
            push(free, pop(busy)[1])
        if free:
            row = pop(free)
        elif rows < MAX_ROWS:
            row = rows
            rows += 1
        else:
            # Overflow shares the last row rather than growing forever (and frees nothing).
            placed.append((MAX_ROWS - 1, task))
            continue
        push(busy, (task.end_exec_time, row))
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
    lanes: dict[str, list[TaskEnd]] = defaultdict(list)
    t0 = t1 = 0
    for task in tasks:
        start = task.start_exec_time
        if start <= 0:
            continue
        end = task.end_exec_time if task.end_exec_time > start else start
        if not lanes:
            t0, t1 = start, end
        elif start < t0:
            t0 = start
        if end > t1:
            t1 = end
        lanes[task.executor_id].append(task)
    if not lanes:
        return ""
    span = max(t1 - t0, 1)
    scale = (WIDTH - GUTTER - RIGHT) / span
    # Bars are drawn in whole milliseconds since t0, inside a group that scales them to the
    # axis: integers format fast and lose nothing. A bar is at least one pixel wide.
    bars = f'<g class="tl-bars" transform="translate({num(GUTTER)} 0) scale({scale!r} 1)">'
    thinnest = math.ceil(1 / scale)
    # Per stage id: a bar's opening text up to its x (as is, and failed), and its tip's
    # stage part (they repeat across 800 bars).
    stage_texts: dict[int, tuple[str, str, str]] = {}

    body: list[str] = []
    y = AXIS
    for n, executor in enumerate(sorted(lanes)):
        placed = _pack(lanes[executor])
        rows = 1 + max(r for r, _ in placed)
        height = rows * PITCH + 2 * LANE_PAD
        band = "tl-band odd" if n % 2 else "tl-band"
        body.append(
            f'<g class="tl-lane" id="{lane_id(executor)}"><title>{esc(executor)}</title>'
            f'<rect class="{band}" x="0" y="{y}" width="{num(WIDTH)}" height="{height}"/>'
            f'<text class="tl-label" x="6" y="{num(y + height / 2 + 4)}">'
            f"{esc(clip(executor, 20))}</text>{bars}"
        )
        top = y + LANE_PAD
        # The text between a bar's x and width, per row: y is the same for every bar in it.
        row_ys = [f'" y="{top + r * PITCH}" width="' for r in range(rows)]
        for row, task in placed:
            start, end = task.start_exec_time, task.end_exec_time
            if end < start:
                end = start
            stage_id = task.stage_id
            ends = stage_texts.get(stage_id)
            if ends is None:
                cls = f"tl-bar c{colour_of(stage_id) % COLOURS}"
                ends = stage_texts[stage_id] = (
                    f'<rect class="{cls}" x="',
                    f'<rect class="{cls} failed" x="',
                    f" · stage {stage_id} · ",
                )
            head, failed_head, stage_tip = ends
            # The tip is short (the lane already names the executor; one tip per task), and
            # only the status text can need escaping.
            note = ""
            if task.status != "Successful":
                status = task_status(task.status)
                if status.failed:
                    head = failed_head
                if status.word != "Successful":
                    note = esc(f"\n{status.word}: {status.reason} {status.error}".rstrip(": "))
            took = end - start
            body.append(
                f"{head}{start - t0}{row_ys[row]}{took if took > thinnest else thinnest}"
                f"{_BAR_TIP}{task.task_id}{stage_tip}{DURATIONS[took]}{note}</title></rect>"
            )
        body.append("</g></g>")
        y += height
    height = y + 4
    step = nice_step(span)
    axis = [
        f'<line class="tl-axis" x1="{GUTTER}" y1="{AXIS - 4}" '
        f'x2="{WIDTH - RIGHT}" y2="{AXIS - 4}"/>'
    ]
    tick = 0.0
    while tick <= span:
        x_tick = GUTTER + tick * scale
        axis.append(
            f'<line class="tl-tick" x1="{num(x_tick)}" y1="{AXIS - 4}" '
            f'x2="{num(x_tick)}" y2="{height}"/>'
        )
        anchor = "end" if x_tick > WIDTH - 60 else "middle" if tick else "start"
        axis.append(
            f'<text class="tl-time" x="{num(x_tick)}" y="{AXIS - 8}" text-anchor="{anchor}">'
            f"{'+' if tick else ''}{duration(tick)}</text>"
        )
        tick += step
    return (
        f'<svg class="timeline" viewBox="0 0 {num(WIDTH)} {height}" role="img" '
        f'aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg">'
        f"{''.join(axis)}{''.join(body)}</svg>"
    )
