"""Small event logs with exactly the task times, rows and executors a test plants."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

from sitegen.examples.generator import BASE_TIME_MS
from tests.helpers.logs import record


@dataclass(frozen=True)
class T:
    """One task attempt: its id, executor, run time, input rows and (if it failed) error."""

    task: int
    executor: str
    took: int
    rows: int = 498_000
    error: str | None = None
    # Start this many ms after its stage starts (tasks start together by default).
    delay: int = 0


@dataclass
class Job:
    """A job of stages run one after another (a gap between them), each a list of attempts."""

    job_id: str
    stages: dict[int, list[T]]
    edges: list[tuple[int, int]] = field(default_factory=list)
    failed: bool = False
    queued_ms: int = 100
    gap_ms: int = 10
    start_ms: int = BASE_TIME_MS


def _status(task: T) -> Any:
    """Return a TaskEnd status."""
    if task.error is None:
        return "Successful"
    return {"Failed": {"reason": "ExecutionError", "error": task.error}}


def lines(job: Job) -> list[bytes]:
    """Return the log's lines: JobStart, the TaskEnd records, JobEnd with its payloads."""
    out = [
        record(
            "JobStart",
            {
                "job_id": job.job_id,
                "job_name": "planted",
                "queued_at": job.start_ms - job.queued_ms,
                "submitted_at": job.start_ms,
            },
        )
    ]
    now = job.start_ms + 5
    summaries = []
    for sid, tasks in job.stages.items():
        out.append(record("StageStart", {"stage_id": sid, "partitions": len(tasks)}))
        rows = []
        stage_end = now
        for n, task in enumerate(tasks):
            start = now + task.delay
            end = start + task.took
            stage_end = max(stage_end, end)
            out.append(
                record(
                    "TaskEnd",
                    {
                        "stage_id": sid,
                        "task_id": task.task,
                        "executor_id": task.executor,
                        "status": _status(task),
                        "launch_time": start - 1,
                        "start_exec_time": start,
                        "end_exec_time": end,
                        "metrics": {"input_rows": task.rows, "output_rows": task.rows // 10},
                    },
                )
            )
            rows.append(
                {
                    "id": task.task,
                    "status": _status(task),
                    "partition_id": [n],
                    "launch_time": start - 1,
                    "start_exec_time": start,
                    "end_exec_time": end,
                    "exec_duration": task.took,
                    "input_rows": task.rows,
                    "output_rows": task.rows // 10,
                }
            )
        status = "Failed" if job.failed and sid == max(job.stages) else "Successful"
        out.append(record("StageEnd", {"stage_id": sid, "status": status}))
        summaries.append(
            {
                "stage_id": str(sid),
                "stage_status": status,
                "input_rows": sum(t.rows for t in tasks),
                "output_rows": sum(t.rows // 10 for t in tasks),
                "tasks": rows,
            }
        )
        now = stage_end + job.gap_ms
    now -= job.gap_ms - 10  # the job ends soon after its last task
    word = "Failed" if job.failed else "Completed"
    index = {
        "job_id": job.job_id,
        "job_name": "planted",
        "status": word,
        "job_status": word,
        "start_time": job.start_ms,
        "end_time": now,
        "num_stages": len(job.stages),
        "completed_stages": len(job.stages) - job.failed,
        "percent_complete": 100,
    }
    dot = ["digraph G {"]
    for n, sid in enumerate(job.stages):
        dot.append(f'\tsubgraph cluster{n} {{\n\t\tlabel = "Stage {sid} [Successful]";')
        dot.append(f'\t\tstage_{sid}_0 [shape=box, label="ShuffleWriterExec"]\n\t}}')
    dot += [f"\tstage_{a}_0 -> stage_{b}_0" for a, b in job.edges]
    dot.append("}\n")
    end = {
        "status": {"Failed": "Job failed"} if job.failed else "Succeeded",
        "queued_at": job.start_ms - job.queued_ms,
        "started_at": job.start_ms,
        "completed_at": now,
        "index": index,
        "job": {**index, "logical_plan": "Projection"},
        "stages": {"stages": summaries},
        "config": {},
        "dot": "\n".join(dot),
    }
    out.append(record("JobEnd", msgspec.json.encode(end)))
    return out


def uniform(
    stage: int, count: int, executors: int = 4, took: int = 1_000, start: int = 0
) -> list[T]:
    """Return ``count`` identical tasks spread round-robin over ``executors`` executors."""
    return [T(start + n, f"exec-{n % executors + 1}", took) for n in range(count)]
