"""The SQL tables of the history (``data/``): their schema, and one job's rows of each.

The schema is written here once (``TABLES``); ``render.parquet`` writes the files from it,
and ``docs/data.md`` describes it. A job's rows are computed in the map step, in plain
columns (``array`` for numbers, lists for text: no pyarrow, which a map worker may lack),
and kept in the build state as a small blob (``tableblob.encode_tables``) until a file is written.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from sitegen.diagnose.analysis import JobAnalysis
from sitegen.eventlog import payload
from sitegen.eventlog.limits import DEFAULT_LIMITS, LogLimits
from sitegen.eventlog.reader import LogRead
from sitegen.eventlog.schema import TaskEnd
from sitegen.eventlog.taskmetrics import MISSING, TaskExtras, task_extras
from sitegen.finding import Finding, FindingSeverity, most_severe_first
from sitegen.model import JobSummary, is_failed
from sitegen.text.formatting import compute_ms

# Arrow's names of the column types (``str(pyarrow type)``).
STRING = "string"
INT64 = "int64"
DOUBLE = "double"
TIMESTAMP = "timestamp[ms, tz=UTC]"

# A null in an integer column (numbers are kept in arrays, which hold no None): an int64 no
# count, id or time in a log takes (a log that writes it there reads as null).
NULL = MISSING


@dataclass(frozen=True)
class Column:
    """One column of a table: its name, its Arrow type and what it holds, in one line."""

    name: str
    type: str
    doc: str


def _percentile_columns(prefix: str, unit: str, what: str) -> tuple[Column, ...]:
    """Return the five columns of one of the stage table's percentile groups."""
    names = {"min": "minimum", "p25": "25th percentile", "median": "median"}
    names.update(p75="75th percentile", max="maximum")
    return tuple(
        Column(f"{prefix}_{key}{unit}", INT64, f"The {names[key]} of its {what} (the payload's).")
        for key in payload.PERCENTILE_KEYS
    )


_JOB_ID = Column("job_id", STRING, "The job's id, as its JobEnd gives it: joins the tables.")

# Every table, its columns in order; job_id first in each.
TABLES: dict[str, tuple[Column, ...]] = {
    "jobs": (
        _JOB_ID,
        Column("job_name", STRING, "Its name ('' when it was given none)."),
        Column("status", STRING, "How it ended, as /api/jobs says: Completed, Failed, Cancelled."),
        Column("queued_at", TIMESTAMP, "When it was submitted (null when not recorded)."),
        Column("started_at", TIMESTAMP, "When it started running."),
        Column("ended_at", TIMESTAMP, "When it ended; a cancelled job's cancel time."),
        Column("duration_ms", INT64, "From started_at to ended_at (null when unknown)."),
        Column("stages", INT64, "Stages in its plan."),
        Column("completed_stages", INT64, "Stages that completed."),
        Column("task_attempts", INT64, "TaskEnd records: every task attempt, failed ones too."),
        Column("failed_attempts", INT64, "Task attempts that failed."),
        Column("executors", INT64, "Executors that ran at least one of its task attempts."),
        Column("input_rows", INT64, "Rows its scan stages read (stages reading no stage)."),
        Column("output_rows", INT64, "Rows its final stages produced (stages no stage reads)."),
        Column("failure", STRING, "A failed job's failure, as the scheduler wrote it."),
        Column("findings", INT64, "Findings its findings.json lists."),
        Column("worst_severity", STRING, "The most severe finding's: critical, warning, info."),
        Column("log_file", STRING, "The key of the event log it was read from."),
        Column("log_bytes", INT64, "The size of that log as stored (compressed if it is)."),
    ),
    "stages": (
        _JOB_ID,
        Column("stage_id", INT64, "The stage's id (null when the payload's is not a number)."),
        Column("status", STRING, "As the pages show it: what a stage left Running became."),
        Column("tasks", INT64, "Tasks the stages payload lists (one per partition, last attempt)."),
        Column("task_attempts", INT64, "Its TaskEnd records: one per task attempt."),
        Column("failed_attempts", INT64, "Failed ones (without any: the payload's failed tasks)."),
        Column("started_at", TIMESTAMP, "When its first listed task started."),
        Column("ended_at", TIMESTAMP, "When its last listed task ended."),
        Column("duration_ms", INT64, "From started_at to ended_at."),
        Column("input_rows", INT64, "Rows it read (the payload's)."),
        Column("output_rows", INT64, "Rows it produced (the payload's)."),
        Column("compute_ms", INT64, "Its tasks' compute time (the payload's elapsed_compute)."),
        *_percentile_columns("task_duration", "_ms", "task durations (ms)"),
        *_percentile_columns("task_input_rows", "", "tasks' input rows"),
    ),
    "tasks": (
        _JOB_ID,
        Column("stage_id", INT64, "The stage of the attempt."),
        Column("task_id", INT64, "The task's id, as the TaskEnd record gives it."),
        Column("attempt", INT64, "0 for the task's first TaskEnd, 1 for the next (log order)."),
        Column("partition_id", INT64, "Its partition, where the stages payload names one."),
        Column("executor_id", STRING, "The executor that ran it."),
        Column("status", STRING, "Successful or Failed (any other word as written)."),
        Column("error_reason", STRING, "A failed attempt's reason (ExecutionError, …)."),
        Column("error", STRING, "A failed attempt's error text."),
        Column("launched_at", TIMESTAMP, "When it was launched on the executor."),
        Column("started_at", TIMESTAMP, "When it started executing."),
        Column("ended_at", TIMESTAMP, "When it ended."),
        Column("duration_ms", INT64, "From started_at to ended_at."),
        Column("input_rows", INT64, "Rows it read (its TaskEnd metrics)."),
        Column("output_rows", INT64, "Rows it produced (its TaskEnd metrics)."),
        Column("compute_ns", INT64, "Its compute time in nanoseconds (elapsed_compute_nanos)."),
    ),
    "findings": (
        _JOB_ID,
        Column("kind", STRING, "What it says: straggler, data-skew, slow-executor, …"),
        Column("severity", STRING, "critical, warning or info."),
        Column("impact_ms", INT64, "How much earlier the job would have ended without it."),
        Column("stage_id", INT64, "The stage it is about (null: none)."),
        Column("task_id", INT64, "The task it is about (null: none)."),
        Column("executor_id", STRING, "The executor it is about (null: none)."),
        Column("value", DOUBLE, "Its figure (a ratio, a count, ms), as findings.json gives it."),
        Column("message", STRING, "What it says, in words, as the job page shows it."),
    ),
    "executors": (
        _JOB_ID,
        Column("executor_id", STRING, "The executor's id (the logs name no host or port)."),
        Column("task_attempts", INT64, "Task attempts it ran in the job."),
        Column("failed_attempts", INT64, "Of those, the failed ones."),
        Column("busy_ms", INT64, "The sum of its attempts' run times (overlaps count twice)."),
        Column("first_started_at", TIMESTAMP, "When its first attempt in the job started."),
        Column("last_ended_at", TIMESTAMP, "When its last attempt in the job ended."),
        Column("input_rows", INT64, "Rows its attempts read (their TaskEnd metrics)."),
        Column("output_rows", INT64, "Rows its attempts produced (their TaskEnd metrics)."),
    ),
}

# A column's values: integers and timestamps (ms) in an array of int64, NULL for null;
# doubles in an array of float64; text in a list, None for null.
# (A string: Python 3.11's array cannot be subscripted at run time.)
Values: TypeAlias = "array[int] | array[float] | list[str | None]"


@dataclass(frozen=True)
class JobTables:
    """One job's rows of every table, column by column; ``job_id`` is held once, not per row."""

    job_id: str
    # By table: its columns after job_id, in ``TABLES`` order.
    tables: dict[str, list[Values]]

    def rows(self, table: str) -> int:
        """Return how many rows the job has in ``table``."""
        return len(self.tables[table][0])

    def columns(self, table: str) -> dict[str, Values]:
        """Return ``table``'s columns by name, after job_id (which is ``self.job_id``)."""
        return dict(zip((c.name for c in TABLES[table][1:]), self.tables[table], strict=True))

    def as_lists(self, table: str) -> dict[str, list[Any]]:
        """Return ``table``'s columns, job_id included, as lists with None for null."""
        found: dict[str, list[Any]] = {"job_id": [self.job_id] * self.rows(table)}
        for name, values in self.columns(table).items():
            if isinstance(values, array) and values.typecode == "q":
                found[name] = [None if v == NULL else v for v in values]
            else:
                found[name] = list(values)
        return found


def _ts(ms: int | None) -> int:
    """Return a time as its column holds it: 0 and below (not recorded) are null."""
    return ms if ms is not None and ms > 0 else NULL


def _int(value: int | None) -> int:
    """Return a number as its column holds it."""
    return NULL if value is None else value


def _took(start: int | None, end: int | None) -> int:
    """Return the time from ``start`` to ``end`` when both are known and in order."""
    if start is None or end is None or start <= 0 or end < start:
        return NULL
    return end - start


def _ordered(table: str, columns: dict[str, Values]) -> list[Values]:
    """Return a table's columns in schema order (a column the schema lacks is an error)."""
    names = [c.name for c in TABLES[table][1:]]
    if set(columns) != set(names):
        raise AssertionError(f"{table}: columns {sorted(columns)} are not {sorted(names)}")
    return [columns[name] for name in names]


def _ints(values: Iterable[int | None]) -> array[int]:
    """Return an int64 column of ``values``."""
    return array("q", [NULL if v is None else v for v in values])


def job_tables(
    read: LogRead,
    analysis: JobAnalysis,
    log_key: str,
    extra_findings: Sequence[Finding] = (),
    *,
    held: bytes | None = None,
    limits: LogLimits = DEFAULT_LIMITS,
) -> JobTables:
    """Return one completed job's rows of every table.

    ``extra_findings`` are listed with the job's own (the build's regression, found from
    the other runs of its name). The TaskEnd records' launch times and metrics are read from
    the log again (``eventlog.taskmetrics``): ``held`` is its bytes when the caller holds them.
    """
    summary = analysis.summary
    findings = list(summary.findings)
    if extra_findings:
        findings = most_severe_first([*findings, *extra_findings])
    extras = task_extras(read, held, limits)
    return JobTables(
        summary.job_id,
        {
            "jobs": _ordered("jobs", _jobs(summary, log_key, findings)),
            "stages": _ordered("stages", _stages(read, analysis)),
            "tasks": _ordered("tasks", _tasks(read, analysis, extras)),
            "findings": _ordered("findings", _findings(findings)),
            "executors": _ordered("executors", _executors(read, summary, extras)),
        },
    )


def _jobs(summary: JobSummary, log_key: str, findings: list[Finding]) -> dict[str, Values]:
    """Return the job's one row of ``jobs``."""
    start, end = summary.start_time, summary.ended_at
    worst = max(findings, key=lambda f: f.severity.rank).severity.value if findings else None
    return {
        "job_name": [summary.job_name],
        "status": [summary.status],
        "queued_at": _ints([_ts(summary.queued_at)]),
        "started_at": _ints([_ts(start)]),
        "ended_at": _ints([_ts(end)]),
        "duration_ms": _ints([_took(start, end)]),
        "stages": _ints([summary.num_stages]),
        "completed_stages": _ints([summary.completed_stages]),
        "task_attempts": _ints([summary.tasks]),
        "failed_attempts": _ints([summary.failed_tasks]),
        "executors": _ints([len(summary.executors)]),
        "input_rows": _ints([summary.input_rows]),
        "output_rows": _ints([summary.output_rows]),
        "failure": [summary.failure],
        "findings": _ints([len(findings)]),
        "worst_severity": [worst],
        "log_file": [log_key],
        "log_bytes": _ints([summary.log_bytes]),
    }


def _stages(read: LogRead, analysis: JobAnalysis) -> dict[str, Values]:
    """Return a row of ``stages`` per stage the stages payload lists, in stage order."""
    # Counted per TaskEnd record, as ``tasks`` has a row per record and ``jobs`` counts them.
    attempts = Counter(task.stage_id for task in read.tasks)
    failures = Counter(
        task.stage_id
        for task in read.tasks
        if task.status != "Successful" and is_failed(task.status)
    )
    rows: list[list[int]] = []
    shown: list[str | None] = []
    for stage, _ in analysis.stages:
        sid = payload.as_int(stage.stage_id)
        tasks = stage.task_list
        first = last = None
        for task in tasks:  # as diagnose.figures.stage_figures times a stage
            start, end = task.start_exec_time, task.end_exec_time
            if start is None or end is None or end < start:
                continue
            first = start if first is None or start < first else first
            last = end if last is None or end > last else last
        failed = failures[sid] if sid is not None else 0
        if not failed:  # as the stage table counts them: else its payload's failed tasks
            failed = sum(1 for s in payload.task_statuses([t.status for t in tasks]) if s.failed)
        compute = compute_ms(stage.elapsed_compute)
        durations = stage.task_duration_percentiles or payload.Percentiles()
        inputs = stage.task_input_percentiles or payload.Percentiles()
        shown.append(analysis.statuses.stage(stage.stage_id, stage.stage_status).word)
        rows.append(
            [
                _int(sid),
                len(tasks),
                attempts[sid] if sid is not None else 0,
                failed,
                _ts(first),
                _ts(last),
                _took(first, last),
                _int(stage.input_rows),
                _int(stage.output_rows),
                NULL if compute is None else round(compute),
                *map(_int, durations.values),
                *map(_int, inputs.values),
            ]
        )
    names = [c.name for c in TABLES["stages"][1:] if c.name != "status"]
    columns: dict[str, Values] = {
        name: array("q", [row[n] for row in rows]) for n, name in enumerate(names)
    }
    columns["status"] = shown
    return columns


def _tasks(read: LogRead, analysis: JobAnalysis, extras: TaskExtras) -> dict[str, Values]:
    """Return a row of ``tasks`` per TaskEnd record, in log order."""
    tasks = read.tasks
    listed: dict[int, _PayloadRows | None] = {}
    for stage, _ in analysis.stages:
        sid = payload.as_int(stage.stage_id)
        if sid is not None and sid not in listed:
            listed[sid] = _PayloadRows(stage.task_list)
    # Per stage and task id: the attempts seen so far.
    attempts: dict[int, dict[int, int]] = {}
    attempt = array("q", bytes(8 * len(tasks)))
    partition = array("q", [NULL]) * len(tasks)
    last_sid: int | None = None
    seen: dict[int, int] = {}
    rows: _PayloadRows | None = None
    for n, task in enumerate(tasks):
        sid, tid = task.stage_id, task.task_id
        if sid != last_sid:  # a log lists a stage's attempts together, mostly
            last_sid, seen, rows = sid, attempts.setdefault(sid, {}), listed.get(sid)
        before = seen.get(tid, 0)
        seen[tid] = before + 1
        attempt[n] = before
        if rows is not None:
            partition[n] = rows.partition(task)
    if NULL in partition:
        _share_partitions(tasks, partition)
    words, reasons, errors = _statuses([task.status for task in tasks])
    return {
        "stage_id": array("q", [t.stage_id for t in tasks]),
        "task_id": array("q", [t.task_id for t in tasks]),
        "attempt": attempt,
        "partition_id": partition,
        "executor_id": [t.executor_id for t in tasks],
        "status": words,
        "error_reason": reasons,
        "error": errors,
        "launched_at": array("q", [t if t > 0 else NULL for t in extras.launch_time]),
        "started_at": array("q", [t if (t := e.start_exec_time) > 0 else NULL for e in tasks]),
        "ended_at": array("q", [t if (t := e.end_exec_time) > 0 else NULL for e in tasks]),
        "duration_ms": array("q", [_took(t.start_exec_time, t.end_exec_time) for t in tasks]),
        "input_rows": extras.input_rows,
        "output_rows": extras.output_rows,
        "compute_ns": extras.compute_ns,
    }


class _PayloadRows:
    """A stage's payload rows, found for a TaskEnd as ``diagnose.tasks.RowIndex`` finds them.

    The same rule (same id and times, else same times, else same id), with the index by
    times made only when a TaskEnd needs it: a stage may list 800,000 tasks.
    """

    def __init__(self, rows: list[payload.TaskSummary]) -> None:
        self.rows = rows
        ids = [row.id for row in rows]
        # The first row of each id: later rows are put first and overwritten.
        self.by_id = dict(zip(reversed(ids), range(len(ids) - 1, -1, -1), strict=True))
        self.by_time: dict[tuple[int | None, int | None], int] | None = None

    def partition(self, task: TaskEnd) -> int:
        """Return the partition the payload names for ``task``'s row, else NULL."""
        start, stop = task.start_exec_time, task.end_exec_time
        n = self.by_id.get(task.task_id)
        if n is None or (self.rows[n].start_exec_time, self.rows[n].end_exec_time) != (start, stop):
            if self.by_time is None:
                self.by_time = {}
                for k, row in enumerate(self.rows):
                    self.by_time.setdefault((row.start_exec_time, row.end_exec_time), k)
            n = self.by_time.get((start, stop), n)
        if n is None:
            return NULL
        part = self.rows[n].partition_id
        if isinstance(part, list):
            return part[0] if len(part) == 1 else NULL
        return NULL if part is None else part


def _share_partitions(tasks: list[TaskEnd], partition: array[int]) -> None:
    """Give every attempt of a task the partition the payload names for one of them."""
    # The payload lists a partition's last attempt only: the failed ones before it ran the
    # same partition under the same task id.
    known: dict[tuple[int, int], int] = {}
    for task, part in zip(tasks, partition, strict=True):
        if part != NULL:
            known.setdefault((task.stage_id, task.task_id), part)
    if known:
        for n, task in enumerate(tasks):
            if partition[n] == NULL:
                partition[n] = known.get((task.stage_id, task.task_id), NULL)


def _statuses(values: list[Any]) -> tuple[list[str | None], list[str | None], list[str | None]]:
    """Return the status words, failure reasons and error texts of TaskEnd statuses."""
    count = len(values)
    words: list[str | None] = ["Successful"] * count
    reasons: list[str | None] = [None] * count
    errors: list[str | None] = [None] * count
    for n in [n for n, value in enumerate(values) if value != "Successful"]:
        state = payload.task_status(values[n])
        words[n] = state.word
        reasons[n] = state.reason or None
        errors[n] = state.error or None
    return words, reasons, errors


def _findings(findings: list[Finding]) -> dict[str, Values]:
    """Return a row of ``findings`` per finding, in findings.json's order."""
    return {
        "kind": [f.kind.value for f in findings],
        "severity": [f.severity.value for f in findings],
        "impact_ms": _ints(f.impact_ms for f in findings),
        "stage_id": _ints(f.stage_id for f in findings),
        "task_id": _ints(f.task_id for f in findings),
        "executor_id": [f.executor_id for f in findings],
        "value": array("d", [f.value for f in findings]),
        "message": [f.message for f in findings],
    }


def _executors(read: LogRead, summary: JobSummary, extras: TaskExtras) -> dict[str, Values]:
    """Return a row of ``executors`` per executor of the job's TaskEnd records, by id."""
    # [first start, last end, input rows, output rows] per executor.
    seen: dict[str, list[int]] = {}
    for task, rows_in, rows_out in zip(
        read.tasks, extras.input_rows, extras.output_rows, strict=True
    ):
        row = seen.get(task.executor_id)
        if row is None:
            row = seen[task.executor_id] = [NULL, NULL, 0, 0]
        start, end = task.start_exec_time, task.end_exec_time
        if start > 0 and (start < row[0] or row[0] == NULL):
            row[0] = start
        if end > row[1]:
            row[1] = end
        if rows_in != NULL:
            row[2] += rows_in
        if rows_out != NULL:
            row[3] += rows_out
    ids = sorted(summary.executors)
    stats = [summary.executors[i] for i in ids]
    return {
        "executor_id": list(ids),
        "task_attempts": array("q", [s.tasks for s in stats]),
        "failed_attempts": array("q", [s.failed for s in stats]),
        "busy_ms": array("q", [s.busy_ms for s in stats]),
        "first_started_at": array("q", [seen[i][0] for i in ids]),
        "last_ended_at": array("q", [seen[i][1] for i in ids]),
        "input_rows": array("q", [seen[i][2] for i in ids]),
        "output_rows": array("q", [seen[i][3] for i in ids]),
    }


def with_findings(tables: JobTables, extra: Sequence[Finding]) -> JobTables:
    """Return a job's rows with ``extra`` findings listed too, in findings.json's order.

    The build adds the run's regression (found from the other runs of its name, after the map
    step made the rows) as findings.json lists it: the job's count and worst severity follow.
    """
    names = [c.name for c in TABLES["findings"][1:]]
    own = tables.as_lists("findings")
    added = JobTables(tables.job_id, {"findings": _ordered("findings", _findings([*extra]))})
    more = added.as_lists("findings")
    rows = list(zip(*(own[n] + more[n] for n in names), strict=True))

    def order(row: tuple[Any, ...]) -> tuple[Any, ...]:
        # most_severe_first's key, on a row's values.
        kind, severity, _, stage, task, executor = row[:6]
        rank = FindingSeverity(severity).rank
        return (
            -rank,
            kind,
            -1 if stage is None else stage,
            -1 if task is None else task,
            executor or "",
        )

    rows.sort(key=order)
    columns: list[Values] = []
    for n, column in enumerate(TABLES["findings"][1:]):
        values = [row[n] for row in rows]
        if column.type == DOUBLE:
            columns.append(array("d", values))
        elif column.type == STRING:
            columns.append(values)
        else:
            columns.append(_ints(values))
    jobs = tables.columns("jobs")
    severities = [FindingSeverity(row[1]) for row in rows]
    worst = max(severities, key=lambda s: s.rank).value if severities else None
    jobs = {**jobs, "findings": _ints([len(rows)]), "worst_severity": [worst]}
    return JobTables(
        tables.job_id,
        {**tables.tables, "jobs": _ordered("jobs", jobs), "findings": columns},
    )
