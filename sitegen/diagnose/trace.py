"""A job's task attempts in the Chrome Trace Event format, for Perfetto or chrome://tracing.

One process per executor (named by ``process_name`` metadata) with each attempt a complete
(``"ph": "X"``) event on the first free thread of that process, so overlapping attempts
never share a track; and one "Stages" process with a span per stage. Times are
microseconds since the Unix epoch (the log's milliseconds times 1,000: exact).
"""

from __future__ import annotations

import heapq
from operator import attrgetter

import msgspec

from sitegen.diagnose.failures import error_text
from sitegen.diagnose.tasks import RowIndex
from sitegen.eventlog.schema import TaskEnd
from sitegen.render.payload import Stage, TaskSummary, as_int, task_status

STAGES_PID = 0
_ORDER = attrgetter("start_exec_time", "end_exec_time", "stage_id", "task_id")


class TaskArgs(msgspec.Struct, omit_defaults=True, gc=False):
    """What a task event's details pane shows."""

    stage: int
    task: int
    status: str
    partition: list[int] | int | None = None
    input_rows: int | None = None
    output_rows: int | None = None
    error: str | None = None


class StageArgs(msgspec.Struct, gc=False):
    """What a stage span's details pane shows."""

    stage: str
    status: str
    attempts: int


class Event(msgspec.Struct, omit_defaults=True, gc=False):
    """One trace event (fields as the Trace Event format names them)."""

    name: str
    ph: str
    pid: int
    tid: int = 0
    ts: int | None = None
    dur: int | None = None
    cat: str | None = None
    args: TaskArgs | StageArgs | dict[str, str | int] | None = None


class Trace(msgspec.Struct, gc=False):
    """The whole file: the events, and which job they are."""

    traceEvents: list[Event]  # the format's names
    displayTimeUnit: str
    otherData: dict[str, str]


def _meta(name: str, pid: int, label: str, tid: int = 0) -> Event:
    """Return a metadata event naming a process or thread."""
    return Event(name=name, ph="M", pid=pid, tid=tid, args={"name": label})


def trace(job_id: str, tasks: list[TaskEnd], stages: list[Stage]) -> bytes:
    """Return ``trace.json`` for one job: every attempt that ran, and every stage's span."""
    rows: dict[int, tuple[list[TaskSummary], RowIndex]] = {}
    for stage in stages:
        sid = as_int(stage.stage_id)
        if sid is not None and sid not in rows:
            rows[sid] = (stage.task_list, RowIndex(stage.task_list))
    events: list[Event] = [_meta("process_name", STAGES_PID, "Stages")]
    executors = sorted({t.executor_id for t in tasks})
    pids = {name: n for n, name in enumerate(executors, 1)}
    for name, pid in pids.items():
        events.append(_meta("process_name", pid, f"executor {name}"))
        # Executors in id order, below the stages.
        sort: dict[str, str | int] = {"sort_index": pid}
        events.append(Event(name="process_sort_index", ph="M", pid=pid, args=sort))
    free: dict[str, list[int]] = {name: [] for name in executors}
    busy: dict[str, list[tuple[int, int]]] = {name: [] for name in executors}
    used: dict[str, int] = dict.fromkeys(executors, 0)
    spans: dict[int, list[int]] = {}  # stage id: [first start, last end, attempts]
    for task in sorted((t for t in tasks if t.start_exec_time > 0), key=_ORDER):
        start, end = task.start_exec_time, max(task.start_exec_time, task.end_exec_time)
        name = task.executor_id
        # The first thread of the executor free at this start (as the timeline packs lanes).
        heap, spare = busy[name], free[name]
        while heap and heap[0][0] <= start:
            heapq.heappush(spare, heapq.heappop(heap)[1])
        if spare:
            thread = heapq.heappop(spare)
        else:
            thread = used[name] = used[name] + 1
        heapq.heappush(heap, (end, thread))
        found = rows.get(task.stage_id)
        row = None
        if found is not None:
            at = found[1].find(task)
            row = found[0][at] if at is not None else None
        status = task_status(task.status)
        events.append(
            Event(
                name=f"stage {task.stage_id} task {task.task_id}"
                + (" (failed)" if status.failed else ""),
                ph="X",
                pid=pids[name],
                tid=thread,
                ts=start * 1000,
                dur=(end - start) * 1000,
                cat="task,failed" if status.failed else "task",
                args=TaskArgs(
                    stage=task.stage_id,
                    task=task.task_id,
                    status=status.word,
                    partition=row.partition_id if row is not None else None,
                    input_rows=row.input_rows if row is not None else None,
                    output_rows=row.output_rows if row is not None else None,
                    error=error_text(status) if status.failed else None,
                ),
            )
        )
        span = spans.get(task.stage_id)
        if span is None:
            spans[task.stage_id] = [start, end, 1]
        else:
            span[0] = min(span[0], start)
            span[1] = max(span[1], end)
            span[2] += 1
    status_of = {as_int(s.stage_id): s.stage_status for s in stages}
    for n, (sid, (first, last, attempts)) in enumerate(sorted(spans.items()), 1):
        # A thread per stage: stages run in parallel, and spans on one thread must nest.
        events.append(_meta("thread_name", STAGES_PID, f"stage {sid}", tid=n))
        events.append(
            Event(
                name=f"stage {sid}",
                ph="X",
                pid=STAGES_PID,
                tid=n,
                ts=first * 1000,
                dur=(last - first) * 1000,
                cat="stage",
                args=StageArgs(str(sid), status_of.get(sid, "Unknown"), attempts),
            )
        )
    return msgspec.json.encode(Trace(events, "ms", {"job_id": job_id}))
