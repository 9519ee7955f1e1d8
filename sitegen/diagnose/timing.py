"""Time a job spent not running tasks: waiting in the queue, and idle stretches in its run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sitegen.diagnose import thresholds as th
from sitegen.diagnose.stats import times
from sitegen.finding import Finding, FindingKind, FindingSeverity
from sitegen.text.formatting import duration, percent


def queued(queued_at: int, started_at: int, completed_at: int) -> Finding | None:
    """Return a queued finding when the wait made the job take far longer than its run."""
    if not (0 < queued_at <= started_at <= completed_at):
        return None
    wait, run = started_at - queued_at, completed_at - started_at
    ratio = (wait + run) / max(run, 1)
    if wait < th.QUEUED_MIN_MS or wait < th.QUEUED_MIN_SHARE * (wait + run):
        return None
    grade = th.at_least_info(ratio)
    return _job_finding(
        FindingKind.QUEUED,
        grade,
        ratio,
        (
            f"The job waited {duration(wait)} in the queue and then ran {duration(run)}: "
            f"from submission to end it took {times(ratio)} its run time."
        ),
    )


@dataclass(frozen=True)
class Gap:
    """A stretch of a job's run when no task was executing anywhere."""

    start: int
    end: int

    @property
    def length(self) -> int:
        """Return its length in milliseconds."""
        return self.end - self.start


def idle_gaps(
    starts: Sequence[int], ends: Sequence[int], started_at: int, completed_at: int
) -> list[Gap]:
    """Return the stretches of at least IDLE_MIN_GAP_MS in the run when no attempt executed.

    ``starts`` and ``ends``: the attempts' times (a start of 0: it never ran). The stretches
    lie within the run: an attempt stamped past its end opens none beyond it, and one whose
    end is before its start (lost mid-run) covers up to its start.
    """
    gaps = []
    covered = started_at  # everything before this instant is accounted for
    for n in sorted(range(len(starts)), key=starts.__getitem__):
        start = starts[n]
        if start <= 0:
            continue  # never ran
        # min and max as comparisons: one attempt at a time, 800,000 at most.
        if start > completed_at:
            start = completed_at
        if start - covered >= th.IDLE_MIN_GAP_MS:
            gaps.append(Gap(covered, start))
        end = ends[n]
        if end < start:
            end = start
        if end > completed_at:
            end = completed_at
        if end > covered:
            covered = end
    if completed_at - covered >= th.IDLE_MIN_GAP_MS:
        gaps.append(Gap(covered, completed_at))
    return gaps


def idle(
    starts: Sequence[int], ends: Sequence[int], started_at: int, completed_at: int
) -> Finding | None:
    """Return an idle finding when no attempt ran for a large part of the job's run."""
    run = completed_at - started_at
    if not starts or started_at <= 0 or run <= 0:
        return None
    gaps = idle_gaps(starts, ends, started_at, completed_at)
    total = sum(g.length for g in gaps)
    if total <= 0:
        return None
    if total < th.IDLE_MIN_SHARE * run:
        return None
    ratio = run / max(run - total, 1)
    grade = th.at_least_info(ratio)
    longest = max(gaps, key=lambda g: g.length)
    return _job_finding(
        FindingKind.IDLE,
        grade,
        ratio,
        (
            f"No task was running for {duration(total)} of the job's {duration(run)} run "
            f"({percent(total, run)}); the longest stretch, {duration(longest.length)}, began "
            f"{duration(longest.start - started_at)} after the job started."
        ),
    )


def _job_finding(kind: FindingKind, grade: FindingSeverity, ratio: float, message: str) -> Finding:
    """Return a finding about the whole job: no stage, task or executor."""
    return Finding(kind, grade, None, None, None, round(ratio, 2), message)
