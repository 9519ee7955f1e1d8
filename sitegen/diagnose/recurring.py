"""Recurring jobs: runs sharing a ``job_name``, their trend, and runs that regressed.

Pure functions over runs, oldest first. A ``Run`` is what a trend needs of a job: the
reduce step reads runs from the state's columns (no summary decoded), ``check`` makes them
from summaries.
"""

from __future__ import annotations

import functools
import hashlib
import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple, TypeVar

import msgspec

from sitegen.diagnose.counting import UNKNOWN, shared
from sitegen.diagnose.stats import MAD_SIGMA
from sitegen.finding import Finding, FindingKind, FindingSeverity
from sitegen.model import FAILED_JOB_STATUSES, JobSummary, StageFigures
from sitegen.text.formatting import duration

# A successful run regresses when it took at least this many times the median of the recent
# successful runs of its name (runs that vary by ±10%, at most 1.22x apart, never do)...
REGRESSION_RATIO = 1.3
# ... at least MIN_SLOWDOWN_MS longer than that median (a 40 ms query at 90 ms matters to
# nobody, whatever the ratio)...
MIN_SLOWDOWN_MS = 1_000
# ... and far out against how much that job's runs vary: at least REGRESSION_Z robust sigmas
# above the median on the log scale (durations are right-skewed; on their logs the noise is
# symmetric). The sigma is the median absolute deviation of the recent runs' log durations
# (times MAD_SIGMA), or their standard deviation when that is larger (a handful of runs can
# agree by chance), and never under SPREAD_FLOOR.
REGRESSION_Z = 3.0
SPREAD_FLOOR = 0.05
# A sustained shift: a run past the ratio and the slowdown, at least SUSTAINED_Z sigmas out,
# that took longer than every one of the RECENT_RUNS runs before the shift regresses when
# the run before it did too. Two record runs in a row come by chance about once in
# (n + 1)(n + 2) runs, n the runs before; the sigmas keep a steady job's records out.
SUSTAINED_Z = 1.5
# From this ratio on a regression is critical (Dr. Elephant's third band, as for findings).
CRITICAL_RATIO = 3.16
# Fewer earlier successful runs than this say too little about what is normal.
MIN_EARLIER_RUNS = 5
# The baseline is the median of at most this many of the latest earlier successful runs, so
# that a lasting change (new data, new hardware) becomes the new normal after a while.
RECENT_RUNS = 10
# A run that read at least this many times the median run's input rows, and whose time ratio
# is at most its rows ratio times ROWS_TIME_SLACK, did more work, not slower work: info.
MORE_ROWS_RATIO = 1.3
ROWS_TIME_SLACK = 1.33
# The job list's word for a job that completed.
COMPLETED = "Completed"


class Run(NamedTuple):
    """One run as a trend needs it: from a summary, or from the state's columns."""

    job_id: str
    job_name: str
    start_time: int
    # When it ended (model.ended_at: a cancelled job's completed_at, its index saying 0).
    end_time: int
    status: str
    failed: bool
    succeeded: bool
    # The run's log digest: a page that compares with this run changes when it does.
    source: str = ""
    # The rows it read (stages reading no other stage), None when not known.
    input_rows: int | None = None
    # How its log counts rows (diagnose.counting): rows compare only within one counting.
    counting: str = UNKNOWN

    @classmethod
    def of(cls, job: JobSummary, source: str = "") -> Run:
        """Return the run of a summary."""
        return cls(
            job.job_id,
            job.job_name,
            job.start_time,
            job.ended_at,
            job.status,
            failed(job),
            succeeded(job),
            source,
            job.input_rows,
            job.counting,
        )


def as_run(job: JobSummary | Run) -> Run:
    """Return ``job`` as a run."""
    return job if isinstance(job, Run) else Run.of(job)


J = TypeVar("J", JobSummary, Run)


def duration_ms(job: JobSummary | Run) -> int | None:
    """Return a run's wall time (start to end, as the jobs list shows it), None if unknown."""
    end = job.ended_at if isinstance(job, JobSummary) else job.end_time
    if job.start_time <= 0 or end < job.start_time:
        return None
    return end - job.start_time


def succeeded(job: JobSummary) -> bool:
    """Tell whether a run completed."""
    return job.failure is None and job.status == COMPLETED


def failed(job: JobSummary) -> bool:
    """Tell whether a run failed: its JobEnd says Failed, or its status is Failed or Invalid.

    A cancelled run did not fail. An Invalid run failed whatever its JobEnd says: it is no
    success, so it is neither a baseline nor judged for a regression.
    """
    return job.failure is not None or job.status in FAILED_JOB_STATUSES


def oldest_first(jobs: Iterable[J]) -> list[J]:
    """Order runs by start time, ties by id."""
    return sorted(jobs, key=lambda j: (j.start_time, j.job_id))


def runs_by_name(jobs: Iterable[J]) -> dict[str, list[J]]:
    """Group named jobs by name, each name's runs oldest first, names sorted."""
    found: dict[str, list[J]] = {}
    for job in jobs:
        if job.job_name:
            found.setdefault(job.job_name, []).append(job)
    return {name: oldest_first(found[name]) for name in sorted(found)}


def percentile(values: Sequence[int], q: float) -> int | None:
    """Return the nearest-rank ``q`` percentile (0 < q <= 1) of ``values``; None if empty."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


class Judged(NamedTuple):
    """A run against the recent successful runs before it: ratio, sigmas out, and baseline."""

    ratio: float
    z: float
    median: float
    recent: int


def sample_stdev(values: Sequence[float]) -> float:
    """Return the sample standard deviation of two or more values, in floats.

    ``statistics.stdev`` sums exact fractions: 45 µs for ten values (1.7 µs here). A run is
    judged against its name's recent runs, and every run of a name when its trend is made.
    """
    # Shifted by the first value: equal values then give exactly 0 (their mean in floats
    # could stray from them by a rounding, and a spread of 4e-15 is not theirs).
    shifted = [v - values[0] for v in values]
    mean = math.fsum(shifted) / len(shifted)
    return math.sqrt(math.fsum((v - mean) ** 2 for v in shifted) / (len(values) - 1))


def judge(took: int, earlier_successes: Sequence[int]) -> Judged | None:
    """Judge a duration against earlier ones (None: too few, or no slowdown that matters)."""
    if len(earlier_successes) < MIN_EARLIER_RUNS:
        return None
    recent = earlier_successes[-RECENT_RUNS:]
    median = statistics.median(recent)
    if median <= 0 or took - median < MIN_SLOWDOWN_MS:
        return None
    logs = [math.log(max(d, 1)) for d in recent]
    centre = statistics.median(logs)
    spread = MAD_SIGMA * statistics.median(abs(v - centre) for v in logs)
    # The median absolute deviation of a handful of runs can be small by chance: their
    # standard deviation (steadier, if less robust) bounds the sigma from below.
    sigma = max(SPREAD_FLOOR, spread, sample_stdev(logs))
    z = (math.log(took) - math.log(median)) / sigma
    return Judged(took / median, z, median, len(recent))


def regression(
    job: Run,
    earlier_successes: Sequence[int],
    name: str | None = None,
    since: Sequence[str] = (),
    earlier_rows: Sequence[tuple[int | None, str]] = (),
) -> Finding | None:
    """Judge one run against the durations of the earlier successful runs of its name.

    ``since`` holds the ids of the runs just before it that, like it, were past the ratio
    and longer than every recent run before them (a sustained shift), oldest first;
    ``earlier_rows`` the earlier runs' input rows and how their logs count rows, as their
    durations.
    """
    took = duration_ms(job)
    if took is None or not job.succeeded:
        return None
    found = judge(took, earlier_successes)
    if found is None or found.ratio < REGRESSION_RATIO or (found.z < REGRESSION_Z and not since):
        return None
    ratio = found.ratio
    severity = FindingSeverity.CRITICAL if ratio >= CRITICAL_RATIO else FindingSeverity.WARNING
    message = (
        f"This run took {duration(took)}, {ratio:.1f}x the median of {duration(found.median)} "
        f"over the previous {found.recent} successful runs of “{name or job.job_name}”"
    )
    if since:
        message += f": slower since run {since[0]}, the last {len(since) + 1} runs."
    else:
        message += "; the run before it was not slower."
    counts = comparable_rows(job, earlier_rows[-RECENT_RUNS:])
    if job.input_rows and counts:
        rows_ratio = job.input_rows / statistics.median(counts)
        if rows_ratio >= MORE_ROWS_RATIO and ratio <= rows_ratio * ROWS_TIME_SLACK:
            severity = FindingSeverity.INFO
            message += (
                f" It read {rows_ratio:.1f}x the rows of the median run: more data, "
                "not a slower job."
            )
    return Finding(FindingKind.REGRESSION, severity, None, None, None, round(ratio, 2), message)


def comparable_rows(job: Run, earlier: Sequence[tuple[int | None, str]]) -> list[int]:
    """Return the earlier runs' input rows that compare with ``job``'s.

    Rows of 0 (or None) were not recorded, and rows counted another way (Ballista #2435
    changed what a stage's rows mean: ``diagnose.counting``) say nothing of more data: across
    the change a run is judged on its duration alone.
    """
    return [rows for rows, how in earlier if rows and shared(how, job.counting)]


def regressions(runs: Sequence[JobSummary | Run]) -> dict[str, Finding]:
    """Return the regression finding of each run of one name that regressed (runs oldest first)."""
    found: dict[str, Finding] = {}
    successes: list[int] = []
    rows: list[tuple[int | None, str]] = []
    # The latest runs in a row past the ratio and longer than every recent run before them.
    streak: list[str] = []
    ceiling = 0  # the longest of the recent runs before the streak
    for job in map(as_run, runs):
        took = duration_ms(job)
        if not job.succeeded or took is None:
            continue
        if not streak:
            ceiling = max(successes[-RECENT_RUNS:], default=0)
        judged = judge(took, successes)
        high = (
            judged is not None
            and judged.ratio >= REGRESSION_RATIO
            and judged.z >= SUSTAINED_Z
            and took > ceiling
        )
        since = streak if high else []
        finding = regression(job, successes, since=since, earlier_rows=rows)
        if finding is not None:
            found[job.job_id] = finding
        streak = [*streak, job.job_id] if high else []
        successes.append(took)
        rows.append((job.input_rows, job.counting))
    return found


@dataclass(frozen=True)
class NameTrend:
    """One job name: its runs oldest first and their figures."""

    name: str
    runs: list[Run]
    regressions: dict[str, Finding]

    @functools.cached_property
    def durations(self) -> list[int]:
        """Return the wall times of the successful runs."""
        return [d for j in self.runs if j.succeeded and (d := duration_ms(j)) is not None]

    @property
    def median_ms(self) -> int | None:
        """Return the median wall time of the successful runs, in whole ms."""
        values = self.durations
        return round(statistics.median(values)) if values else None

    @property
    def p90_ms(self) -> int | None:
        """Return the 90th percentile wall time of the successful runs."""
        return percentile(self.durations, 0.9)

    @property
    def failures(self) -> int:
        """Return how many runs failed."""
        return sum(1 for j in self.runs if j.failed)

    @property
    def failure_rate(self) -> float:
        """Return the share of runs that failed (0 to 1)."""
        return self.failures / len(self.runs)

    @property
    def latest(self) -> Run:
        """Return the newest run."""
        return self.runs[-1]

    @property
    def latest_regressed(self) -> bool:
        """Tell whether the newest run regressed."""
        return self.latest.job_id in self.regressions


def trend(name: str, runs: Iterable[JobSummary | Run]) -> NameTrend:
    """Return the trend of one name's runs (in any order)."""
    ordered = oldest_first(map(as_run, runs))
    return NameTrend(name, ordered, regressions(ordered))


def trends(jobs: Iterable[JobSummary | Run]) -> list[NameTrend]:
    """Return every job name's trend, most runs first, then by name."""
    found = [trend(name, runs) for name, runs in runs_by_name(map(as_run, jobs)).items()]
    found.sort(key=lambda t: (-len(t.runs), t.name))
    return found


class ContextKey(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """What a run's context is made of, the baseline's figures aside: its digest's input.

    The baseline's figures come from its summary, which changes only with its log: the
    log's digest stands in for them, so telling whether a context changed decodes nothing.
    """

    previous: str | None = None
    regression: Finding | None = None
    baseline: str | None = None
    baseline_source: str | None = None

    @property
    def sha256(self) -> str:
        """Return the digest the state keeps for the context of this key."""
        return hashlib.sha256(msgspec.json.encode(self)).hexdigest()


def context_keys(trend: NameTrend) -> dict[str, ContextKey]:
    """Return the context key of every run of a name but its first, by job id.

    A run's context is made of the runs before it only (no "next run"): a new run changes no
    earlier run's page, so pages published before are not rendered again for it, and a build
    knows a run's context before its page is rendered (``builder/contexts/foresight.py``). The first
    run has none (nothing came before it), as a name's only run.
    """
    keys: dict[str, ContextKey] = {}
    previous: Run | None = None
    baseline: Run | None = None
    for job in trend.runs:
        if previous is not None:
            keys[job.job_id] = ContextKey(
                previous=previous.job_id,
                regression=trend.regressions.get(job.job_id),
                baseline=baseline.job_id if baseline else None,
                baseline_source=baseline.source if baseline else None,
            )
        previous = job
        if job.succeeded:
            baseline = job
    return keys


class RunContext(msgspec.Struct, frozen=True, gc=False, omit_defaults=True):
    """What a recurring run's page shows about the other runs of its name.

    Foreseen before the map step (``builder/contexts/foresight.py``), the job page is rendered with
    it; the reduce step checks it against the published runs and renders the page again when
    its key changed (the key's digest is kept in the state, as a note's is).
    """

    key: ContextKey
    # The previous successful run's figures, for the stage-by-stage comparison.
    baseline_ms: int | None = None
    baseline_tasks: int | None = None
    baseline_input_rows: int | None = None
    baseline_output_rows: int | None = None
    baseline_stages: list[StageFigures] = msgspec.field(default_factory=list)
    # How the baseline's log counts rows: rows across countings do not compare.
    baseline_counting: str = UNKNOWN
    # The baseline's config (``JobSummary.config``), for the keys the two runs differ in.
    baseline_config: dict[str, str] = msgspec.field(default_factory=dict)
    baseline_config_dropped: bool = False

    @property
    def previous(self) -> str | None:
        """Return the previous run's job id."""
        return self.key.previous

    @property
    def regression(self) -> Finding | None:
        """Return this run's regression finding, if it regressed."""
        return self.key.regression

    @property
    def baseline(self) -> str | None:
        """Return the previous successful run's job id."""
        return self.key.baseline

    @property
    def sha256(self) -> str:
        """Return the digest the state keeps for this context."""
        return self.key.sha256


def run_context(key: ContextKey, baseline: JobSummary | None) -> RunContext:
    """Return the context of a key, with the figures of its baseline run's summary."""
    if baseline is None:
        return RunContext(key)
    return RunContext(
        key,
        baseline_ms=duration_ms(baseline),
        baseline_tasks=baseline.tasks,
        baseline_input_rows=baseline.input_rows,
        baseline_output_rows=baseline.output_rows,
        baseline_stages=list(baseline.stages),
        baseline_counting=baseline.counting,
        baseline_config=baseline.config,
        baseline_config_dropped=baseline.config_dropped,
    )


def run_contexts(
    found: Iterable[NameTrend], summaries: Mapping[str, JobSummary]
) -> dict[str, RunContext]:
    """Return the context of every run of a name but its first, by job id.

    ``summaries`` holds (at least) the summary of each baseline run, by job id.
    """
    return {
        job_id: run_context(key, summaries[key.baseline] if key.baseline else None)
        for trend in found
        for job_id, key in context_keys(trend).items()
    }


def all_regressions(jobs: Iterable[JobSummary]) -> dict[str, Finding]:
    """Return the regression finding of every run that regressed, by job id."""
    return {
        job_id: finding
        for runs in runs_by_name(map(Run.of, jobs)).values()
        for job_id, finding in regressions(runs).items()
    }
