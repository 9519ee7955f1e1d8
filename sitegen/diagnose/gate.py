"""``sitegen check --fail-on``: does the newest run of any job name have a finding to stop on?"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sitegen.diagnose.fleet import FAILING, FleetExecutor, pool
from sitegen.diagnose.insights import all_findings
from sitegen.diagnose.recurring import failed, regressions, runs_by_name
from sitegen.errors import UsageError
from sitegen.finding import FindingKind
from sitegen.model import JobSummary

FAILED = "failed"
# An executor the fleet verdict, pooled over every job read, calls slow or failing.
FLEET = "fleet"
# What --fail-on accepts: every finding kind, "failed" (the run itself failed) and "fleet".
KINDS = (*(str(k) for k in FindingKind), FAILED, FLEET)


def parse_kinds(text: str) -> frozenset[str]:
    """Read ``regression,failed``; raise UsageError naming any word that is not a kind."""
    words = [w.strip() for w in text.split(",") if w.strip()]
    unknown = [w for w in words if w not in KINDS]
    if unknown or not words:
        raise UsageError(
            f"--fail-on takes a comma-separated list of {', '.join(KINDS)}; "
            f"got {', '.join(map(repr, unknown)) or 'nothing'}"
        )
    return frozenset(words)


@dataclass(frozen=True)
class Reason:
    """Why the check fails: a job (the newest run of its name) and one finding or its failure."""

    job: JobSummary
    kind: str
    why: str


def reasons(jobs: Iterable[JobSummary], kinds: frozenset[str]) -> list[Reason]:
    """Return why the newest run of each job name fails the check, by name."""
    jobs = list(jobs)
    found = fleet_reasons(jobs) if FLEET in kinds else []
    for runs in runs_by_name(jobs).values():
        newest = runs[-1]
        if FAILED in kinds and failed(newest):
            found.append(Reason(newest, FAILED, newest.failure or f"status {newest.status}"))
        regressed = regressions(runs)
        for finding in all_findings(newest, regressed):
            if finding.kind in kinds:
                found.append(
                    Reason(newest, str(finding.kind), f"{finding.severity}: {finding.message}")
                )
    return found


def fleet_reasons(jobs: Iterable[JobSummary]) -> list[Reason]:
    """Return the executors the fleet verdict calls slow or failing, each with its newest job.

    The newest job it ran in within its window stands for it (a reason names a job).
    """
    jobs = list(jobs)
    found = []
    for e in pool((j.start_time, j.executors, j.evidence) for j in jobs):
        if e.window is None:
            continue
        begin, end = e.window
        within = [j for j in jobs if e.executor_id in j.executors and begin <= j.start_time < end]
        newest = max(within, key=lambda j: (j.start_time, j.job_id))
        found.append(Reason(newest, FLEET, f"executor {e.executor_id}: {verdict_sentence(e)}"))
    return found


def verdict_sentence(e: FleetExecutor) -> str:
    """Return a fleet verdict as one plain sentence (times in ms since the epoch)."""
    assert e.window is not None
    if e.verdict == FAILING:
        return (
            f"failing in {e.window_jobs} jobs: {e.own_failed} failed attempts of its own "
            f"(window {e.window[0]}-{e.window[1]} ms)"
        )
    return (
        f"slow in {e.window_jobs} jobs: {e.window_ratio:.2f}x its peers' time "
        f"(window {e.window[0]}-{e.window[1]} ms)"
    )


def reason_line(reason: Reason) -> str:
    """Return one text line for a reason: ``fail-on: <name>: job <id>: <kind>: <why>``."""
    why = " ".join(reason.why.split())  # an error text may span lines: keep it to one
    return f"fail-on: {reason.job.job_name}: job {reason.job.job_id}: {reason.kind}: {why}"


def verdict_line(kinds: frozenset[str], found: list[Reason]) -> str:
    """Return the last line of ``--fail-on``'s text output."""
    words = ",".join(sorted(kinds))
    if not found:
        return f"--fail-on {words}: no newest run of a job name has one: passed."
    jobs = len({r.job.job_id for r in found})
    return f"--fail-on {words}: {jobs} newest run{'s' if jobs != 1 else ''} to look at: failed."
