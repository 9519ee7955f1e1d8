"""What the renderers need from a log, derived once: classifications, problems, job summaries.

The records are msgspec structs untracked by the garbage collector (``gc=False``): the
manifest holds one of each per log, 100,000 logs make millions of objects, and the
collector scanning them for cycles cost more than decoding them. Plain data never
forms a cycle.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Protocol, TypeVar

import msgspec

from sitegen.finding import Finding, WhatIf


class Classification(enum.StrEnum):
    """What a log file turned out to be."""

    COMPLETED = "completed"
    INCOMPLETE = "incomplete"
    NEWER_VERSION = "newer-version"
    MALFORMED = "malformed"
    UNREADABLE = "unreadable"
    NOT_A_LOG = "not-a-log"
    # A .running log not written to for longer than --stale-after: its scheduler stopped.
    ABANDONED = "abandoned"
    # A finished log with no JobEnd: the job ended, its record was never written (see
    # eventlog.classify: told by the dir's naming, Ballista #2405, or by the log's age).
    ENDED_UNRECORDED = "ended-unrecorded"


class ProblemKind(enum.StrEnum):
    """Why a log was not published (or was published with a caveat)."""

    INCOMPLETE = "incomplete"
    NEWER_VERSION = "newer-version"
    MALFORMED = "malformed"
    UNREADABLE = "unreadable"
    NOT_A_LOG = "not-a-log"
    UNSAFE_ID = "unsafe-id"
    DUPLICATE_ID = "duplicate-id"
    ID_MISMATCH = "id-mismatch"
    UNREADABLE_NOTE = "unreadable-note"
    DAMAGED_LINES = "damaged-lines"
    ID_COLLISION = "id-collision"
    ABANDONED = "abandoned"
    ENDED_UNRECORDED = "ended-unrecorded"
    # A published id the Ballista TUI cannot ask for (it sends a ``%`` unescaped).
    TUI_UNREACHABLE = "tui-unreachable"


class ProblemSeverity(enum.StrEnum):
    """How much a problem weighs: an error fails `sitegen check`; only a warning publishes."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


# The one severity policy. An error: the log is damaged, newer than this sitegen, or cannot
# be published. A warning still publishes the job (under the JobEnd id; without the note
# that could not be read). A running or abandoned log is no damage: it is noted, and
# publishes once it ends.
SEVERITY = {
    ProblemKind.NEWER_VERSION: ProblemSeverity.ERROR,
    ProblemKind.MALFORMED: ProblemSeverity.ERROR,
    ProblemKind.UNREADABLE: ProblemSeverity.ERROR,
    ProblemKind.NOT_A_LOG: ProblemSeverity.ERROR,
    ProblemKind.UNSAFE_ID: ProblemSeverity.ERROR,
    ProblemKind.DUPLICATE_ID: ProblemSeverity.ERROR,
    ProblemKind.ID_MISMATCH: ProblemSeverity.WARNING,
    ProblemKind.UNREADABLE_NOTE: ProblemSeverity.WARNING,
    # Published without the lines that did not decode; published beside a job whose id
    # differs only by case or Unicode normalisation.
    ProblemKind.DAMAGED_LINES: ProblemSeverity.WARNING,
    ProblemKind.ID_COLLISION: ProblemSeverity.WARNING,
    ProblemKind.TUI_UNREACHABLE: ProblemSeverity.WARNING,
    # A run its scheduler left behind, or a job that ended without its JobEnd: worth a
    # look, not damage (check passes, --strict not).
    ProblemKind.ABANDONED: ProblemSeverity.WARNING,
    ProblemKind.ENDED_UNRECORDED: ProblemSeverity.WARNING,
    ProblemKind.INCOMPLETE: ProblemSeverity.NOTE,
}


# The warnings a job is published with (an abandoned run or a job ended unrecorded is a
# warning, but has no JobEnd).
PUBLISHED_WITH = frozenset(
    {
        ProblemKind.ID_MISMATCH,
        ProblemKind.UNREADABLE_NOTE,
        ProblemKind.DAMAGED_LINES,
        ProblemKind.ID_COLLISION,
        ProblemKind.TUI_UNREACHABLE,
    }
)


def severity_of(kind: ProblemKind) -> ProblemSeverity:
    """Return a problem kind's severity; a kind the table does not know fails safe as an error."""
    return SEVERITY.get(kind, ProblemSeverity.ERROR)


class Problem(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """One reportable fact about one log file."""

    kind: ProblemKind
    file: str
    message: str
    line: int | None = None
    job_id: str | None = None

    @property
    def severity(self) -> ProblemSeverity:
        """Return how much this problem weighs."""
        return severity_of(self.kind)

    @property
    def skipped(self) -> bool:
        """Tell whether this problem kept the log off the site (all but ``PUBLISHED_WITH``)."""
        return self.kind not in PUBLISHED_WITH


def ended_at(end_time: int, completed_at: int) -> int:
    """Return when a job ended: its ``end_time``, or ``completed_at`` when that is 0.

    Ballista records a cancel before the graph ends, so a cancelled job's JobEnd has
    ``end_time`` 0 (in ``index`` and ``job``) and the cancel time in ``completed_at``.
    Retention, durations and trends go by this; ``/api/jobs`` keeps the index's 0.
    """
    return end_time if end_time else completed_at


# The job status words (JobIndex ``status``) of a run that failed. ``Invalid`` (verbose
# ``Invalid State``) is the scheduler's word for a job whose graph holds no status it knows;
# its JobEnd still says ``Succeeded`` or ``{"Failed": …}`` by the event that ended it. Such a
# run did not succeed, so the pages colour it, and ``check --fail-on failed`` counts it, as
# failed.
FAILED_JOB_STATUSES = frozenset({"Failed", "Invalid"})


def is_failed(status: object) -> bool:
    """Tell whether a Ballista status (task or job: ``{"Failed": ...}`` or a word) failed."""
    return isinstance(status, dict) and "Failed" in status


class ExecutorStats(msgspec.Struct, gc=False, array_like=True):
    """What one executor did within one job, from its TaskEnd records (``[tasks, failed, ms]``)."""

    tasks: int = 0
    failed: int = 0
    busy_ms: int = 0


class ExecutorEvidence(msgspec.Struct, frozen=True, gc=False, array_like=True):
    """One executor's speed against its peers in one job, as sums the fleet verdict pools.

    ``[compared, z_sum, log_sum, excess_ms, own_failed]`` (diagnose/fleet.py says how each is
    made): sums add across jobs and subtract when a job goes.
    """

    # Its successful attempts compared with its peers' (each stage's counted up to a cap).
    compared: int = 0
    # The sum of their standardised log ratios to their peers (clipped), and of their log ratios.
    z_sum: float = 0.0
    log_sum: float = 0.0
    # Their time beyond their peers' median (ms; negative when faster).
    excess_ms: int = 0
    # Its failed attempts in stages where no other executor failed (else the query's).
    own_failed: int = 0


class StageFigures(msgspec.Struct, frozen=True, gc=False, array_like=True):
    """One stage's size and time, for comparing runs of a job (``[id, ms, tasks, in, out, …]``).

    The trailing fields came later (the compare page): a summary stored without them decodes
    with their defaults.
    """

    stage_id: str
    duration_ms: int
    tasks: int
    input_rows: int
    output_rows: int
    # Its failed task attempts: TaskEnd records that ended Failed (retries included).
    failed: int = 0
    # Its tasks' durations (ms): median and slowest; None where no task has one.
    task_median_ms: int | None = None
    task_max_ms: int | None = None


class ErrorPattern(msgspec.Struct, frozen=True, gc=False, array_like=True):
    """Failed task attempts of one job sharing a masked error text: how many, and one example."""

    pattern: str
    count: int
    example: str


# The most bytes of config keys and values a summary keeps (the compare page's config diff):
# a usual Ballista session config is 2-10 KB; a larger one is not kept (the page says so).
MAX_CONFIG_BYTES = 32 * 1024


def kept_config(config: dict[str, str]) -> tuple[dict[str, str], bool]:
    """Return the config a summary keeps and whether it was dropped for its size."""
    size = sum(len(k) + len(v) for k, v in config.items())
    return (dict(config), False) if size <= MAX_CONFIG_BYTES else ({}, True)


class JobSummary(msgspec.Struct, gc=False, omit_defaults=True):
    """The small per-job record the reduce step keeps in memory (never the payloads)."""

    job_id: str
    job_name: str
    status: str
    job_status: str
    start_time: int
    end_time: int
    num_stages: int
    completed_stages: int
    percent_complete: int
    queued_at: int
    started_at: int
    completed_at: int
    file: str
    failure: str | None = None
    tasks: int = 0
    failed_tasks: int = 0
    executors: dict[str, ExecutorStats] = msgspec.field(default_factory=dict)
    log_bytes: int = 0
    # Size of the published gzip copy of the log; None when raw logs are not published.
    raw_log_bytes: int | None = None
    # What the job's own log says went wrong or slow, most severe first (see docs/findings.md).
    findings: list[Finding] = msgspec.field(default_factory=list)
    # Rows the job read (its scan stages) and produced (its final stages); None: not recorded.
    input_rows: int | None = None
    output_rows: int | None = None
    # How its log counts rows (diagnose.counting: "2435", "before" or "unknown"): runs
    # compare rows only within one counting.
    counting: str = "unknown"
    # Per stage, for the stage-by-stage comparison with the previous successful run.
    stages: list[StageFigures] = msgspec.field(default_factory=list)
    # Failed task attempts by masked error text (bounded: diagnose.failures.MAX_TASK_PATTERNS).
    task_errors: list[ErrorPattern] = msgspec.field(default_factory=list)
    # The same by executor, the few most frequent of each (``diagnose.failures.executor_errors``):
    # the Executors page and ``fleet.json`` pool them across jobs.
    executor_errors: dict[str, list[ErrorPattern]] = msgspec.field(default_factory=dict)
    # A failed job's first failed task attempt: its error text (None if no attempt failed).
    root_cause: str | None = None
    # Its run time on half, twice and unlimited executors, from a replay (None: no tasks).
    what_if: WhatIf | None = None
    # Per executor with evidence: its speed against its peers and its own failed attempts,
    # which the fleet verdict pools across jobs (diagnose/fleet.py).
    evidence: dict[str, ExecutorEvidence] = msgspec.field(default_factory=dict)
    # Which scheduler ran it: its JobStart's ``scheduler_id`` where that is a string, else
    # the log dir (or object prefix) its log came from (eventlog.logfiles.scheduler_of).
    scheduler: str = ""
    # Its JobEnd's config (``/api/job/<id>/config``), for the config keys two runs differ in
    # (the compare page); within MAX_CONFIG_BYTES, else empty and ``config_dropped``.
    config: dict[str, str] = msgspec.field(default_factory=dict)
    config_dropped: bool = False

    @property
    def ended_at(self) -> int:
        """Return when the job ended (``end_time``, or a cancelled job's ``completed_at``)."""
        return ended_at(self.end_time, self.completed_at)


class RunningJob(msgspec.Struct, gc=False, omit_defaults=True):
    """A log without JobEnd: what its JobStart and TaskEnd records show so far.

    No scheduler writes StageStart or StageEnd records (the spec, section 1), and a TaskEnd
    cannot tell that its stage ended: what is known is the stages with a finished task
    attempt, the attempts finished and failed, and the last activity. ``stages_started`` and
    ``stages_ended`` count Stage records, for the logs that have them (0 in a real one).
    """

    file: str
    job_id: str
    job_name: str
    queued_at: int
    submitted_at: int
    stages_started: int
    stages_ended: int
    # Task attempts finished (TaskEnd records), and how many of them failed.
    tasks: int
    failed_tasks: int
    # The last activity: the latest end of a finished attempt, else the submission time.
    last_event_time: int
    # Why the run is taken for abandoned (its log's age), None while it is still running.
    abandoned: str | None = None
    # Stages with at least one finished task attempt (distinct TaskEnd stage ids).
    stages_with_tasks: int = 0
    # Why the job is taken to have ended without its JobEnd (eventlog.classify), else None.
    ended: str | None = None


class Dated(Protocol):
    """Anything listed like a job: an id and a start time."""

    @property
    def job_id(self) -> str: ...

    @property
    def start_time(self) -> int: ...


D = TypeVar("D", bound=Dated)


def newest_first(jobs: Iterable[D]) -> list[D]:
    """Order jobs as the API and the TUI do: newest start first, ties by id."""
    ordered = sorted(jobs, key=lambda j: j.job_id)
    ordered.sort(key=lambda j: j.start_time, reverse=True)
    return ordered
