"""``sitegen check``: read every log as a build would, publish nothing, judge the result.

What it prints is the command's (``commands.check``).
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from sitegen.builder.map.pool import pool_map
from sitegen.builder.options import limits_of
from sitegen.builder.plan.planner import build_timestamp
from sitegen.builder.select.retention import STALE_AFTER
from sitegen.builder.state.records import LogOutcome
from sitegen.diagnose import gate
from sitegen.eventlog.classify import Candidate, duplicates
from sitegen.eventlog.collisions import id_collisions, tui_unreachable
from sitegen.eventlog.discover import LogDirs, as_log_dirs, discover_all
from sitegen.eventlog.limits import DEFAULT_LIMITS, MAX_LINE_BYTES, MAX_LOG_BYTES, LogLimits
from sitegen.eventlog.logfiles import LogFile
from sitegen.eventlog.sources import LogSource
from sitegen.model import (
    Classification,
    JobSummary,
    Problem,
    ProblemSeverity,
)


@dataclass
class CheckReport:
    """Every log's classification and every problem, in file-name order, and the verdict."""

    log_dirs: list[LogSource]
    logs: int
    classifications: dict[str, int]
    problems: list[Problem] = field(default_factory=list)
    publishable: int = 0
    # The jobs a build would publish (duplicates resolved), with their findings.
    jobs: list[JobSummary] = field(default_factory=list)
    # The finding kinds --fail-on stops on, and why the newest runs of job names met them.
    fail_on: frozenset[str] = frozenset()
    reasons: list[gate.Reason] = field(default_factory=list)

    def count(self, severity: ProblemSeverity) -> int:
        """Return how many problems have this severity."""
        return sum(1 for p in self.problems if p.severity is severity)

    @property
    def ok(self) -> bool:
        """Tell whether no problem is an error."""
        return self.count(ProblemSeverity.ERROR) == 0

    @property
    def passed(self) -> bool:
        """Tell whether the check passes: no error, and nothing ``--fail-on`` stops on."""
        return self.ok and not self.reasons


def check_log(log: LogFile, limits: LogLimits = DEFAULT_LIMITS) -> LogOutcome:
    """Read, judge and analyse one log exactly as the build's map step does, write nothing.

    The outcome holds its classification, its problems and, if it has a job to publish, the
    job's summary. A log's failure is its problem as in a build (``read_and_analyse``).
    """
    # The map step's own first half; it loads the renderers, so not when this module loads.
    from sitegen.builder.map.jobs import read_and_analyse

    return read_and_analyse(log, limits).outcome


def _killed(log: LogFile, how: str) -> LogOutcome:
    """Return what checking a log found when its worker process died (``how``)."""
    from sitegen.builder.map.jobs import died_outcome

    return died_outcome(log, how, digest=False)


def _candidate(outcome: LogOutcome) -> Candidate | None:
    """Return a publishable log as the duplicate check sees it; None if it is not one."""
    job = outcome.summary
    return Candidate(job.job_id, job.completed_at, outcome.file) if job else None


def _check_all(logs: Sequence[LogFile], workers: int | None, limits: LogLimits) -> list[LogOutcome]:
    """Check every log, in parallel when it pays (reading dominates)."""
    one = functools.partial(check_log, limits=limits)
    with pool_map(one, logs, workers, killed=_killed) as checked:
        return list(checked)


def check_limits(
    max_log_size: int = MAX_LOG_BYTES,
    max_line_size: int = MAX_LINE_BYTES,
    stale_after: str = STALE_AFTER,
) -> LogLimits:
    """Return the limits logs are read and judged by, on the build's clock."""
    return limits_of(max_log_size, max_line_size, stale_after, build_timestamp())


def check(
    log_dirs: LogDirs,
    workers: int | None = None,
    follow_links: bool = False,
    fail_on: frozenset[str] = frozenset(),
    limits: LogLimits | None = None,
) -> CheckReport:
    """Check every log in ``log_dirs`` and write nothing anywhere.

    ``fail_on``: finding kinds (``gate.parse_kinds``) that fail the check when the newest run
    of a job name has one; ``limits``: as a build's by default (``check_limits``).
    """
    dirs = list(as_log_dirs(log_dirs))
    limits = limits or check_limits()
    logs = discover_all(dirs, follow_links)
    # A dir that lists a .running log names logs the Ballista #2405 way: there a .eventlog
    # without JobEnd ended unrecorded (a build also remembers renames: builder/plan/renaming.py).
    renaming = logs.running_dirs()
    if renaming:
        limits = dataclasses.replace(limits, renaming=limits.renaming | renaming)
    checked = _check_all(logs, workers, limits)
    losers = duplicates([_candidate(c) for c in checked])
    for index, problem in losers.items():
        checked[index].problems.append(problem)
    published = [
        (c.summary.job_id, c.file) for i, c in enumerate(checked) if c.summary and i not in losers
    ]
    collisions = id_collisions(published) + tui_unreachable(published)
    counts = Counter(str(c.classification) for c in checked)
    jobs = [c.summary for i, c in enumerate(checked) if c.summary and i not in losers]
    return CheckReport(
        log_dirs=dirs,
        logs=len(checked),
        classifications={str(k): counts[str(k)] for k in Classification},
        problems=[p for c in checked for p in c.problems] + collisions,
        publishable=len(published),
        jobs=jobs,
        fail_on=fail_on,
        reasons=gate.reasons(jobs, fail_on) if fail_on else [],
    )
