"""Failed task attempts: one finding per stage with the errors grouped, and a job's root cause."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sitegen.diagnose import thresholds as th
from sitegen.eventlog.payload import TaskStatus, TaskSummary, as_int, task_status, task_statuses
from sitegen.eventlog.schema import TaskEnd
from sitegen.finding import Finding, FindingKind, FindingSeverity
from sitegen.model import is_failed
from sitegen.text.formatting import timestamp_ms


def error_text(status: TaskStatus) -> str:
    """Return what a failure says, reason and error together (``ExecutionError: …``)."""
    parts = [p for p in (status.reason, status.error) if p]
    return ": ".join(parts) or "(no error text)"


def _clip(text: str) -> str:
    """Shorten an error for a one-sentence message (the stage page shows it whole)."""
    text = " ".join(text.split())
    return text if len(text) <= th.ERROR_CHARS else text[: th.ERROR_CHARS - 1] + "…"


@dataclass(frozen=True)
class Attempt:
    """One failed attempt: where it ran, when it ended and what it said."""

    stage_id: int | None
    stage: str
    task_id: int | None
    executor_id: str | None
    ended: int
    started: int
    error: str


def failed_attempts(
    stage_label: str, ends: list[TaskEnd], rows: list[TaskSummary]
) -> list[Attempt]:
    """List a stage's failed attempts: its TaskEnd records, else its payload rows."""
    sid = as_int(stage_label)
    found = []
    for end in ends:
        if end.status != "Successful" and is_failed(end.status):
            found.append(
                Attempt(
                    sid,
                    stage_label,
                    end.task_id,
                    end.executor_id,
                    end.end_exec_time,
                    end.start_exec_time,
                    error_text(task_status(end.status)),
                )
            )
    if found or ends:
        return found
    statuses = task_statuses([r.status for r in rows])
    for row, state in zip(rows, statuses, strict=True):
        if state.failed:
            found.append(
                Attempt(
                    sid,
                    stage_label,
                    row.id,
                    None,
                    row.end_exec_time or 0,
                    row.start_exec_time or 0,
                    error_text(state),
                )
            )
    return found


def failed_finding(attempts: list[Attempt], job_failed: bool) -> Finding | None:
    """Return one finding for a stage's failed attempts (None if none failed)."""
    if not attempts:
        return None
    first = attempts[0]
    errors = Counter(a.error for a in attempts)
    executors = sorted({a.executor_id for a in attempts if a.executor_id})
    quoted = "; ".join(
        f"{count}\u00d7 {_clip(text)}" for text, count in errors.most_common(th.ERRORS_QUOTED)
    )
    others = len(errors) - th.ERRORS_QUOTED
    if others > 0:
        quoted += f"; and {others} other error{'s' if others > 1 else ''}"
    n = len(attempts)
    where = f" on {', '.join(executors)}" if 0 < len(executors) <= 3 else ""
    if len(executors) > 3:
        where = f" on {len(executors)} executors"
    outcome = " The job failed." if job_failed else " Retries succeeded."
    # Retries in a job that succeeded matter by what they cost it (diagnosis weighs that in):
    # how many failed says nothing of how long the job waited for them.
    grade = FindingSeverity.CRITICAL if job_failed else FindingSeverity.INFO
    return Finding(
        kind=FindingKind.FAILED_ATTEMPTS,
        severity=grade,
        stage_id=first.stage_id,
        task_id=first.task_id if len({a.task_id for a in attempts}) == 1 else None,
        executor_id=executors[0] if len(executors) == 1 else None,
        value=float(n),
        message=(
            f"{n} task attempt{'s' if n > 1 else ''} of stage {first.stage} failed{where}: "
            f"{quoted}.{outcome}"
        ),
    )


def root_cause(attempts: list[Attempt]) -> Attempt | None:
    """Return the failed attempt that ended first (ties by start, stage and task).

    An attempt with no time at all (lost before it ran) is first only when no other has one.
    """
    if not attempts:
        return None
    return min(
        attempts,
        key=lambda a: (
            (a.ended or a.started) <= 0,
            a.ended or a.started,
            a.started,
            a.stage_id or 0,
            a.task_id or 0,
        ),
    )


def root_cause_sentence(attempt: Attempt) -> str:
    """Describe the first failure the way the job page's failure box shows it."""
    task = "?" if attempt.task_id is None else attempt.task_id
    on = f" on {attempt.executor_id}" if attempt.executor_id else ""
    at = f" at {timestamp_ms(attempt.ended)}" if attempt.ended > 0 else ""
    return f"Task {task} of stage {attempt.stage} failed first{at}{on}: {attempt.error}"
