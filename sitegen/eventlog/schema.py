"""msgspec structs for the v1 event-log records (Ballista's ``ballista-history`` crate)."""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

# The highest record version this sitegen understands. A JobEnd written with a
# higher one is reported as "newer", never guessed at.
SCHEMA_VERSION = 1

# Every number a log gives is a signed 64-bit integer in Ballista. A bigger one is damage: it
# fails to decode here (the log is malformed, with its line) instead of failing the build later,
# where JSON encoders and date arithmetic cannot take it.
Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class Envelope(msgspec.Struct):
    """Every line: the record kind, its schema version and the undecoded payload."""

    ev: str
    version: Int64
    data: msgspec.Raw


class JobStart(msgspec.Struct):
    """First record of a log; fields added later (``scheduler_id``) are optional."""

    job_id: str
    job_name: str = ""
    queued_at: Int64 = 0
    submitted_at: Int64 = 0
    logical_plan: str | None = None
    physical_plan: str | None = None
    # Proposed upstream (Ballista #2413, PR #2462), its name and type not settled: kept
    # undecoded, so any JSON value a scheduler writes there (a number, an object, 1e999)
    # never makes the JobStart line damaged. Only a string is read (``scheduler_id``).
    raw_scheduler_id: msgspec.Raw = msgspec.field(default=msgspec.Raw(b"null"), name="scheduler_id")

    @property
    def scheduler_id(self) -> str | None:
        """Return the scheduler's id when the log gives it as a string, else None.

        A value of another type (a number, an object, a list, null) is not guessed at: it
        reads as no id, and the rest of the record is read as usual.
        """
        raw = memoryview(self.raw_scheduler_id)
        if raw[:1].tobytes() != b'"':
            return None
        return _SCHEDULER_ID_DECODER.decode(raw)


class StageStart(msgspec.Struct):
    """A stage was submitted."""

    stage_id: Int64
    partitions: Int64 = 0


class StageEnd(msgspec.Struct):
    """A stage reached a terminal status."""

    stage_id: Int64
    status: str = ""


class TaskEnd(msgspec.Struct, gc=False):
    """One task attempt finished (retries and failures each get their own).

    Its ``launch_time`` and ``metrics`` are not decoded: the pages show the stages payload's
    times and numbers per task, and a log holds one TaskEnd per attempt (800,000 in a big one).
    """

    stage_id: Int64
    task_id: Int64
    executor_id: str
    # "Running" | "Successful" | {"Failed": {"reason": ..., "error": ...}}; kept loose
    # because later Ballista versions add fields to the Failed variant.
    status: Any
    start_exec_time: Int64 = 0
    end_exec_time: Int64 = 0


class TaskMetrics(msgspec.Struct, gc=False):
    """The TaskEnd metrics the SQL tables keep, as today's scheduler writes them."""

    input_rows: Int64 | None = None
    output_rows: Int64 | None = None
    elapsed_compute_nanos: Int64 | None = None


class MeasuredTaskEnd(TaskEnd, gc=False):
    """A TaskEnd with its launch time and metrics too: what the SQL tables read of it.

    Decoded so only where the log is held and its rows are wanted (``read_log(measured=…)``):
    in the same pass, not in a second reading of the log (``eventlog.taskmetrics``).
    """

    launch_time: Int64 | None = None
    metrics: TaskMetrics | None = None


class TaskEndRecord(msgspec.Struct, gc=False):
    """A whole TaskEnd line, decoded in one pass (the reader's fast path).

    Untracked by the garbage collector like the TaskEnd it holds: one per line, and
    holding only strings, ints and that struct, it can never be part of a cycle.
    """

    ev: str
    version: Int64
    data: TaskEnd


class MeasuredTaskEndRecord(msgspec.Struct, gc=False):
    """A whole TaskEnd line with its launch time and metrics, decoded in one pass."""

    ev: str
    version: Int64
    data: MeasuredTaskEnd


class JobIndex(msgspec.Struct):
    """The frozen summary a history server lists and sorts jobs by."""

    job_id: str
    job_name: str
    status: str
    job_status: str
    start_time: Int64
    end_time: Int64
    num_stages: Int64
    completed_stages: Int64
    percent_complete: Int64


class JobEnd(msgspec.Struct):
    """Terminal record: the finished REST responses, relayed byte for byte."""

    status: Any
    queued_at: Int64
    started_at: Int64
    completed_at: Int64
    index: JobIndex
    job: msgspec.Raw
    stages: msgspec.Raw
    config: msgspec.Raw
    dot: str


class JobListEntry(msgspec.Struct, gc=False):
    """One ``/api/jobs`` element, fields in Ballista's ``JobResponse`` order."""

    job_id: str
    job_name: str
    job_status: str
    status: str
    num_stages: Int64
    completed_stages: Int64
    percent_complete: Int64
    start_time: Int64
    end_time: Int64


class JobEndRecord(msgspec.Struct):
    """A whole JobEnd line, decoded in one pass: its payloads are half the log's bytes."""

    ev: str
    version: Int64
    data: JobEnd


ENVELOPE_DECODER = msgspec.json.Decoder(Envelope)
_SCHEDULER_ID_DECODER = msgspec.json.Decoder(str)
JOB_START_DECODER = msgspec.json.Decoder(JobStart)
STAGE_START_DECODER = msgspec.json.Decoder(StageStart)
STAGE_END_DECODER = msgspec.json.Decoder(StageEnd)
TASK_END_DECODER = msgspec.json.Decoder(TaskEnd)
TASK_END_RECORD_DECODER = msgspec.json.Decoder(TaskEndRecord)
MEASURED_TASK_END_RECORD_DECODER = msgspec.json.Decoder(MeasuredTaskEndRecord)
JOB_END_DECODER = msgspec.json.Decoder(JobEnd)
JOB_END_RECORD_DECODER = msgspec.json.Decoder(JobEndRecord)
CONFIG_DECODER = msgspec.json.Decoder(dict[str, str])
