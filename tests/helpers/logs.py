"""Helpers that write small event logs by hand (tests never read ../shared)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from sitegen.examples.generator import JobSpec, generate_job

FAILED_JOB = "Ca05RFR"  # the bundled failed job (tpch-q9)


def record(kind: str, data: Any, version: int = 1) -> bytes:
    """Encode one envelope line."""
    return b'{"ev":"%s","version":%d,"data":%s}\n' % (
        kind.encode(),
        version,
        data if isinstance(data, bytes) else msgspec.json.encode(data),
    )


def job_lines(job_id: str, name: str = "tpch-q1", **kw: Any) -> list[bytes]:
    """Return the lines of a small generated job."""
    spec = JobSpec(
        job_id=job_id,
        job_name=name,
        stages=kw.pop("stages", 2),
        tasks_per_stage=kw.pop("tasks_per_stage", 3),
        **kw,
    )
    return list(generate_job(spec, seed=1))


def write(path: Path, lines: list[bytes]) -> Path:
    """Write lines to ``path``."""
    path.write_bytes(b"".join(lines))
    return path


# A v1 log with the properties of Ballista's frozen compatibility log: a record kind
# from the future, a failed TaskEnd, a stages payload whose partition_id is an array,
# and payload key order that differs from our structs.
V1_JOB = (
    b'{"job_id":"golden-v1","job_name":"tpch-q1","job_status":"Completed. Produced 4 partitions'
    b' containing 1000 rows. Elapsed time: 95 ms.","status":"Completed","num_stages":1,'
    b'"completed_stages":1,"percent_complete":100,"start_time":1005,"end_time":1100,'
    b'"logical_plan":"Projection: l_returnflag","stage_plan":"ShuffleWriterExec"}'
)
V1_STAGES = (
    b'{"stages":[{"stage_id":"1","stage_status":"Successful","input_rows":1000,'
    b'"output_rows":250,"elapsed_compute":"28ms","tasks":[{"id":0,"status":"Successful",'
    b'"partition_id":[0,1],"scheduled_time":1008,"launch_time":1010,"start_exec_time":1012,'
    b'"end_exec_time":1040,"exec_duration":28,"finish_time":1042,"input_rows":1000,'
    b'"output_rows":250}]}]}'
)
V1_CONFIG = (
    b'{"datafusion.execution.batch_size":"8192","datafusion.execution.target_partitions":"4"}'
)
V1_DOT = (
    'digraph G {\n\tsubgraph cluster0 {\n\t\tlabel = "Stage 1 [Successful]";\n'
    '\t\tstage_1_0 [shape=box, label="ShuffleWriterExec"]\n\t}\n}\n'
)


def failed_task_end(
    stage_id: int, task_id: int, executor: str, error: str, times: tuple[int, int, int]
) -> bytes:
    """Return the TaskEnd line of a failed attempt; ``times``: launch, start and end (ms)."""
    launch, start, end = times
    return record(
        "TaskEnd",
        {
            "stage_id": stage_id,
            "task_id": task_id,
            "executor_id": executor,
            "status": {"Failed": {"reason": "ExecutionError", "error": error}},
            "launch_time": launch,
            "start_exec_time": start,
            "end_exec_time": end,
            "metrics": {"input_rows": 0, "output_rows": 0, "elapsed_compute_nanos": 0},
        },
    )


def v1_log_lines() -> list[bytes]:
    """Return a v1 log written with the properties of the upstream frozen log."""
    index = {
        "job_id": "golden-v1",
        "job_name": "tpch-q1",
        "status": "Completed",
        "job_status": "Completed. Produced 4 partitions containing 1000 rows. Elapsed time: 95 ms.",
        "start_time": 1005,
        "end_time": 1100,
        "num_stages": 1,
        "completed_stages": 1,
        "percent_complete": 100,
    }
    job_end = (
        b'{"status":"Succeeded","queued_at":1000,"started_at":1005,"completed_at":1100,'
        b'"index":'
        + msgspec.json.encode(index)
        + b',"job":'
        + V1_JOB
        + b',"stages":'
        + V1_STAGES
        + b',"config":'
        + V1_CONFIG
        + b',"dot":'
        + msgspec.json.encode(V1_DOT)
        + b"}"
    )
    return [
        record(
            "JobStart",
            {
                "job_id": "golden-v1",
                "job_name": "tpch-q1",
                "queued_at": 1000,
                "submitted_at": 1005,
                "logical_plan": None,
                "physical_plan": None,
            },
        ),
        record("StageStart", {"stage_id": 1, "partitions": 4}),
        failed_task_end(1, 1, "executor-b", "divide by zero", (1010, 1013, 1020)),
        record("StageEnd", {"stage_id": 1, "status": "Successful"}),
        record("AnEventKindFromTheFuture", {"whatever": [1, 2, {"nested": True}]}),
        record("JobEnd", job_end),
    ]


# Job ids as today's scheduler makes them by default: Snowflake ids in Crockford base32.
SNOWFLAKE_IDS = ("0382W17Y0G000", "0382W17Y0G001", "0382W17Y0G002", "0382W17Y0G003")


def upstream_job_lines(job_id: str, name: str = "tpch-q3", **kw: Any) -> list[bytes]:
    """Return a generated job's lines as today's scheduler writes them (``JobSpec.upstream``).

    No StageStart or StageEnd records, the stages payload in hash-map order, and a failed
    job's failing stage still Running in the payload and the DOT, with a running task.
    """
    kw.setdefault("stages", 3)
    kw.setdefault("tasks_per_stage", 6)
    return job_lines(job_id, name, upstream=True, **kw)


def invalid_job_lines(job_id: str, name: str = "tpch-q1", **kw: Any) -> list[bytes]:
    """Return a generated job's lines relabelled as the scheduler reports an Invalid job.

    The index and the ``job`` payload say ``status`` "Invalid" and ``job_status`` "Invalid
    State" (Ballista's ``format_job_status`` for a graph with no status it knows). The
    JobEnd's own ``status`` is set by the event that ended the job, not by that word:
    ``"Succeeded"`` (JobFinished) for ``outcome="succeeded"``, ``{"Failed": msg}``
    (JobRunningFailed) for ``outcome="failed"``; a cancel overrides the words with Cancelled.
    """
    lines = job_lines(job_id, name, **kw)
    envelope = msgspec.json.decode(lines[-1])
    assert envelope["ev"] == "JobEnd"
    end = envelope["data"]
    for part in (end["index"], end["job"]):
        part["status"], part["job_status"] = "Invalid", "Invalid State"
    lines[-1] = record("JobEnd", end)
    return lines


# The stage an adaptive replan drops in ``replanned_job_lines`` (stage 3 reads 1 and 2).
REPLANNED_STAGE = 2


def replanned_job_lines(job_id: str, name: str = "tpch-q3", **kw: Any) -> list[bytes]:
    """Return an upstream-shaped job whose final plan lost a stage its TaskEnds still name.

    Ballista #2192: an adaptive replan dropped stage ``REPLANNED_STAGE``; the JobEnd's stages
    payload, DOT and stage counts no longer name it, while its TaskEnd records stay.
    """
    kw.setdefault("stages", 4)
    return upstream_job_lines(job_id, name, replanned=kw.pop("replanned", REPLANNED_STAGE), **kw)


def counted_job_lines(job_id: str, counting: str, name: str = "tpch-q3", **kw: Any) -> list[bytes]:
    """Return an upstream-shaped job's lines with its rows counted as Ballista ``counting`` does.

    ``"2435"``: a stage's input is what it read (its parents' writers' output), its output what
    its writer wrote; ``"before"``: each summed over every operator reporting it.
    """
    return upstream_job_lines(job_id, name, counting=counting, **kw)


def write_series(
    directory: Path, name: str, countings: list[str], scales: list[float] | None = None
) -> list[str]:
    """Write daily upstream-shaped runs of ``name`` counted as ``countings`` say; return their ids.

    Every run has the same shape and task times (``scales`` multiplies a run's), so only the
    counting and the scale tell them apart.
    """
    directory.mkdir(parents=True, exist_ok=True)
    ids = []
    for n, counting in enumerate(countings):
        job_id = f"{name}-{n}"
        lines = counted_job_lines(
            job_id,
            counting,
            name,
            start_ms=1_767_225_600_000 + n * 86_400_000,
            spread=(1000, 1000),
            stage1_straggler=False,
            scale=scales[n] if scales else 1.0,
        )
        write(directory / f"{job_id}.eventlog", lines)
        ids.append(job_id)
    return ids


def with_scheduler_id(lines: list[bytes], value: bytes) -> list[bytes]:
    """Return a log's lines with ``scheduler_id`` (raw JSON) on its JobStart, as PR #2462 puts it.

    After ``submitted_at`` and before ``logical_plan`` (Ballista #2413 names the scheduler
    that ran the job; a string, or ``null``).
    """
    out = []
    for line in lines:
        envelope = msgspec.json.decode(line)
        if envelope.get("ev") != "JobStart":
            out.append(line)
            continue
        data: dict[str, Any] = {}
        for key, item in envelope["data"].items():
            if key == "logical_plan":
                data["scheduler_id"] = msgspec.Raw(value)
            data[key] = item
        data.setdefault("scheduler_id", msgspec.Raw(value))
        out.append(record("JobStart", msgspec.json.encode(data), envelope["version"]))
    return out
