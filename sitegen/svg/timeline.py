"""Draw a job's task timeline: one lane per executor, one bar per TaskEnd record."""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Callable, Sequence, Set
from operator import attrgetter

from sitegen.eventlog.schema import TaskEnd
from sitegen.render.formatting import DURATIONS, Memo, duration
from sitegen.render.payload import task_status
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
_END = attrgetter("end_exec_time")
# A bar's width with the text after it up to the task id, and its duration with the
# closing tags: both repeat across bars and jobs, so a lookup replaces formatting them.
_WIDTH_TIP = Memo(lambda width: f"{width}{_BAR_TIP}")
_TOOK_END = Memo(lambda took: f"{DURATIONS[took]}</title></rect>")


def nice_step(span: float, ticks: int = 6) -> float:
    """Return a 1, 2 or 5 times 10^k step giving about ``ticks`` ticks over ``span``."""
    raw = max(span, 1.0) / ticks
    base = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if base * factor >= raw:
            return float(base * factor)
    return float(base * 10)


def _lanes(tasks: Sequence[TaskEnd]) -> tuple[list[tuple[str, list[TaskEnd]]], int, int]:
    """Group the tasks that ran into lanes by executor; return them and the time span.

    Lanes come by executor id, each lane's tasks by start, end and task id (the order
    bars are packed and drawn in). A record without an execution start (0: never ran)
    has no bar, and must not stretch the time axis back to 1970.
    """
    by_executor: dict[str, list[TaskEnd]] = defaultdict(list)
    for task in tasks:
        by_executor[task.executor_id].append(task)
    lanes: list[tuple[str, list[TaskEnd]]] = []
    t0 = t1 = 0
    for executor in sorted(by_executor):
        lane = by_executor[executor]
        # Sorting per lane is cheaper than one sort of them all (n log n).
        lane.sort(key=_ORDER)
        if lane[0].start_exec_time <= 0:  # sorted: the records that never ran come first
            lane = [task for task in lane if task.start_exec_time > 0]
            if not lane:
                continue
        # A bar ends at its end, or at its start when the clock says it ended before that.
        first = lane[0].start_exec_time
        last = max(lane[-1].start_exec_time, max(map(_END, lane)))
        if not lanes or first < t0:
            t0 = first
        if not lanes or last > t1:
            t1 = last
        lanes.append((executor, lane))
    return lanes, t0, t1


def extent(tasks: Sequence[TaskEnd]) -> tuple[int, int] | None:
    """Return the time span of the attempts that ran (as the axis spans it); None if none ran."""
    ran = [t for t in tasks if t.start_exec_time > 0]
    if not ran:
        return None
    return (
        min(t.start_exec_time for t in ran),
        max(max(t.start_exec_time, t.end_exec_time) for t in ran),
    )


def timeline(
    tasks: Sequence[TaskEnd],
    colour_of: Callable[[int], int],
    lane_id: Callable[[str], str],
    title: str,
    window: tuple[int, int] | None = None,
    marked: Set[tuple[int, int, int]] = frozenset(),
) -> str:
    """Return the timeline SVG; empty string when there are no task records.

    ``window`` widens the time axis to that span (the job's, when only some bars are drawn).
    ``marked`` holds the stragglers' (stage, task, start): their bars are outlined and
    their tooltips say "straggler".
    """
    lanes, t0, t1 = _lanes(tasks)
    if not lanes:
        return ""
    if window is not None:
        t0, t1 = min(t0, window[0]), max(t1, window[1])
    span = max(t1 - t0, 1)
    scale = (WIDTH - GUTTER - RIGHT) / span
    # Bars are drawn in whole milliseconds since t0, inside a group that scales them to the
    # axis: integers format fast and lose nothing. A bar is at least one pixel wide.
    bars = f'<g class="tl-bars" transform="translate({num(GUTTER)} 0) scale({scale!r} 1)">'
    thinnest = math.ceil(1 / scale)
    # Per stage id: a bar's opening text up to its x (as is, and failed), and its tip's
    # stage part (they repeat across 800 bars).
    stage_texts: dict[int, tuple[str, str, str]] = {}
    push, pop = heapq.heappush, heapq.heappop
    width_tip, took_end = _WIDTH_TIP, _TOOK_END  # local: read once per bar

    body: list[str] = []
    y = AXIS
    for n, (executor, lane) in enumerate(lanes):
        # The lane's head holds its height, known once its bars are packed: keep its place.
        head_at = len(body)
        body.append("")
        top = y + LANE_PAD
        # The text between a bar's x and width, per row: y is the same for every bar in it.
        row_ys: list[str] = []
        # Each task takes the first free row (packed and drawn in one pass). Tasks come by
        # start, so a row that is free now stays free for every later task: keep the free
        # rows sorted high to low (the lowest pops off the end; they free up in bunches) and
        # the busy ones in a heap by end time.
        free: list[int] = []
        busy: list[tuple[int, int]] = []  # (end, row)
        last_stage = None  # bars come in runs of one stage: look its texts up per run
        head = failed_head = stage_tip = ""
        for task in lane:
            start, end = task.start_exec_time, task.end_exec_time
            if busy and busy[0][0] <= start:
                while busy and busy[0][0] <= start:
                    free.append(pop(busy)[1])
                free.sort(reverse=True)
            if free:
                row = free.pop()
                push(busy, (end, row))
            elif len(row_ys) < MAX_ROWS:
                row = len(row_ys)
                row_ys.append(f'" y="{top + row * PITCH}" width="')
                push(busy, (end, row))
            else:
                # Overflow shares the last row rather than growing forever (and frees nothing).
                row = MAX_ROWS - 1
            stage_id = task.stage_id
            if stage_id != last_stage:
                last_stage = stage_id
                texts = stage_texts.get(stage_id)
                if texts is None:
                    cls = f"tl-bar c{colour_of(stage_id) % COLOURS}"
                    texts = stage_texts[stage_id] = (
                        f'<rect class="{cls}" x="',
                        f'<rect class="{cls} failed" x="',
                        # A character reference, not "·": the picture stays ASCII, so the
                        # page splices its 100 KB as bytes without widening (see fragments).
                        f" &#183; stage {stage_id} &#183; ",
                    )
                head, failed_head, stage_tip = texts
            took = end - start if end > start else 0
            if marked and (stage_id, task.task_id, start) in marked:
                body.append(
                    f"{head[:-5]} straggler{head[-5:]}{start - t0}{row_ys[row]}"
                    f"{width_tip[took if took > thinnest else thinnest]}"
                    f"{task.task_id}{stage_tip}{DURATIONS[took]} &#183; straggler</title></rect>"
                )
                continue
            if task.status == "Successful":
                body.append(
                    f"{head}{start - t0}{row_ys[row]}"
                    f"{width_tip[took if took > thinnest else thinnest]}"
                    f"{task.task_id}{stage_tip}{took_end[took]}"
                )
                continue
            # The tip is short (the lane already names the executor; one tip per task), and
            # only the status text can need escaping.
            status = task_status(task.status)
            note = ""
            if status.word != "Successful":
                note = esc(f"\n{status.word}: {status.reason} {status.error}".rstrip(": "))
            body.append(
                f"{failed_head if status.failed else head}{start - t0}{row_ys[row]}"
                f"{width_tip[took if took > thinnest else thinnest]}"
                f"{task.task_id}{stage_tip}{DURATIONS[took]}{note}</title></rect>"
            )
        height = len(row_ys) * PITCH + 2 * LANE_PAD
        band = "tl-band odd" if n % 2 else "tl-band"
        body[head_at] = (
            f'<g class="tl-lane" id="{lane_id(executor)}"><title>{esc(executor)}</title>'
            f'<rect class="{band}" x="0" y="{y}" width="{num(WIDTH)}" height="{height}"/>'
            f'<text class="tl-label" x="6" y="{num(y + height / 2 + 4)}">'
            f"{esc(clip(executor, 20))}</text>{bars}"
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
