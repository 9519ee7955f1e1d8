"""Draw a job's task timeline: one lane per executor, one bar per TaskEnd record."""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Callable, Sequence, Set
from operator import attrgetter

from sitegen.diagnose.replanned import DROPPED
from sitegen.eventlog.payload import task_status
from sitegen.eventlog.schema import TaskEnd
from sitegen.svg.text import clip, num
from sitegen.text.formatting import DURATIONS, Memo, duration
from sitegen.text.htmlsafe import esc

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


def _stage_texts(stage_id: int, colour: int, dropped: bool = False) -> tuple[str, str, str]:
    """Return a stage's bar openings up to x (as is, and failed) and its tip's stage part."""
    cls = f"tl-bar c{colour % COLOURS}"
    said = f" ({DROPPED})" if dropped else ""
    return (
        f'<rect class="{cls}" x="',
        # Failed bars take keyboard focus: the page shows a focused bar's tip.
        f'<rect class="{cls} failed" tabindex="0" x="',
        # A character reference, not "·": the picture stays ASCII, so the
        # page splices its 100 KB as bytes without widening (see fragments).
        f" &#183; stage {stage_id}{said} &#183; ",
    )


def _lane_bars(
    lane: Sequence[TaskEnd],
    top: int,
    t0: int,
    thinnest: int,
    stage_texts: dict[int, tuple[str, str, str]],
    colour_of: Callable[[int], int],
    body: list[str],
    marked: Set[tuple[int, int, int]],
) -> int:
    """Append one lane's bars to ``body``, packed into rows from ``top``; return the rows."""
    push, pop = heapq.heappush, heapq.heappop
    width_tip, took_end = _WIDTH_TIP, _TOOK_END  # local: read once per bar
    # The text between a bar's x and width, per row: y is the same for every bar in it.
    row_ys: list[str] = []
    # Each task takes the first free row (packed and drawn in one pass). Tasks come by
    # start, so a row that is free now stays free for every later task: keep the free
    # rows sorted high to low (the lowest pops off the end; they free up in bunches) and
    # the busy ones in a heap by end time.
    free: list[int] = []
    busy: list[tuple[int, int]] = []  # (end, row)
    # Each row's latest end: a shared row (below) leaves a stale entry in ``busy``.
    row_end: list[int] = []
    spilled = 0
    last_stage = None  # bars come in runs of one stage: look its texts up per run
    head = failed_head = stage_tip = ""
    for task in lane:
        start, end = task.start_exec_time, task.end_exec_time
        if busy and busy[0][0] <= start:
            while busy and busy[0][0] <= start:
                until, row = pop(busy)
                if row_end[row] == until:
                    free.append(row)
            free.sort(reverse=True)
        if free:
            row = free.pop()
            row_end[row] = end
            push(busy, (end, row))
        elif len(row_ys) < MAX_ROWS:
            row = len(row_ys)
            row_ys.append(f'" y="{top + row * PITCH}" width="')
            row_end.append(end)
            push(busy, (end, row))
        else:
            # More tasks at once than rows: they take the rows in turn, so the overlap
            # spreads evenly over the lane instead of piling into one row.
            row = spilled % MAX_ROWS
            spilled += 1
            if end > row_end[row]:
                row_end[row] = end
                push(busy, (end, row))
        stage_id = task.stage_id
        if stage_id != last_stage:
            last_stage = stage_id
            texts = stage_texts.get(stage_id)
            if texts is None:
                texts = stage_texts[stage_id] = _stage_texts(stage_id, colour_of(stage_id))
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
    return len(row_ys)


def _lane_head(n: int, executor: str, y: int, height: int, lane_id: str, bars: str) -> str:
    """Return a lane's opening: its band, its label and the opening of its bars' group."""
    band = "tl-band odd" if n % 2 else "tl-band"
    return (
        f'<g class="tl-lane" id="{lane_id}"><title>{esc(executor)}</title>'
        f'<rect class="{band}" x="0" y="{y}" width="{num(WIDTH)}" height="{height}"/>'
        f'<text class="tl-label" x="6" y="{num(y + height / 2 + 4)}">'
        f"{esc(clip(executor, 20))}</text>{bars}"
    )


def _axis(span: int, scale: float, height: int) -> str:
    """Return the time axis: its line, and a tick with its label every ``nice_step``."""
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
    return "".join(axis)


def timeline(
    tasks: Sequence[TaskEnd],
    colour_of: Callable[[int], int],
    lane_id: Callable[[str], str],
    title: str,
    window: tuple[int, int] | None = None,
    marked: Set[tuple[int, int, int]] = frozenset(),
    dropped: Set[int] = frozenset(),
) -> str:
    """Return the timeline SVG; empty string when there are no task records.

    ``window`` widens the time axis to that span (the job's, when only some bars are drawn).
    ``marked`` holds the stragglers' (stage, task, start): their bars are outlined and
    their tooltips say "straggler". The tooltips of the stages in ``dropped`` (a replan
    dropped them: diagnose.replanned) say so.
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
    # Per stage id (they repeat across 800 bars): see _stage_texts.
    stage_texts = {sid: _stage_texts(sid, colour_of(sid), dropped=True) for sid in dropped}
    body: list[str] = []
    y = AXIS
    for n, (executor, lane) in enumerate(lanes):
        # The lane's head holds its height, known once its bars are packed: keep its place.
        head_at = len(body)
        body.append("")
        rows = _lane_bars(lane, y + LANE_PAD, t0, thinnest, stage_texts, colour_of, body, marked)
        height = rows * PITCH + 2 * LANE_PAD
        body[head_at] = _lane_head(n, executor, y, height, lane_id(executor), bars)
        body.append("</g></g>")
        y += height
    height = y + 4
    return (
        f'<svg class="timeline" viewBox="0 0 {num(WIDTH)} {height}" width="{num(WIDTH)}" '
        f'height="{height}" role="img" '
        f'aria-label="{esc(title)}" xmlns="http://www.w3.org/2000/svg">'
        f"{_axis(span, scale, height)}{''.join(body)}</svg>"
    )
