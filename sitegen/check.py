"""``sitegen check``: read every log as a build would, publish nothing, judge the result."""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.builder.parallel import pool_map
from sitegen.eventlog.classify import Candidate, duplicates, judge
from sitegen.eventlog.collisions import id_collisions
from sitegen.eventlog.discover import discover_all, distinct_dirs
from sitegen.eventlog.failure import failure_message
from sitegen.eventlog.limits import DEFAULT_LIMITS, LogLimits
from sitegen.eventlog.logfiles import LogFile
from sitegen.model import Classification, JobSummary, Problem, ProblemKind, Severity


@dataclass
class CheckedLog:
    """What checking one log found: small and picklable, no payloads."""

    file: str
    classification: Classification
    problems: list[Problem]
    candidate: Candidate | None
    summary: JobSummary | None = None


@dataclass
class CheckReport:
    """Every log's classification and every problem, in file-name order."""

    log_dirs: list[Path]
    logs: int
    classifications: dict[str, int]
    problems: list[Problem] = field(default_factory=list)
    publishable: int = 0
    # The jobs a build would publish (duplicates resolved), with their findings.
    jobs: list[JobSummary] = field(default_factory=list)

    def count(self, severity: Severity) -> int:
        """Return how many problems have this severity."""
        return sum(1 for p in self.problems if p.severity is severity)

    @property
    def ok(self) -> bool:
        """Tell whether no problem is an error."""
        return self.count(Severity.ERROR) == 0


def check_log(log: LogFile, limits: LogLimits = DEFAULT_LIMITS) -> CheckedLog:
    """Read and judge one log exactly as the build's map step does.

    Whatever goes wrong with one log (``MemoryError`` too) is that log's problem.
    """
    try:
        return _check_log(log, limits)
    except Exception as exc:  # the reader says why a file cannot be read: this is a crash
        return _failed(log, failure_message(exc))


def _failed(log: LogFile, why: str) -> CheckedLog:
    """Return what checking a log found when reading or analysing it failed (``why``)."""
    problem = Problem(ProblemKind.UNREADABLE, log.key, why, None, log.name_id)
    return CheckedLog(log.key, Classification.UNREADABLE, [problem], None)


def _killed(log: LogFile, how: str) -> CheckedLog:
    """Return what checking a log found when its worker process died (``how``)."""
    return _failed(log, f"the process reading this log was {how}")


def _check_log(log: LogFile, limits: LogLimits) -> CheckedLog:
    """Do ``check_log``'s work."""
    from sitegen.eventlog.reader import read_log, refused  # not for `sitegen build`'s summary

    read = refused(log.path, log.skip) if log.skip else read_log(log.path, limits=limits)
    verdict = judge(log, read)
    candidate = summary = None
    if verdict.job_id is not None and read.job_end is not None:
        candidate = Candidate(verdict.job_id, read.job_end.completed_at, log.key)
        from sitegen.builder.mapstep import summarize  # the map step's analysis, no pages

        summary = summarize(read, log.key)
    return CheckedLog(log.key, read.classification, verdict.problems, candidate, summary)


def _check_all(logs: Sequence[LogFile], workers: int | None, limits: LogLimits) -> list[CheckedLog]:
    """Check every log, in parallel when it pays (reading dominates)."""
    one = functools.partial(check_log, limits=limits)
    with pool_map(one, logs, workers, killed=_killed) as checked:
        return list(checked)


def check(
    log_dirs: Path | Sequence[Path],
    workers: int | None = None,
    follow_links: bool = False,
    limits: LogLimits = DEFAULT_LIMITS,
) -> CheckReport:
    """Check every log in ``log_dirs`` and write nothing anywhere."""
    dirs = [log_dirs] if isinstance(log_dirs, Path) else distinct_dirs(log_dirs)[0]
    checked = _check_all(discover_all(dirs, follow_links), workers, limits)
    losers = duplicates([c.candidate for c in checked])
    for index, problem in losers.items():
        checked[index].problems.append(problem)
    published = [
        (c.candidate.job_id, c.file)
        for i, c in enumerate(checked)
        if c.candidate and i not in losers
    ]
    collisions = id_collisions(published)
    counts = Counter(str(c.classification) for c in checked)
    return CheckReport(
        log_dirs=dirs,
        logs=len(checked),
        classifications={str(k): counts[str(k)] for k in Classification},
        problems=[p for c in checked for p in c.problems] + collisions,
        publishable=sum(1 for i, c in enumerate(checked) if c.candidate and i not in losers),
        jobs=[c.summary for i, c in enumerate(checked) if c.summary and i not in losers],
    )
