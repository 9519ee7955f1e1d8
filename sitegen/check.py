"""``sitegen check``: read every log as a build would, publish nothing, judge the result."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.builder.parallel import pool_map
from sitegen.eventlog.classify import Candidate, duplicates, judge
from sitegen.eventlog.discover import LogFile, discover_all
from sitegen.model import Classification, Problem, ProblemKind

# How much each kind of problem weighs. Errors make the check fail: the log is damaged,
# newer than this sitegen, or cannot be published. A warning still publishes (under the
# JobEnd id). A running or abandoned log is no damage: it is noted and publishes once it ends.
SEVERITY = {
    ProblemKind.NEWER_VERSION: "error",
    ProblemKind.MALFORMED: "error",
    ProblemKind.UNREADABLE: "error",
    ProblemKind.NOT_A_LOG: "error",
    ProblemKind.UNSAFE_ID: "error",
    ProblemKind.DUPLICATE_ID: "error",
    ProblemKind.ID_MISMATCH: "warning",
    ProblemKind.INCOMPLETE: "note",
}
SEVERITIES = ("error", "warning", "note")


def severity_of(kind: ProblemKind) -> str:
    """Return a problem kind's severity; a kind this table does not know fails safe as an error."""
    return SEVERITY.get(kind, "error")


@dataclass
class CheckedLog:
    """What checking one log found: small and picklable, no payloads."""

    file: str
    classification: Classification
    problems: list[Problem]
    candidate: Candidate | None


@dataclass
class CheckReport:
    """Every log's classification and every problem, in file-name order."""

    log_dirs: list[Path]
    logs: int
    classifications: dict[str, int]
    problems: list[Problem] = field(default_factory=list)
    publishable: int = 0

    def count(self, severity: str) -> int:
        """Return how many problems have this severity."""
        return sum(1 for p in self.problems if severity_of(p.kind) == severity)

    @property
    def ok(self) -> bool:
        """Tell whether no problem is an error."""
        return self.count("error") == 0


def check_log(log: LogFile) -> CheckedLog:
    """Read and judge one log exactly as the build's map step does."""
    from sitegen.eventlog.reader import read_log, refused  # not for `sitegen build`'s summary

    read = refused(log.path, log.skip) if log.skip else read_log(log.path)
    verdict = judge(log, read)
    candidate = None
    if verdict.job_id is not None and read.job_end is not None:
        candidate = Candidate(verdict.job_id, read.job_end.completed_at, log.key)
    return CheckedLog(log.key, read.classification, verdict.problems, candidate)


def _check_all(logs: list[LogFile], workers: int | None) -> list[CheckedLog]:
    """Check every log, in parallel when it pays (reading dominates)."""
    with pool_map(check_log, logs, workers) as checked:
        return list(checked)


def check(
    log_dirs: Path | Sequence[Path], workers: int | None = None, follow_links: bool = False
) -> CheckReport:
    """Check every log in ``log_dirs`` and write nothing anywhere."""
    dirs = [log_dirs] if isinstance(log_dirs, Path) else list(log_dirs)
    checked = _check_all(discover_all(dirs, follow_links), workers)
    losers = duplicates([c.candidate for c in checked])
    for index, problem in losers.items():
        checked[index].problems.append(problem)
    counts = Counter(str(c.classification) for c in checked)
    return CheckReport(
        log_dirs=dirs,
        logs=len(checked),
        classifications={str(k): counts[str(k)] for k in Classification},
        problems=[p for c in checked for p in c.problems],
        publishable=sum(1 for i, c in enumerate(checked) if c.candidate and i not in losers),
    )
