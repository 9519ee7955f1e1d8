"""Match a stage's TaskEnd records (attempts, with executors) to its payload rows (with rows)."""

from __future__ import annotations

from collections.abc import Callable

from sitegen.eventlog.payload import TaskSummary
from sitegen.eventlog.schema import TaskEnd

# A payload row's (task id, start, end) and (start, end): any of them may be missing.
Attempt = tuple[int | None, int | None, int | None]
Times = tuple[int | None, int | None]


def executor_index(
    ends: list[TaskEnd], label: Callable[[str], str] = str
) -> tuple[dict[Attempt, str], dict[Times, str], dict[int | None, str | None]]:
    """Index TaskEnd records' executors by (task, start, end), by (start, end) and by task id.

    The values are ``label(executor_id)``, made once per executor (executors repeat across
    thousands of rows). By task id the value is None when the id had several attempts.
    """
    # Keyed as the payload rows look them up: their fields may be missing (None).
    exact: dict[Attempt, str] = {}
    by_time: dict[Times, str] = {}
    by_id: dict[int | None, str | None] = {}
    names: dict[str, str] = {}
    for end in ends:
        name = names.get(end.executor_id)
        if name is None:
            name = names[end.executor_id] = label(end.executor_id)
        exact.setdefault((end.task_id, end.start_exec_time, end.end_exec_time), name)
        by_time[(end.start_exec_time, end.end_exec_time)] = name
        by_id[end.task_id] = None if end.task_id in by_id else name
    return exact, by_time, by_id


class RowIndex:
    """Find the payload row of a TaskEnd attempt: same id and times, else same times, else id."""

    def __init__(self, rows: list[TaskSummary]) -> None:
        self.exact: dict[tuple[int | None, int | None, int | None], int] = {}
        self.by_time: dict[tuple[int | None, int | None], int] = {}
        self.by_id: dict[int | None, int] = {}
        for n, row in enumerate(rows):
            start, end = row.start_exec_time, row.end_exec_time
            self.exact.setdefault((row.id, start, end), n)
            self.by_time.setdefault((start, end), n)
            self.by_id.setdefault(row.id, n)

    def find(self, end: TaskEnd) -> int | None:
        """Return the position of ``end``'s row in the stage's task list, or None."""
        start, stop = end.start_exec_time, end.end_exec_time
        found = self.exact.get((end.task_id, start, stop))
        if found is None:
            found = self.by_time.get((start, stop))
            if found is None:
                found = self.by_id.get(end.task_id)
        return found
