"""The SQL tables of the history (``data/``): their schema, and one job's rows of each.

The schema is written here once (``TABLES``); ``render.parquet`` writes the files from it,
and ``docs/data.md`` describes it. A job's rows are computed in the map step, in plain
columns (``array`` for numbers, lists for text: no pyarrow, which a map worker may lack),
and kept in the build state as a small blob (``tableblob.encode_tables``) until a file is written.
"""

from __future__ import annotations

import struct
from array import array
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from operator import sub
from typing import Any, NamedTuple, TypeAlias

from sitegen.diagnose.analysis import JobAnalysis
from sitegen.eventlog import payload
from sitegen.eventlog.limits import DEFAULT_LIMITS, LogLimits
from sitegen.eventlog.reader import LogRead
from sitegen.eventlog.taskmetrics import (
    MISSING,
    TaskColumns,
    TaskExtras,
    task_columns,
    task_extras,
)
from sitegen.finding import Finding, most_severe_first
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
        Column("status", STRING, "As /api/jobs says: Completed, Failed, Invalid, Cancelled."),
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
        Column("scheduler", STRING, "Its scheduler: JobStart's scheduler_id, else its log dir."),
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
# Number columns as a job's rows keep them: their items' bytes in the machine's order, in an
# array or in bytes (a decoded blob's).
Buffer: TypeAlias = "bytes | bytearray | array[int] | array[float]"

# The tables of a few rows a job: their number columns are kept together, row by row, in
# one buffer (a small job's 44 such columns, a buffer each, were a third of its rows' cost).
BY_ROW = frozenset({"jobs", "stages", "findings", "executors"})


class Part(NamedTuple):
    """One job's rows of one table: its number columns and its text columns, apart.

    Apart, a file of many jobs joins each column's parts in one call (``render.parquet``),
    and a blob decodes to them with no call per column (``render.tableblob``).
    """

    rows: int
    # The table's number columns (not job_id) in ``TABLES`` order: a buffer each, or one
    # buffer of them all, row by row (``BY_ROW``).
    numbers: list[Buffer]
    texts: list[list[str | None]]


# By table, after job_id: the names of its number columns and of its text columns, and the
# struct format of a row of its numbers.
NUMBER_NAMES = {t: [c.name for c in cs[1:] if c.type != STRING] for t, cs in TABLES.items()}
TEXT_NAMES = {t: [c.name for c in cs[1:] if c.type == STRING] for t, cs in TABLES.items()}
ROW_FORMAT = {
    t: struct.Struct(
        "=" + "".join("d" if c.type == DOUBLE else "q" for c in cs[1:] if c.type != STRING)
    )
    for t, cs in TABLES.items()
}
# Every table has a text column, which says how many rows a part has.
assert all(TEXT_NAMES.values())


class JobTables:
    """One job's rows of every table, column by column; ``job_id`` is held once, not per row.

    Made of ``tables`` (by table, its columns after job_id in ``TABLES`` order) or of
    ``parts``: it keeps each table as a ``Part``, and ``tables`` makes its columns anew.
    """

    __slots__ = ("job_id", "parts")

    def __init__(
        self,
        job_id: str,
        tables: Mapping[str, Sequence[Values]] | None = None,
        *,
        parts: dict[str, Part] | None = None,
    ) -> None:
        self.job_id = job_id
        self.parts = {} if parts is None else parts
        for name, columns in (tables or {}).items():
            names = [c.name for c in TABLES[name][1:]]
            self.parts[name] = table_part(name, dict(zip(names, columns, strict=True)))

    @property
    def tables(self) -> dict[str, list[Values]]:
        """Return every table's columns after job_id, in ``TABLES`` order."""
        return {name: self.table(name) for name in self.parts}

    def table(self, name: str) -> list[Values]:
        """Return one table's columns after job_id, in ``TABLES`` order."""
        part, form = self.parts[name], ROW_FORMAT[name]
        found: list[Any] = part.numbers
        if name in BY_ROW:
            found = list(zip(*form.iter_unpack(part.numbers[0]), strict=True))
            found = found or [()] * len(NUMBER_NAMES[name])
        codes = form.format[1:]
        numbers = (
            v if isinstance(v, array) else array(c, v) for v, c in zip(found, codes, strict=True)
        )
        texts = iter(part.texts)
        return [next(texts) if c.type == STRING else next(numbers) for c in TABLES[name][1:]]

    def rows(self, table: str) -> int:
        """Return how many rows the job has in ``table``."""
        return self.parts[table].rows

    def columns(self, table: str) -> dict[str, Values]:
        """Return ``table``'s columns by name, after job_id (which is ``self.job_id``)."""
        return dict(zip((c.name for c in TABLES[table][1:]), self.table(table), strict=True))

    def as_lists(self, table: str) -> dict[str, list[Any]]:
        """Return ``table``'s columns, job_id included, as lists with None for null."""
        found: dict[str, list[Any]] = {"job_id": [self.job_id] * self.rows(table)}
        for name, values in self.columns(table).items():
            if isinstance(values, array) and values.typecode == "q":
                found[name] = [None if v == NULL else v for v in values]
            else:
                found[name] = list(values)
        return found


def table_part(table: str, columns: Mapping[str, Any]) -> Part:
    """Return a table's columns by name as its ``Part`` (a column the schema lacks is an error).

    A number column is a sequence of ints (floats for a double), NULL for null: an array for
    ``tasks``, any sequence for a table ``BY_ROW``.
    """
    if columns.keys() != _NAMES[table]:
        raise AssertionError(f"{table}: columns {sorted(columns)} are not {sorted(_NAMES[table])}")
    texts: list[list[str | None]] = [columns[n] for n in TEXT_NAMES[table]]
    numbers = [columns[n] for n in NUMBER_NAMES[table]]
    if table in BY_ROW:  # each row's numbers packed in C, one row after another
        return Part(len(texts[0]), [b"".join(map(ROW_FORMAT[table].pack, *numbers))], texts)
    return Part(len(texts[0]), numbers, texts)


_NAMES = {t: {c.name for c in cs[1:]} for t, cs in TABLES.items()}


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
    the other runs of its name). The TaskEnd records' launch times and metrics come from the
    reader where it decoded them (``read_log(measured=True)``), else from the log read again
    (``eventlog.taskmetrics``): ``held`` is its bytes when the caller holds them.
    """
    summary = analysis.summary
    findings = list(summary.findings)
    if extra_findings:
        findings = most_severe_first([*findings, *extra_findings])
    extras = task_extras(read, held, limits)
    ends = task_columns(read.tasks)
    return JobTables(
        summary.job_id,
        parts={
            "jobs": table_part("jobs", _jobs(summary, log_key, findings)),
            "stages": _stages(ends, analysis),
            "tasks": table_part("tasks", _tasks(ends, analysis, extras)),
            "findings": table_part("findings", findings_columns(findings)),
            "executors": _executors(ends, summary, extras),
        },
    )


def _jobs(summary: JobSummary, log_key: str, findings: list[Finding]) -> dict[str, Any]:
    """Return the job's one row of ``jobs``."""
    start, end = summary.start_time, summary.ended_at
    worst = max(findings, key=lambda f: f.severity.rank).severity.value if findings else None
    return {
        "job_name": [summary.job_name],
        "status": [summary.status],
        "queued_at": [_ts(summary.queued_at)],
        "started_at": [_ts(start)],
        "ended_at": [_ts(end)],
        "duration_ms": [_took(start, end)],
        "stages": [summary.num_stages],
        "completed_stages": [summary.completed_stages],
        "task_attempts": [summary.tasks],
        "failed_attempts": [summary.failed_tasks],
        "executors": [len(summary.executors)],
        "input_rows": [_int(summary.input_rows)],
        "output_rows": [_int(summary.output_rows)],
        "failure": [summary.failure],
        "findings": [len(findings)],
        "worst_severity": [worst],
        "log_file": [log_key],
        "log_bytes": [summary.log_bytes],
        "scheduler": [summary.scheduler],
    }


def _stages(ends: TaskColumns, analysis: JobAnalysis) -> Part:
    """Return a row of ``stages`` per stage the stages payload lists (a replan's dropped: none)."""
    # Counted per TaskEnd record, as ``tasks`` has a row per record and ``jobs`` counts them:
    # a pass over the job's per stage when there are few (a Counter took 4 us).
    attempts = None if len(analysis.stages) <= _FEW_STAGES else Counter(ends.stage_id)
    failed_in = array("q")
    if ends.status.count("Successful") != len(ends.status):
        failed_in.extend(
            t.stage_id for t in ends.records if t.status != "Successful" and is_failed(t.status)
        )
    rows: list[bytes] = []
    shown: list[str | None] = []
    pack = ROW_FORMAT["stages"].pack
    for stage, _ in analysis.stages:
        sid = payload.as_int(stage.stage_id)
        if sid is not None and sid in analysis.dropped:
            continue
        tasks = stage.task_list
        first, last = _span(tasks)
        failed = failed_in.count(sid) if sid is not None else 0
        if not failed:  # as the stage table counts them: else its payload's failed tasks
            statuses = [t.status for t in tasks]
            if statuses.count("Successful") != len(statuses):
                failed = sum(1 for s in payload.task_statuses(statuses) if s.failed)
        if sid is None:
            tried = 0
        else:
            tried = ends.stage_id.count(sid) if attempts is None else attempts[sid]
        compute = compute_ms(stage.elapsed_compute)
        durations = stage.task_duration_percentiles or payload.Percentiles()
        inputs = stage.task_input_percentiles or payload.Percentiles()
        shown.append(analysis.statuses.stage(stage.stage_id, stage.stage_status).word)
        # In the order of the stage table's number columns (NUMBER_NAMES["stages"]).
        rows.append(
            pack(
                _int(sid),
                len(tasks),
                tried,
                failed,
                _ts(first),
                _ts(last),
                _took(first, last),
                _int(stage.input_rows),
                _int(stage.output_rows),
                NULL if compute is None else round(compute),
                *map(_int, durations.values),
                *map(_int, inputs.values),
            )
        )
    return Part(len(rows), [b"".join(rows)], [shown])


# Up to this many stages, a stage's attempts are counted by a pass over the job's.
_FEW_STAGES = 8


def _span(tasks: list[payload.TaskSummary]) -> tuple[int | None, int | None]:
    """Return a stage's first task start and last task end, as ``stage_figures`` times it."""
    starts: list[Any] = [t.start_exec_time for t in tasks]
    stops: list[Any] = [t.end_exec_time for t in tasks]
    try:
        if min(map(sub, stops, starts), default=0) >= 0:  # every task timed, in order: in C
            return min(starts, default=None), max(stops, default=None)
    except TypeError:  # a task without a time
        pass
    timed = [(a, b) for a, b in zip(starts, stops, strict=True) if a is not None and b is not None]
    timed = [(a, b) for a, b in timed if b >= a]
    return (min(timed)[0], max(b for _, b in timed)) if timed else (None, None)


def _tasks(ends: TaskColumns, analysis: JobAnalysis, extras: TaskExtras) -> dict[str, Any]:
    """Return a row of ``tasks`` per TaskEnd record, in log order."""
    starts, stops = ends.start, ends.end
    words, reasons, errors = _statuses(ends.status)
    if min(starts, default=1) > 0:  # every attempt timed (nearly every job): no step per row
        started = starts
        took = array("q", map(sub, stops, starts))
        if min(took, default=0) < 0:
            took = array("q", [NULL if t < 0 else t for t in took])
    else:
        started = array("q", [t if t > 0 else NULL for t in starts])
        took = array("q", map(_took, starts, stops))
    return {
        "stage_id": ends.stage_id,
        "task_id": ends.task_id,
        "attempt": _attempts(ends),
        "partition_id": _partitions(ends, analysis),
        "executor_id": ends.executor_id,
        "status": words,
        "error_reason": reasons,
        "error": errors,
        "launched_at": _positive(extras.launch_time),
        "started_at": started,
        "ended_at": _positive(stops),
        "duration_ms": took,
        "input_rows": extras.input_rows,
        "output_rows": extras.output_rows,
        "compute_ns": extras.compute_ns,
    }


def _positive(times: array[int]) -> array[int]:
    """Return a column of times with those not recorded (0 and below) null."""
    if min(times, default=1) > 0:
        return times
    return array("q", [t if t > 0 else NULL for t in times])


def _attempts(ends: TaskColumns) -> array[int]:
    """Return each TaskEnd's attempt: how many of its stage and task id came before it."""
    attempt = array("q", bytes(8 * len(ends.task_id)))
    keys = [(t.stage_id, t.task_id) for t in ends.records]
    if len(set(keys)) == len(keys):
        return attempt  # no task tried again
    seen: dict[tuple[int, int], int] = {}
    for n, key in enumerate(keys):
        before = seen.get(key, 0)
        attempt[n] = before
        seen[key] = before + 1
    return attempt


def _partitions(ends: TaskColumns, analysis: JobAnalysis) -> array[int]:
    """Return each TaskEnd's partition, as the stages payload names it for its row, else NULL."""
    listed: dict[int, _PayloadRows] = {}
    for stage, _ in analysis.stages:
        sid = payload.as_int(stage.stage_id)
        if sid is not None and sid not in listed and sid not in analysis.dropped:
            listed[sid] = _PayloadRows(stage.task_list)
    partition = array("q", [NULL]) * len(ends.task_id)
    last: int | None = None
    rows: _PayloadRows | None = None
    for n, task in enumerate(ends.records):
        sid, tid = task.stage_id, task.task_id
        start, stop = task.start_exec_time, task.end_exec_time
        if sid != last:  # a log lists a stage's attempts together, mostly
            last, rows = sid, listed.get(sid)
        if rows is None:
            continue
        k = rows.by_id.get(tid)
        if k is not None:  # its id's row, if that row has its times (nearly every attempt)
            row = rows.rows[k]
            if row.start_exec_time == start and row.end_exec_time == stop:
                part = row.partition_id
                partition[n] = (
                    part[0] if part.__class__ is list and len(part) == 1 else _loose(part)
                )
                continue
        partition[n] = rows.partition(tid, start, stop)
    if NULL in partition:
        _share_partitions(ends, partition)
    return partition


class _PayloadRows:
    """A stage's payload rows, found for a TaskEnd as ``diagnose.tasks.RowIndex`` finds them.

    The same rule (same id and times, else same times, else same id), with the index by
    times made only when a TaskEnd needs it: a stage may list 800,000 tasks.
    """

    def __init__(self, rows: list[payload.TaskSummary]) -> None:
        self.rows = rows
        # The first row of each id: later rows are put first and overwritten.
        places = range(len(rows) - 1, -1, -1)
        self.by_id = dict(zip([row.id for row in reversed(rows)], places, strict=True))
        self.by_time: dict[tuple[int | None, int | None], int] | None = None

    def partition(self, task_id: int, start: int, stop: int) -> int:
        """Return the partition the payload names for a TaskEnd's row, else NULL."""
        rows = self.rows
        n = self.by_id.get(task_id)
        if n is None or (rows[n].start_exec_time, rows[n].end_exec_time) != (start, stop):
            if self.by_time is None:
                times = [(row.start_exec_time, row.end_exec_time) for row in reversed(rows)]
                self.by_time = dict(zip(times, range(len(rows) - 1, -1, -1), strict=True))
            n = self.by_time.get((start, stop), n)
        if n is None:
            return NULL
        part = rows[n].partition_id
        return part[0] if isinstance(part, list) and len(part) == 1 else _loose(part)


def _loose(part: Any) -> int:
    """Return a partition id the payload gives as other than a list of one: NULL unless an int."""
    return NULL if part is None or isinstance(part, list) else part


def _share_partitions(ends: TaskColumns, partition: array[int]) -> None:
    """Give every attempt of a task the partition the payload names for one of them."""
    # The payload lists a partition's last attempt only: the failed ones before it ran the
    # same partition under the same task id. The first attempt's with one is given; only the
    # attempts of the task ids of those without one are looked at (30 % fewer steps).
    nulls = [n for n, part in enumerate(partition) if part == NULL]
    tasks = ends.records
    ids = {tasks[n].task_id for n in nulls}
    known: dict[tuple[int, int], int] = {}
    for n in [n for n, task in enumerate(tasks) if task.task_id in ids]:
        if partition[n] != NULL:
            known.setdefault((tasks[n].stage_id, tasks[n].task_id), partition[n])
    for n in nulls:
        partition[n] = known.get((tasks[n].stage_id, tasks[n].task_id), NULL)


def _statuses(values: list[Any]) -> tuple[list[str | None], list[str | None], list[str | None]]:
    """Return the status words, failure reasons and error texts of TaskEnd statuses."""
    count = len(values)
    words: list[str | None] = ["Successful"] * count
    reasons: list[str | None] = [None] * count
    errors: list[str | None] = [None] * count
    if values.count("Successful") == count:
        return words, reasons, errors
    for n in [n for n, value in enumerate(values) if value != "Successful"]:
        state = payload.task_status(values[n])
        words[n] = state.word
        reasons[n] = state.reason or None
        errors[n] = state.error or None
    return words, reasons, errors


def findings_columns(findings: Sequence[Finding]) -> dict[str, Any]:
    """Return a row of ``findings`` per finding, in the order given, a column each by name."""
    return {
        "kind": [f.kind.value for f in findings],
        "severity": [f.severity.value for f in findings],
        "impact_ms": [_int(f.impact_ms) for f in findings],
        "stage_id": [_int(f.stage_id) for f in findings],
        "task_id": [_int(f.task_id) for f in findings],
        "executor_id": [f.executor_id for f in findings],
        "value": [f.value for f in findings],
        "message": [f.message for f in findings],
    }


def _executors(ends: TaskColumns, summary: JobSummary, extras: TaskExtras) -> Part:
    """Return a row of ``executors`` per executor of the job's TaskEnd records, by id."""
    ids = sorted(summary.executors)
    # [first start, last end, input rows, output rows] per executor.
    seen = {i: [NULL, NULL, 0, 0] for i in ids}
    for task, read, wrote in zip(ends.records, extras.input_rows, extras.output_rows, strict=True):
        row = seen[task.executor_id]
        start, end = task.start_exec_time, task.end_exec_time
        if start > 0 and (start < row[0] or row[0] == NULL):
            row[0] = start
        if end > row[1]:
            row[1] = end
        if read != NULL:
            row[2] += read
        if wrote != NULL:
            row[3] += wrote
    pack = ROW_FORMAT["executors"].pack
    stats = summary.executors
    # In the order of the table's number columns (NUMBER_NAMES["executors"]).
    rows = [pack(stats[i].tasks, stats[i].failed, stats[i].busy_ms, *seen[i]) for i in ids]
    texts: list[list[str | None]] = [list(ids)]
    return Part(len(ids), [b"".join(rows)], texts)
