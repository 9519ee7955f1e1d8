"""Failure groups: failed jobs and failed task attempts, grouped by their masked error text."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec

from sitegen.diagnose.masking import cause, clip, mask
from sitegen.eventlog.payload import task_status
from sitegen.eventlog.schema import TaskEnd
from sitegen.model import FAILED_JOB_STATUSES, ErrorPattern, JobSummary, is_failed

# A job keeps at most this many distinct task error patterns (a bad UDF fails 800,000 tasks
# with one text; garbage could give each its own): the rest are counted in the last one kept.
MAX_TASK_PATTERNS = 20
# Per executor, a job keeps its few most frequent patterns: the Executors page shows what an
# executor's attempts failed with, not every text (the Failures page has them all).
EXECUTOR_PATTERNS = 3
# ``failures.json`` names a group's newest jobs, at most this many (it counts them all): a
# group as old as the history would otherwise make every change to it rewrite megabytes.
JOBS_IN_JSON = 1000


def task_error(status: Any) -> str | None:
    """Return a failed task attempt's error text (None for any other status)."""
    if not is_failed(status):
        return None
    found = task_status(status)
    return found.error or found.reason or "Failed"


def task_error_patterns(
    statuses: Iterable[Any], job_id: str = "", masked: dict[str, str] | None = None
) -> list[ErrorPattern]:
    """Count one job's failed task attempts by masked error text, keeping the first example.

    ``masked``: the texts of this job masked so far, by text (shared by the job's counts).
    """
    counts: dict[str, int] = {}
    examples: dict[str, str] = {}
    overflow = 0
    # Attempts of one job mostly fail with the same few texts: mask each text once.
    masked = {} if masked is None else masked
    for status in statuses:
        error = task_error(status)
        if error is None:
            continue
        pattern = masked.get(error)
        if pattern is None:
            pattern = masked[error] = mask(error, job_id)
        if pattern in counts:
            counts[pattern] += 1
        elif len(counts) < MAX_TASK_PATTERNS:
            counts[pattern] = 1
            examples[pattern] = clip(error)
        else:
            overflow += 1
    patterns = [ErrorPattern(p, counts[p], examples[p]) for p in counts]
    if overflow and patterns:
        last = patterns[-1]
        patterns[-1] = ErrorPattern(last.pattern, last.count + overflow, last.example)
    return patterns


class ExecutorError(NamedTuple):
    """One masked error text an executor's failed attempts ended with, over the published jobs."""

    pattern: str
    example: str
    attempts: int
    jobs: int


def executor_errors(
    tasks: Iterable[TaskEnd], job_id: str = "", masked: dict[str, str] | None = None
) -> dict[str, list[ErrorPattern]]:
    """Count one job's failed attempts by executor and masked text, the most frequent first."""
    masked = {} if masked is None else masked
    failed: dict[str, list[Any]] = {}
    for task in tasks:
        if is_failed(task.status):
            failed.setdefault(task.executor_id, []).append(task.status)
    return {
        executor: sorted(task_error_patterns(statuses, job_id, masked), key=lambda p: -p.count)[
            :EXECUTOR_PATTERNS
        ]
        for executor, statuses in sorted(failed.items())
    }


class FailureRow(NamedTuple):
    """One job's failure, or one of its failed attempts' error patterns: what a group adds up."""

    job_id: str
    job_name: str
    start_time: int
    pattern: str
    example: str
    # 1 for the job's own failure (it failed by this error), 0 for failed attempts.
    failed_job: int
    tasks: int


def job_failure(job: JobSummary) -> str | None:
    """Return the text a failed job is grouped by: its JobEnd's failure, else its status text.

    An Invalid job's JobEnd may say Succeeded, with no message: it is grouped by its verbose
    status (``Invalid State``), so it counts on the Failures page as the failed run it is.
    """
    if job.failure is not None:
        return job.failure
    if job.status in FAILED_JOB_STATUSES:
        return job.job_status or job.status
    return None


def failure_rows(job: JobSummary) -> Iterator[FailureRow]:
    """Yield a job's failure rows: its own failure first, then its task error patterns."""
    failure = job_failure(job)
    if failure is not None:
        # "Job failed due to stage N failed: <task error>" joins the group of that error.
        pattern = mask(cause(failure), job.job_id)
        yield FailureRow(job.job_id, job.job_name, job.start_time, pattern, clip(failure), 1, 0)
    for errors in job.task_errors:
        yield FailureRow(
            job.job_id,
            job.job_name,
            job.start_time,
            errors.pattern,
            errors.example,
            0,
            errors.count,
        )


class FailureGroup(msgspec.Struct, gc=False):
    """One masked error text as ``failures.json`` lists it."""

    pattern: str
    example: str
    # The newest JOBS_IN_JSON jobs it hit, oldest first; how many it hit in all.
    jobs: list[str]
    jobs_total: int
    tasks: int
    first_seen: int
    last_seen: int


@dataclass
class _Group:
    """A group while it is being gathered."""

    pattern: str
    example: str
    jobs: dict[str, None] = field(default_factory=dict)
    names: set[str] = field(default_factory=set)
    failed_jobs: int = 0
    tasks: int = 0
    first_seen: int = 0
    last_seen: int = 0

    def add(self, row: FailureRow) -> None:
        """Count the row's job as hit by this error (once), and its failure and attempts."""
        self.failed_jobs += row.failed_job
        self.tasks += row.tasks
        if row.job_id in self.jobs:
            return
        self.jobs[row.job_id] = None
        if row.job_name:
            self.names.add(row.job_name)
        if len(self.jobs) == 1:
            self.first_seen = self.last_seen = row.start_time
        else:
            self.first_seen = min(self.first_seen, row.start_time)
            self.last_seen = max(self.last_seen, row.start_time)


@dataclass(frozen=True)
class GroupView:
    """A failure group with what the Failures page shows beside ``failures.json``."""

    group: FailureGroup
    names: list[str]
    failed_jobs: int


def failure_groups(jobs: Iterable[JobSummary]) -> list[GroupView]:
    """Group failed jobs (by their failure) and failed attempts (by error), most frequent first.

    ``jobs`` may come in any order: a group's jobs are listed oldest first.
    """
    ordered = sorted(jobs, key=lambda j: (j.start_time, j.job_id))
    return groups_of(row for job in ordered for row in failure_rows(job))


def groups_of(rows: Iterable[FailureRow]) -> list[GroupView]:
    """Group failure rows (oldest job first, each job's rows in order), most frequent first."""
    groups: dict[str, _Group] = {}
    for row in rows:
        group = groups.get(row.pattern)
        if group is None:
            group = groups[row.pattern] = _Group(row.pattern, row.example)
        group.add(row)
    ordered = sorted(
        groups.values(), key=lambda g: (-(g.failed_jobs + g.tasks), -len(g.jobs), g.pattern)
    )
    return [
        GroupView(
            FailureGroup(
                g.pattern,
                g.example,
                list(g.jobs)[-JOBS_IN_JSON:],
                len(g.jobs),
                g.tasks,
                g.first_seen,
                g.last_seen,
            ),
            sorted(g.names),
            g.failed_jobs,
        )
        for g in ordered
    ]


def failures_json(groups: Iterable[GroupView]) -> bytes:
    """Encode ``failures.json``: ``{"groups": [...]}`` (times in ms since the epoch)."""
    return msgspec.json.encode({"groups": [g.group for g in groups]}) + b"\n"
