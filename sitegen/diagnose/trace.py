"""A job's task attempts in the Chrome Trace Event format, for Perfetto or chrome://tracing.

One process per executor (named by ``process_name`` metadata) with each attempt a complete
(``"ph": "X"``) event on the first free thread of that process, so overlapping attempts
never share a track; and one "Stages" process with a span per stage. Times are
microseconds since the Unix epoch (the log's milliseconds times 1,000: exact).

The events are written as text, one f-string each: a job may have 800,000 attempts, and
a struct per event cost the map step more than its task table.
"""

from __future__ import annotations

import heapq
from operator import attrgetter

import msgspec

from sitegen.diagnose.failed_attempts import error_text
from sitegen.diagnose.statuses import NO_CHANGE, EndedStatuses
from sitegen.eventlog.payload import Stage, TaskSummary, as_int, task_status
from sitegen.eventlog.schema import TaskEnd

STAGES_PID = 0
_START = attrgetter("start_exec_time")
_json = msgspec.json.encode


def _text(value: str) -> str:
    """Return a JSON string literal (log text may hold quotes, backslashes, controls)."""
    return _json(value).decode()


def _meta(name: str, pid: int, label: str, tid: int = 0) -> str:
    """Return a metadata event naming a process or thread."""
    return f'{{"name":"{name}","ph":"M","pid":{pid},"tid":{tid},"args":{{"name":{_text(label)}}}}}'


class _Rows:
    """Find an attempt's payload row: same id and times; else same times; else same id."""

    def __init__(self, rows: list[TaskSummary]) -> None:
        self.rows = rows
        self.exact = {(r.id, r.start_exec_time, r.end_exec_time): r for r in reversed(rows)}
        self._others: tuple[dict[object, TaskSummary], dict[object, TaskSummary]] | None = None

    def find(self, end: TaskEnd) -> TaskSummary | None:
        """Return the row of ``end``, or None (the fallbacks are indexed on first use)."""
        row = self.exact.get((end.task_id, end.start_exec_time, end.end_exec_time))
        if row is not None:
            return row
        if self._others is None:
            reverse = self.rows[::-1]  # the first row wins, as setdefault would
            self._others = (
                {(r.start_exec_time, r.end_exec_time): r for r in reverse},
                {r.id: r for r in reverse},
            )
        by_time, by_id = self._others
        return by_time.get((end.start_exec_time, end.end_exec_time)) or by_id.get(end.task_id)


def trace(
    job_id: str, tasks: list[TaskEnd], stages: list[Stage], statuses: EndedStatuses = NO_CHANGE
) -> bytes:
    """Return ``trace.json`` for one job: every attempt that ran, and every stage's span.

    A stage's status is the one the pages show (``statuses``: a failed job's stage that the
    payload still calls Running is Failed).
    """
    rows: dict[int, _Rows] = {}
    for stage in stages:
        sid = as_int(stage.stage_id)
        if sid is not None and sid not in rows:
            rows[sid] = _Rows(stage.task_list)
    events = [_meta("process_name", STAGES_PID, "Stages")]
    executors = sorted({t.executor_id for t in tasks})
    pids = {name: n for n, name in enumerate(executors, 1)}
    for name, pid in pids.items():
        events.append(_meta("process_name", pid, f"executor {name}"))
        # Executors in id order, below the stages.
        events.append(
            f'{{"name":"process_sort_index","ph":"M","pid":{pid},"tid":0,'
            f'"args":{{"sort_index":{pid}}}}}'
        )
    # Per executor: its pid and its threads as a heap of (end of its last attempt, thread).
    lanes: dict[str, tuple[int, list[tuple[int, int]]]] = {
        name: (pids[name], []) for name in executors
    }
    spans: dict[int, list[int]] = {}  # stage id: [first start, last end, attempts]
    push, replace = heapq.heappush, heapq.heapreplace
    ran = [t for t in tasks if t.start_exec_time > 0]
    ran.sort(key=_START)  # stable: ties keep the log's order
    append = events.append
    for task in ran:
        start, end = task.start_exec_time, task.end_exec_time
        if end < start:
            end = start
        sid, tid = task.stage_id, task.task_id
        pid, threads = lanes[task.executor_id]
        # The thread that fell free first, if it is free by now; else a new one.
        if threads and threads[0][0] <= start:
            thread = threads[0][1]
            replace(threads, (end, thread))
        else:
            thread = len(threads) + 1
            push(threads, (end, thread))
        index = rows.get(sid)
        row = None
        if index is not None:
            row = index.exact.get((tid, start, task.end_exec_time)) or index.find(task)
        if row is None:
            extra = ""
        else:
            # Inlined: three fields per attempt, and a job may have 800,000 attempts.
            parts = row.partition_id
            if isinstance(parts, list):
                part = f"[{parts[0]}]" if len(parts) == 1 else f"[{','.join(map(str, parts))}]"
            else:
                part = "null" if parts is None else str(parts)
            n_in, n_out = row.input_rows, row.output_rows
            extra = (
                f',"partition":{part},'
                f'"input_rows":{"null" if n_in is None else n_in},'
                f'"output_rows":{"null" if n_out is None else n_out}'
            )
        if task.status == "Successful":
            append(
                f'{{"name":"stage {sid} task {tid}","ph":"X","pid":{pid},"tid":{thread},'
                f'"ts":{start * 1000},"dur":{(end - start) * 1000},"cat":"task",'
                f'"args":{{"stage":{sid},"task":{tid},"status":"Successful"{extra}}}}}'
            )
        else:
            status = task_status(task.status)
            head, cat = f"stage {sid} task {tid}", "task"
            if status.failed:
                head, cat = f"{head} (failed)", "task,failed"
                extra += f',"error":{_text(error_text(status))}'
            append(
                f'{{"name":"{head}","ph":"X","pid":{pid},"tid":{thread},'
                f'"ts":{start * 1000},"dur":{(end - start) * 1000},"cat":"{cat}",'
                f'"args":{{"stage":{sid},"task":{tid},"status":{_text(status.word)}{extra}}}}}'
            )
        span = spans.get(sid)
        if span is None:
            spans[sid] = [start, end, 1]
        else:
            if start < span[0]:
                span[0] = start
            if end > span[1]:
                span[1] = end
            span[2] += 1
    status_of = {
        as_int(s.stage_id): statuses.stage(s.stage_id, s.stage_status).word for s in stages
    }
    for n, (sid, (first, last, attempts)) in enumerate(sorted(spans.items()), 1):
        # A thread per stage: stages run in parallel, and spans on one thread must nest.
        events.append(_meta("thread_name", STAGES_PID, f"stage {sid}", tid=n))
        events.append(
            f'{{"name":"stage {sid}","ph":"X","pid":{STAGES_PID},"tid":{n},'
            f'"ts":{first * 1000},"dur":{(last - first) * 1000},"cat":"stage",'
            f'"args":{{"stage":"{sid}","status":{_text(status_of.get(sid, "Unknown"))},'
            f'"attempts":{attempts}}}}}'
        )
    body = ",\n".join(events)
    return (
        f'{{"traceEvents":[\n{body}\n],"displayTimeUnit":"ms",'
        f'"otherData":{{"job_id":{_text(job_id)}}}}}\n'
    ).encode()
