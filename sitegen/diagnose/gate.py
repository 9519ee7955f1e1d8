"""``sitegen check --fail-on``: does the newest run of any job name have a finding to stop on?"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sitegen.diagnose.insights import all_findings
from sitegen.diagnose.recurring import failed, regressions, runs_by_name
from sitegen.errors import UsageError
from sitegen.finding import FindingKind
from sitegen.model import JobSummary

FAILED = "failed"
# What --fail-on accepts: every finding kind, and "failed" (the run itself failed).
KINDS = (*(str(k) for k in FindingKind), FAILED)


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
    found = []
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
