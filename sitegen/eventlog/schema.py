"""msgspec structs for the v1 event-log records (Ballista's ``ballista-history`` crate)."""

from __future__ import annotations

from typing import Any

import msgspec

# The highest record version this sitegen understands. A JobEnd written with a
# higher one is reported as "newer", never guessed at.
SCHEMA_VERSION = 1


class Envelope(msgspec.Struct):
    """Every line: the record kind, its schema version and the undecoded payload."""

    ev: str
    version: int
    data: msgspec.Raw


class JobStart(msgspec.Struct):
    """First record of a log; fields added later (``scheduler_id``) are optional."""

    job_id: str
    job_name: str = ""
    queued_at: int = 0
    submitted_at: int = 0
    logical_plan: str | None = None
    physical_plan: str | None = None
    scheduler_id: str | None = None


class StageStart(msgspec.Struct):
    """A stage was submitted."""

    stage_id: int
    partitions: int = 0


class StageEnd(msgspec.Struct):
    """A stage reached a terminal status."""

    stage_id: int
    status: str = ""


class TaskEnd(msgspec.Struct, gc=False):
    """One task attempt finished (retries and failures each get their own).

    Its ``launch_time`` and ``metrics`` are not decoded: the pages show the stages payload's
    times and numbers per task, and a log holds one TaskEnd per attempt (800,000 in a big one).
    """

    stage_id: int
    task_id: int
    executor_id: str
    # "Running" | "Successful" | {"Failed": {"reason": ..., "error": ...}}; kept loose
    # because later Ballista versions add fields to the Failed variant.
    status: Any
    start_exec_time: int = 0
    end_exec_time: int = 0


class TaskEndRecord(msgspec.Struct, gc=False):
    """A whole TaskEnd line, decoded in one pass (the reader's fast path).

    Untracked by the garbage collector like the TaskEnd it holds: one per line, and
    holding only strings, ints and that struct, it can never be part of a cycle.
    """

    ev: str
    version: int
    data: TaskEnd


class JobIndex(msgspec.Struct):
    """The frozen summary a history server lists and sorts jobs by."""

    job_id: str
    job_name: str
    status: str
    job_status: str
    start_time: int
    end_time: int
    num_stages: int
    completed_stages: int
    percent_complete: int


class JobEnd(msgspec.Struct):
    """Terminal record: the finished REST responses, relayed byte for byte."""

    status: Any
    queued_at: int
    started_at: int
    completed_at: int
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
    num_stages: int
    completed_stages: int
    percent_complete: int
    start_time: int
    end_time: int


class JobEndRecord(msgspec.Struct):
    """A whole JobEnd line, decoded in one pass: its payloads are half the log's bytes."""

    ev: str
    version: int
    data: JobEnd


ENVELOPE_DECODER = msgspec.json.Decoder(Envelope)
JOB_START_DECODER = msgspec.json.Decoder(JobStart)
STAGE_START_DECODER = msgspec.json.Decoder(StageStart)
STAGE_END_DECODER = msgspec.json.Decoder(StageEnd)
TASK_END_DECODER = msgspec.json.Decoder(TaskEnd)
TASK_END_RECORD_DECODER = msgspec.json.Decoder(TaskEndRecord)
JOB_END_DECODER = msgspec.json.Decoder(JobEnd)
JOB_END_RECORD_DECODER = msgspec.json.Decoder(JobEndRecord)
CONFIG_DECODER = msgspec.json.Decoder(dict[str, str])
