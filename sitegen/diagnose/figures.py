"""A run's size and time per stage: what the comparison between runs of a job needs."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sitegen.eventlog.payload import Stage
from sitegen.eventlog.schema import TaskEnd
from sitegen.model import StageFigures, is_failed


def failed_attempts(tasks: Iterable[TaskEnd]) -> dict[str, int]:
    """Count each stage's failed task attempts (its TaskEnd records that ended Failed)."""
    counts: dict[str, int] = {}
    for task in tasks:
        if is_failed(task.status):
            stage = str(task.stage_id)
            counts[stage] = counts.get(stage, 0) + 1
    return counts


def stage_figures(stages: Sequence[Stage], failed: Mapping[str, int]) -> list[StageFigures]:
    """Return each stage's wall time (first task start to last task end), tasks and rows.

    ``failed``: each stage's failed attempts (``failed_attempts``): a task retried until it
    succeeded is no failed task in the payload, but its failed attempts count.
    """
    figures = []
    for stage in stages:
        first = last = None
        durations = []
        # One pass over the tasks: the peek and the map step both run it, for every stage,
        # so payload.task_duration is inlined (a call per task was a third of the pass).
        for task in stage.task_list:
            start, end = task.start_exec_time, task.end_exec_time
            if end != 0:  # 0: not ended when the payload was taken (no duration)
                d = task.exec_duration
                if d is None and start is not None and end is not None:
                    d = end - start
                if d is not None and d >= 0:
                    durations.append(d)
            if start is None or end is None or end < start:
                continue
            if first is None or start < first:
                first = start
            if last is None or end > last:
                last = end
        took = last - first if first is not None and last is not None else 0
        durations.sort()
        figures.append(
            StageFigures(
                stage.stage_id,
                took,
                len(stage.task_list),
                stage.input_rows or 0,
                stage.output_rows or 0,
                failed.get(stage.stage_id, 0),
                durations[(len(durations) - 1) // 2] if durations else None,
                durations[-1] if durations else None,
            )
        )
    return figures


def job_rows(
    figures: Sequence[StageFigures], edges: Sequence[tuple[str, str]]
) -> tuple[int | None, int | None]:
    """Return the rows a job read (stages reading no stage) and wrote (stages nobody reads)."""
    if not figures:
        return None, None
    consumers = {b for _, b in edges}
    producers = {a for a, _ in edges}
    read = sum(f.input_rows for f in figures if f.stage_id not in consumers)
    wrote = sum(f.output_rows for f in figures if f.stage_id not in producers)
    return read, wrote
