"""Judge logs one way for `build` and `check`: what is wrong, and the id a job publishes under."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple, Protocol

from sitegen.eventlog.compression import compression_of
from sitegen.eventlog.discover import unsafe_id_reason
from sitegen.eventlog.limits import DEFAULT_LIMITS, LogLimits
from sitegen.eventlog.logfiles import LogFile, label_of
from sitegen.model import Classification, Problem, ProblemKind

if TYPE_CHECKING:
    from sitegen.eventlog.reader import LogRead  # the reader: only where logs are read

_PROBLEM_OF = {
    Classification.INCOMPLETE: ProblemKind.INCOMPLETE,
    Classification.NEWER_VERSION: ProblemKind.NEWER_VERSION,
    Classification.MALFORMED: ProblemKind.MALFORMED,
    Classification.UNREADABLE: ProblemKind.UNREADABLE,
    Classification.NOT_A_LOG: ProblemKind.NOT_A_LOG,
}


@dataclass
class Verdict:
    """What one log amounts to on its own, before duplicates across logs are looked at."""

    problems: list[Problem] = field(default_factory=list)
    # The id the job is published under; None when the log cannot be published.
    job_id: str | None = None
    # What the log is taken for when its name, dir or age say more than its records
    # (abandoned, ended unrecorded).
    classification: Classification | None = None


class Candidate(NamedTuple):
    """A publishable log as the duplicate check sees it (a tuple: one per log, made fast)."""

    job_id: str
    completed_at: int
    file: str


def judge(log: LogFile, read: LogRead, limits: LogLimits = DEFAULT_LIMITS) -> Verdict:
    """Classify one read log: its problems, and the job id it can be published under."""
    name = log.key
    damaged = read.damage_message()
    if read.job_end is None:
        message = read.message
        if read.classification is Classification.INCOMPLETE and log.running:
            abandoned = limits.abandoned(log.mtime_ns)
            if abandoned is not None:
                problem = Problem(ProblemKind.ABANDONED, name, abandoned, None, log.name_id)
                return Verdict([problem], classification=Classification.ABANDONED)
            message = "still running (.eventlog.running): no JobEnd record yet"
        elif read.classification is Classification.INCOMPLETE:
            ended = ended_unrecorded(log, limits)
            if ended is not None:
                problems = [Problem(ProblemKind.ENDED_UNRECORDED, name, ended, None, log.name_id)]
                if damaged is not None:
                    problems.append(
                        Problem(ProblemKind.DAMAGED_LINES, name, damaged, None, log.name_id)
                    )
                return Verdict(problems, classification=Classification.ENDED_UNRECORDED)
        kind = _PROBLEM_OF[read.classification]
        problems = [Problem(kind, name, message, read.line, log.name_id)]
        if damaged is not None and read.classification is Classification.INCOMPLETE:
            problems.append(Problem(ProblemKind.DAMAGED_LINES, name, damaged, None, log.name_id))
        return Verdict(problems)
    job_id = read.job_end.index.job_id
    reason = unsafe_id_reason(job_id)
    if reason is not None:
        return Verdict([Problem(ProblemKind.UNSAFE_ID, name, reason, read.line)])
    verdict = Verdict(job_id=job_id)
    if job_id != log.name_id:
        verdict.problems.append(
            Problem(
                ProblemKind.ID_MISMATCH,
                name,
                f"file name says {log.name_id!r} but JobEnd.index says {job_id!r}; "
                "published under the JobEnd id",
                read.line,
                job_id,
            )
        )
    if damaged is not None:
        verdict.problems.append(Problem(ProblemKind.DAMAGED_LINES, name, damaged, None, job_id))
    return verdict


def ended_unrecorded(log: LogFile, limits: LogLimits) -> str | None:
    """Say why a log not named ``.running`` that holds no JobEnd is a job that ended, or None.

    Since Ballista #2405 a scheduler writes ``<id>.eventlog.running`` and renames it to
    ``<id>.eventlog`` when the job ends, whether or not it could write a JobEnd; one from
    before #2405 writes ``<id>.eventlog`` from the start. So a ``.eventlog`` without JobEnd
    ended unrecorded where its dir shows the #2405 naming (``limits.renaming``: the build
    tells it), or once it is older than ``--stale-after``; else it may still be running. A
    compressed log is a finished file whatever its dir.
    """
    if compression_of(log.path) is not None:
        return "a compressed log holds no JobEnd record: the job ended unrecorded"
    if label_of(log.key) in limits.renaming:
        return (
            "no JobEnd record, and its dir's scheduler names a log .eventlog only once its job "
            "ended (Ballista #2405): the job ended unrecorded"
        )
    age = limits.stale(log.mtime_ns)
    if age is not None:
        return (
            f"no JobEnd record, and last written {age} ago: the job ended unrecorded (or its "
            "scheduler, one from before Ballista #2405, stopped before the job ended)"
        )
    return None


class Claim(Protocol):
    """Anything that claims a job id: a Candidate, or a build's pick of a log."""

    @property
    def job_id(self) -> str: ...

    @property
    def completed_at(self) -> int: ...

    @property
    def file(self) -> str: ...


def duplicates(candidates: Sequence[Claim | None]) -> dict[int, Problem]:
    """Keep the later-completed log per job id; return a problem for each other one, by index."""
    # Ids are nearly always unique: find the clashing ones first, then judge only those.
    first: dict[str, int] = {}
    clashes: dict[str, list[int]] = {}
    for index, candidate in enumerate(candidates):
        if candidate is not None:
            seen = first.setdefault(candidate.job_id, index)
            if seen != index:
                clashes.setdefault(candidate.job_id, [seen]).append(index)
    losers: dict[int, Problem] = {}
    for job_id, indexes in clashes.items():
        group = [(index, c) for index in indexes if (c := candidates[index]) is not None]
        # Latest completion wins; among equal times the first file name, so runs agree.
        group.sort(key=lambda item: (-item[1].completed_at, item[1].file))
        winner = group[0][1]
        for index, loser in group[1:]:
            later = winner.completed_at > loser.completed_at
            losers[index] = duplicate_problem(job_id, loser.file, winner.file, later)
    return losers


def duplicate_problem(job_id: str, loser: str, winner: str, later: bool) -> Problem:
    """Return the problem of a log whose job id ``winner`` has (``later``: it completed later)."""
    why = "completed later" if later else "completed at the same time and comes first by name"
    return Problem(
        ProblemKind.DUPLICATE_ID,
        loser,
        f"job id {job_id!r} is also in {winner}, which {why}; this log was not published",
        job_id=job_id,
    )
