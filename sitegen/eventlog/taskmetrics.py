"""Each TaskEnd's launch time and metrics, which the SQL tables keep, in columns.

Where the log is held, the reader decodes them with the rest of each TaskEnd
(``read_log(measured=True)``: ``schema.MeasuredTaskEnd``), and they are only put in arrays
here, 32 bytes an attempt. A streamed log's TaskEnd records are lean (``schema.TaskEnd``:
four more numbers per attempt would cost 130 MB in a job of 800,000), and so are those of a
log whose records are of another shape: their extras are read in a second pass, a held log
a megabyte of lines at a time, each in one decode (``_held``), any other line by line
(``_scan``).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

import msgspec

from sitegen.eventlog import compression, schema
from sitegen.eventlog.limits import DEFAULT_LIMITS, Held, Lines, LogLimits, OverLimit
from sitegen.eventlog.payload import as_int
from sitegen.eventlog.reader import TASK_END_PREFIX, LogRead, open_log
from sitegen.eventlog.schema import TaskMetrics

# An int64 a log cannot give a TaskEnd's extras: what is missing (the arrays hold no None).
MISSING = -(2**63)


class _Extras(msgspec.Struct, gc=False):
    """The fields of a TaskEnd that find its attempt, and those the reader skips."""

    stage_id: schema.Int64
    task_id: schema.Int64
    start_exec_time: schema.Int64 = 0
    end_exec_time: schema.Int64 = 0
    launch_time: schema.Int64 | None = None
    metrics: TaskMetrics | None = None


class _AnyExtras(msgspec.Struct, gc=False):
    """The same fields of any shape: a record of another shape, read leniently."""

    stage_id: schema.Int64
    task_id: schema.Int64
    start_exec_time: schema.Int64 = 0
    end_exec_time: schema.Int64 = 0
    launch_time: Any = None
    metrics: Any = None


class _ExtrasRecord(msgspec.Struct, gc=False):
    """A whole TaskEnd line, decoded in one pass."""

    ev: str
    data: _Extras


class _LineData(msgspec.Struct, gc=False):
    """What any record's data reads as: a TaskEnd's extras (another kind's: the defaults)."""

    launch_time: schema.Int64 | None = None
    metrics: TaskMetrics | None = None


class _Line(msgspec.Struct, gc=False):
    """Any line of a log, read for a TaskEnd's extras."""

    ev: str
    data: _LineData


_NO_METRICS = TaskMetrics()
_RECORD = msgspec.json.Decoder(_ExtrasRecord)
_LINES = msgspec.json.Decoder(list[_Line])
_DATA = msgspec.json.Decoder(_Extras)
_ANY_DATA = msgspec.json.Decoder(_AnyExtras)


@dataclass(frozen=True)
class TaskExtras:
    """Per TaskEnd of ``LogRead.tasks``, in its order: the fields it left undecoded.

    ``MISSING`` where the record lacks one (or it is not an integer).
    """

    launch_time: array[int]
    input_rows: array[int]
    output_rows: array[int]
    compute_ns: array[int]


class TaskColumns(NamedTuple):
    """The fields the reader decodes of each TaskEnd of ``LogRead.tasks``, a column each."""

    # Numbers in arrays, 8 bytes an attempt as a list's pointers would be, which the table
    # of tasks takes as they are (lists would each need an array more: 26 MB at 800,000).
    stage_id: array[int]
    task_id: array[int]
    executor_id: list[str]
    status: list[Any]
    start: array[int]
    end: array[int]
    # The records themselves, for a loop over them: a field read from a record makes no int
    # anew, where an item of an array does (2 % of the instructions of a small job's rows).
    records: list[schema.TaskEnd]


def task_columns(tasks: list[schema.TaskEnd]) -> TaskColumns:
    """Return the fields of ``tasks`` as columns, in their order."""
    # Comprehensions: attrgetter maps took 1.7 times as long (msgspec's fields are slots).
    return TaskColumns(
        array("q", [t.stage_id for t in tasks]),
        array("q", [t.task_id for t in tasks]),
        [t.executor_id for t in tasks],
        [t.status for t in tasks],
        array("q", [t.start_exec_time for t in tasks]),
        array("q", [t.end_exec_time for t in tasks]),
        tasks,
    )


def task_extras(
    read: LogRead, held: bytes | None = None, limits: LogLimits = DEFAULT_LIMITS
) -> TaskExtras:
    """Return each TaskEnd's launch time and metrics, reading the log again if need be.

    ``held``: the log's bytes, when the caller holds them (else it is opened again). A log
    that cannot be read again (gone, damaged) leaves the rest of its extras missing.
    """
    found = TaskExtras(array("q"), array("q"), array("q"), array("q"))
    columns = (found.launch_time, found.input_rows, found.output_rows, found.compute_ns)
    tasks = read.tasks
    count = len(tasks)
    if read.measured:  # the reader decoded them with the rest: nothing to read again
        _append(found, cast(list[schema.MeasuredTaskEnd], tasks))
    elif count and (held is None or not _held(read, held, found)):
        for column in columns:
            del column[:]  # what the reading in pieces took before it gave up
        try:
            _scan(read, held, limits, found)
        except (OSError, OverLimit, *compression.DAMAGE_ERRORS):
            pass  # read once already: only what the second reading adds is lost
    for column in columns:
        column.extend(array("q", [MISSING]) * (count - len(column)))
    return found


# A held log is decoded this many bytes of lines at a time: a megabyte of lines decodes to
# about 3,500 records, 1 MB of Python objects, however big the log.
_PIECE = 1 << 20


def _held(read: LogRead, held: bytes, found: TaskExtras) -> bool:
    """Append the extras of a held log's TaskEnd records, its lines decoded a piece at a time.

    Each piece of lines is decoded as one JSON array, in C (a small job's 24 attempts: 33 us,
    where ``_scan`` took 57; 800 attempts: 1.1 ms, where it took 2.2). Where that would not
    be the reader's tasks one for one (a line it skipped, a line that does not decode so, a
    count that differs), return False: then ``_scan`` reads the log again.
    """
    # Lines the reader skipped may be TaskEnd records of another shape: read line by line.
    if read.skipped_lines or not read.line:
        return False
    # The lines before the JobEnd's (``read.line``), which must be the last line. Every line
    # the reader did not skip is a record it read: the TaskEnd records decoded here are its
    # tasks, or a count that differs says otherwise (a line it took whose last "ev" is not
    # TaskEnd).
    last = held.rfind(b"\n", 0, len(held) - 1) + 1
    if held.count(b"\n", 0, last) != read.line - 1:
        return False
    done = start = 0
    while start < last:
        stop = last if last - start <= _PIECE else held.find(b"\n", start + _PIECE, last) + 1
        try:
            # Joined: bytes' % formatting took 10 times as long (194 us for 232 kB).
            piece = b"".join((b"[", held[start : stop - 1].replace(b"\n", b","), b"]"))
            lines = _LINES.decode(piece)
        except (msgspec.DecodeError, RecursionError):
            return False  # a blank, damaged or odd line
        start = stop
        ends = [line.data for line in lines if line.ev == "TaskEnd"]
        done += len(ends)
        if done > len(read.tasks):
            return False
        _append(found, ends)
    return done == len(read.tasks)


def _append(found: TaskExtras, ends: Sequence[_LineData | schema.MeasuredTaskEnd]) -> None:
    """Append the extras of decoded TaskEnd records to ``found``'s columns."""
    # Comprehensions: attrgetter maps took 1.7 times as long (msgspec's fields are slots).
    metrics = [_NO_METRICS if end.metrics is None else end.metrics for end in ends]
    columns: list[tuple[array[int], list[Any]]] = [
        (found.launch_time, [end.launch_time for end in ends]),
        (found.input_rows, [m.input_rows for m in metrics]),
        (found.output_rows, [m.output_rows for m in metrics]),
        (found.compute_ns, [m.elapsed_compute_nanos for m in metrics]),
    ]
    for column, values in columns:
        try:
            column.fromlist(values)  # all or nothing: a None in it adds none
        except TypeError:
            column.fromlist([MISSING if v is None else v for v in values])


def _scan(read: LogRead, held: bytes | None, limits: LogLimits, found: TaskExtras) -> None:
    """Append each of ``read``'s TaskEnd records' extras to ``found``'s columns, in order."""
    tasks = read.tasks
    count = len(tasks)
    # The reader's tasks are a subsequence of the TaskEnd lines decoded here (this decoder
    # asks less of a line, never more): each is matched to the next line that is it.
    n = 0
    want = tasks[0]
    stop = read.line or 0  # the JobEnd's line: nothing after it is read
    launch, rows_in, rows_out, compute = (
        found.launch_time.append,
        found.input_rows.append,
        found.output_rows.append,
        found.compute_ns.append,
    )
    decode = _RECORD.decode
    with open_log(read.path, limits) if held is None else Held(held) as stream:
        for lineno, line in Lines(stream, limits):
            if stop and lineno >= stop:
                break
            extras: _Extras | _AnyExtras | None
            if line.startswith(TASK_END_PREFIX):
                try:
                    extras = decode(line).data  # the reader's fast path does not look at ev
                except msgspec.DecodeError:
                    extras = _decode(line)
            else:
                extras = _decode(line)
            if (
                extras is None
                or extras.stage_id != want.stage_id
                or extras.task_id != want.task_id
                or extras.start_exec_time != want.start_exec_time
                or extras.end_exec_time != want.end_exec_time
            ):
                continue
            if extras.__class__ is _Extras:  # the usual shape: no call per field
                value = extras.launch_time
                launch(MISSING if value is None else value)
                metrics = extras.metrics
                if metrics is None:
                    rows_in(MISSING)
                    rows_out(MISSING)
                    compute(MISSING)
                else:
                    value = metrics.input_rows
                    rows_in(MISSING if value is None else value)
                    value = metrics.output_rows
                    rows_out(MISSING if value is None else value)
                    value = metrics.elapsed_compute_nanos
                    compute(MISSING if value is None else value)
            else:
                _append_any(found, extras)
            n += 1
            if n == count:
                break
            want = tasks[n]


def _decode(line: bytes) -> _Extras | _AnyExtras | None:
    """Return a TaskEnd line's extras read as a whole record, None for any other line."""
    try:
        env = schema.ENVELOPE_DECODER.decode(line)
        if env.ev != "TaskEnd":
            return None
        try:
            return _DATA.decode(env.data)
        except msgspec.ValidationError:
            return _ANY_DATA.decode(env.data)
    except (msgspec.DecodeError, RecursionError):
        return None


def _append_any(found: TaskExtras, extras: _Extras | _AnyExtras) -> None:
    """Append the extras of a record of another shape, each field read leniently."""
    launch = as_int(extras.launch_time)
    found.launch_time.append(MISSING if launch is None else launch)
    metrics = extras.metrics
    if isinstance(metrics, TaskMetrics):
        metrics = msgspec.structs.asdict(metrics)
    if not isinstance(metrics, dict):
        metrics = {}
    for column, key in (
        (found.input_rows, "input_rows"),
        (found.output_rows, "output_rows"),
        (found.compute_ns, _COMPUTE),
    ):
        value = as_int(metrics.get(key))
        column.append(MISSING if value is None else value)


_COMPUTE = "elapsed_compute_nanos"
