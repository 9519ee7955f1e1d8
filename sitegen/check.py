"""``sitegen check``: read every log as a build would, publish nothing, judge the result."""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from sitegen.builder.options import limits_of
from sitegen.builder.parallel import pool_map
from sitegen.builder.plan import build_timestamp
from sitegen.builder.report import dump, problem_json, where
from sitegen.builder.retention import STALE_AFTER
from sitegen.diagnose import gate
from sitegen.diagnose.insights import all_findings
from sitegen.diagnose.recurring import all_regressions
from sitegen.eventlog.classify import Candidate, duplicates, judge
from sitegen.eventlog.collisions import id_collisions, tui_unreachable
from sitegen.eventlog.discover import LogDirs, as_log_dirs, discover_all
from sitegen.eventlog.failure import failure_message
from sitegen.eventlog.limits import DEFAULT_LIMITS, MAX_LINE_BYTES, MAX_LOG_BYTES, LogLimits
from sitegen.eventlog.logfiles import LogFile
from sitegen.eventlog.storage import LogDir
from sitegen.model import (
    Classification,
    JobSummary,
    Problem,
    ProblemKind,
    ProblemSeverity,
    newest_first,
)
from sitegen.text.formatting import plural


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
    """Every log's classification and every problem, in file-name order, and the verdict."""

    log_dirs: list[LogDir]
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


def check_log(log: LogFile, limits: LogLimits = DEFAULT_LIMITS) -> CheckedLog:
    """Read, judge and analyse one log exactly as the build's map step does.

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
    verdict = judge(log, read, limits)
    candidate = summary = None
    if verdict.job_id is not None and read.job_end is not None:
        candidate = Candidate(verdict.job_id, read.job_end.completed_at, log.key)
        from sitegen.diagnose.analysis import analyse  # the map step's analysis, no pages

        summary = analyse(read, log.key, log.size).summary
    classification = verdict.classification or read.classification
    return CheckedLog(log.key, classification, verdict.problems, candidate, summary)


def _check_all(logs: Sequence[LogFile], workers: int | None, limits: LogLimits) -> list[CheckedLog]:
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
    # without JobEnd ended unrecorded (a build also remembers renames: builder/renaming.py).
    renaming = logs.running_dirs()
    if renaming:
        limits = dataclasses.replace(limits, renaming=limits.renaming | renaming)
    checked = _check_all(logs, workers, limits)
    losers = duplicates([c.candidate for c in checked])
    for index, problem in losers.items():
        checked[index].problems.append(problem)
    published = [
        (c.candidate.job_id, c.file)
        for i, c in enumerate(checked)
        if c.candidate and i not in losers
    ]
    collisions = id_collisions(published) + tui_unreachable(published)
    counts = Counter(str(c.classification) for c in checked)
    jobs = [c.summary for i, c in enumerate(checked) if c.summary and i not in losers]
    return CheckReport(
        log_dirs=dirs,
        logs=len(checked),
        classifications={str(k): counts[str(k)] for k in Classification},
        problems=[p for c in checked for p in c.problems] + collisions,
        publishable=sum(1 for i, c in enumerate(checked) if c.candidate and i not in losers),
        jobs=jobs,
        fail_on=fail_on,
        reasons=gate.reasons(jobs, fail_on) if fail_on else [],
    )


def check_lines(report: CheckReport) -> list[str]:
    """Return one line per problem (``file:line: severity: kind: message``) and a summary."""
    lines = [f"{where(p)}: {p.severity}: {p.kind}: {p.message}" for p in report.problems]
    classes = ", ".join(f"{n} {name}" for name, n in report.classifications.items() if n)
    lines.append(
        f"Checked {plural(report.logs, 'log')} in {', '.join(map(str, report.log_dirs))}"
        + (f": {classes}." if classes else ".")
    )
    found = [plural(report.count(s), s) for s in ProblemSeverity if report.count(s)]
    verdict = "check passed" if report.ok else "check failed"
    lines.append(
        f"{plural(report.publishable, 'job')} can be published; "
        f"{', '.join(found) if found else 'no problems'}: {verdict}."
    )
    if report.fail_on:
        lines += [gate.reason_line(r) for r in report.reasons]
        lines.append(gate.verdict_line(report.fail_on, report.reasons))
    return lines


def check_json(report: CheckReport) -> str:
    """Return the check result as one JSON object, for scripts and CI.

    It holds every publishable job with its findings, and why ``--fail-on`` failed.
    """
    regressed = all_regressions(report.jobs)
    by_kind = {str(kind): 0 for kind in ProblemKind}
    for p in report.problems:
        by_kind[str(p.kind)] += 1
    return dump(
        {
            "log_dirs": [str(d) for d in report.log_dirs],
            "ok": report.ok,
            "logs": report.logs,
            "publishable": report.publishable,
            "classifications": report.classifications,
            "problems_by_kind": by_kind,
            **{f"{s}s": report.count(s) for s in ProblemSeverity},
            "problems": [problem_json(p, severity=p.severity) for p in report.problems],
            "jobs": [
                {
                    "job_id": j.job_id,
                    "job_name": j.job_name,
                    "status": j.status,
                    "findings": msgspec.to_builtins(all_findings(j, regressed)),
                }
                for j in newest_first(report.jobs)
            ],
            "fail_on": sorted(report.fail_on),
            "fail_on_reasons": [
                {"job_id": r.job.job_id, "job_name": r.job.job_name, "kind": r.kind, "why": r.why}
                for r in report.reasons
            ],
        }
    )
