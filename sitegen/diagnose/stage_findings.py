"""Slow tasks of one stage: stragglers and skewed data."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from sitegen.diagnose import thresholds as th
from sitegen.diagnose.stats import log_scale, median, times
from sitegen.diagnose.tasks import RowIndex
from sitegen.eventlog.payload import Stage, as_int, task_duration, task_statuses
from sitegen.eventlog.schema import TaskEnd
from sitegen.finding import Finding, FindingKind
from sitegen.text.formatting import duration, rows


@dataclass
class StageTimes:
    """A stage's successful attempts as columns: durations, executors, and where they came from.

    From the TaskEnd records when the log has them (they name the executor), else from the
    stages payload's rows (the scheduler drops progress records under load).
    """

    stage: Stage
    stage_id: int | None
    took: list[int]
    executors: list[str | None]
    ends: list[TaskEnd] | None
    # Position in ``stage.task_list`` of each entry, when read from the payload.
    positions: list[int] | None
    ordered: list[int] = field(init=False)
    median: float = field(init=False)
    # The job's pooled sigma of log task times and its degrees of freedom (job_sigma), which
    # a small stage's own few tasks are shrunk toward; None: the stage's own alone.
    prior: tuple[float, int] | None = None
    # The median of the job's stages' robust sigmas (job_mad_sigma), for robust_sigma.
    mad_prior: float | None = None
    # How many of the job's stages are judged (they share th.FAR_OUT_ALPHA).
    judged: int = 1

    def __post_init__(self) -> None:
        """Sort the durations once."""
        self.ordered = sorted(self.took)
        self.median = median(self.ordered) if self.ordered else 0.0

    @functools.cached_property
    def scale(self) -> tuple[float, float]:
        """Return the log median and robust sigma (the MAD's) of its durations, measured once."""
        return log_scale(self.ordered)

    @functools.cached_property
    def trimmed(self) -> tuple[float, float, int]:
        """Return ``spread`` of its durations, measured once (the job's pool and its judgment)."""
        return spread(self.ordered, self.scale)


def stage_times(stage: Stage, ends: list[TaskEnd]) -> StageTimes:
    """Collect a stage's successful attempts and their durations."""
    sid = as_int(stage.stage_id)
    ok = [e for e in ends if e.status == "Successful" and 0 < e.start_exec_time <= e.end_exec_time]
    if ok:
        return StageTimes(
            stage,
            sid,
            [e.end_exec_time - e.start_exec_time for e in ok],
            [e.executor_id for e in ok],
            ok,
            None,
        )
    took, positions = [], []
    tasks = stage.task_list
    states = task_statuses([t.status for t in tasks])
    for n, (task, state) in enumerate(zip(tasks, states, strict=True)):
        duration = task_duration(task)
        if state.word == "Successful" and duration is not None and duration >= 0:
            took.append(duration)
            positions.append(n)
    return StageTimes(stage, sid, took, [None] * len(took), None, positions)


@dataclass
class SlowTask:
    """One attempt far slower than its stage's median, with what the payload says of it."""

    took: int
    ratio: float
    executor: str | None
    task_id: int | None
    row: int | None  # position in the stage's task list
    end: TaskEnd | None
    input_rows: int | None
    # How far out it lies on the log scale, in sigmas above the stage's centre, against the
    # spread the stage can trust (stage_sigma), and whether that passes th.far_out_z.
    z: float = 0.0
    far_out: bool = False


@dataclass
class StageVerdict:
    """What one stage's slow tasks amount to."""

    findings: list[Finding] = field(default_factory=list)
    # Every straggler, slowest first (capped when reported), so a slow-executor finding can
    # take their place.
    stragglers: list[tuple[SlowTask, Finding]] = field(default_factory=list)
    skewed: list[SlowTask] = field(default_factory=list)
    # Whether the data-skew finding's task read far more rows than its stage's own spread of
    # input rows allows by chance (rows_far_out): without that, it is no more than info.
    skew_far_out: bool = False


def job_mad_sigma(stages: list[StageTimes]) -> float | None:
    """Return the median of the stages' robust sigmas (stages of at least STAGE_MIN_TASKS)."""
    found = sorted(t.scale[1] for t in stages if len(t.ordered) >= th.STAGE_MIN_TASKS)
    return median(found) if found else None


def robust_sigma(stage: StageTimes) -> float:
    """Return a stage's robust sigma (the MAD's), shrunk toward the job's, floored.

    The slow-executor rule's yardstick: many tasks of one node are judged, not one slowest.
    """
    sigma, prior = stage.scale[1], stage.mad_prior
    if prior is not None:
        n, k = len(stage.ordered), th.MAD_SHRINK_TASKS
        sigma = math.sqrt((n * sigma * sigma + k * prior * prior) / (n + k))
    return max(sigma, th.SIGMA_FLOOR)


def spread(
    ordered: list[int], scale: tuple[float, float] | None = None
) -> tuple[float, float, int]:
    """Return a stage's log centre and sigma measured without its slowest tasks, and their df.

    The slowest task is the one a straggler test weighs, so it is left out of the yardstick
    it is measured against: a straggler cannot widen its own. So are the other tasks beyond
    th.OUTLIER_Z robust sigmas (two slow tasks must not hide each other). On the rest, the
    standard deviation is twice as sure as the MAD (100% efficient against 37%), which on a
    small stage's few tasks is the difference; th.trimmed_sigma corrects it for the slowest
    left out.
    """
    logs = [math.log(1 if d < 1 else d) for d in ordered]  # max(d, 1), without its call
    centre, robust = scale or log_scale(ordered)
    fence = centre + th.OUTLIER_Z * max(robust, th.SIGMA_FLOOR)
    kept = len(logs) - 1
    while kept > 2 and logs[kept - 1] > fence:
        kept -= 1
    rest = logs[:kept]
    mean = sum(rest) / kept
    ss = sum((v - mean) ** 2 for v in rest)
    return mean, math.sqrt(ss / (kept - 1)) * th.trimmed_sigma(kept + 1), kept - 1


def job_sigma(stages: list[StageTimes]) -> tuple[float, int] | None:
    """Return the job's pooled sigma of log task times, and its degrees of freedom.

    Each stage's spread but its slowest task (spread), pooled over the job's stages of at least
    STAGE_MIN_TASKS: on a job's dozens of tasks it is far surer than on one small stage's few.
    """
    ss = 0.0
    df = 0
    for times_ in stages:
        if len(times_.ordered) >= th.STAGE_MIN_TASKS:
            _, sigma, k = times_.trimmed
            ss += sigma * sigma * k
            df += k
    if not df:
        return None
    return math.sqrt(ss / df), df


def stage_sigma(
    ordered: list[int],
    prior: tuple[float, int] | None = None,
    trimmed: tuple[float, float, int] | None = None,
) -> tuple[float, float, int]:
    """Return a stage's centre, the sigma it can trust, and the degrees of freedom behind it.

    The stage's own spread (spread), shrunk toward the job's pooled one as if the job had lent
    up to SHRINK_TASKS degrees of freedom from its other stages (four tasks say little about
    a spread), floored.
    """
    centre, sigma, df = trimmed or spread(ordered)  # ``spread`` measured already, or now
    lent = 0
    if prior is not None:
        pooled, measured = prior
        lent = max(0, min(th.SHRINK_TASKS, measured - df))
        sigma = math.sqrt((df * sigma * sigma + lent * pooled * pooled) / max(df + lent, 1))
    return centre, max(sigma, th.SIGMA_FLOOR), df + lent


def expected_max(tasks: int) -> float:
    """Return about how many sigmas the slowest of ``tasks`` normal draws lies out."""
    return math.sqrt(2 * math.log(max(tasks, 2)))


def _slow_tasks(times_: StageTimes) -> list[SlowTask]:
    """Return the attempts far out against their stage's spread, slowest first (usually none).

    A data-skew candidate (rows far beyond the median) need only lie beyond the bar; the
    caller tells it from a straggler by its rows.
    """
    ordered, med = times_.ordered, times_.median
    if len(ordered) < th.STAGE_MIN_TASKS:
        return []
    bar = max(med * th.MODERATE, med + th.STRAGGLER_MIN_EXCESS_MS)
    if ordered[-1] < bar:
        return []  # the common case: one comparison per stage
    centre, sigma, support = stage_sigma(ordered, times_.prior, times_.trimmed)
    far_z = th.far_out_z(len(ordered), support, times_.judged)
    least = min(far_z, expected_max(len(ordered)) + th.SKEW_Z)
    bar = max(bar, math.exp(centre + least * sigma))
    if ordered[-1] < bar:
        return []
    took = times_.took
    picked = sorted((i for i in range(len(took)) if took[i] >= bar), key=lambda i: -took[i])
    stage_rows = times_.stage.task_list
    index = RowIndex(stage_rows) if times_.ends is not None else None
    slow = []
    for i in picked:
        end = times_.ends[i] if times_.ends is not None else None
        if end is not None and index is not None:
            row = index.find(end)
        else:
            row = times_.positions[i] if times_.positions is not None else None
        task = stage_rows[row] if row is not None else None
        task_id = task.id if task is not None and task.id is not None else None
        if task_id is None and end is not None:
            task_id = end.task_id
        z = (math.log(max(took[i], 1)) - centre) / sigma
        slow.append(
            SlowTask(
                took=took[i],
                ratio=took[i] / max(med, 1.0),
                executor=times_.executors[i],
                task_id=task_id,
                row=row,
                end=end,
                input_rows=task.input_rows if task is not None else None,
                z=z,
                far_out=z >= far_z,
            )
        )
    return slow


def _stage_rows(stage: Stage) -> list[int]:
    """Return the input rows of the stage's successful tasks, sorted (those recorded).

    A task that ran and read 0 rows did not record them (Ballista writes 0 where the metrics
    do not line up with the plan's shape): it is left out, not taken for an empty partition.
    """
    tasks = stage.task_list
    return sorted(
        t.input_rows
        for t, s in zip(tasks, task_statuses([t.status for t in tasks]), strict=True)
        if t.input_rows and s.word == "Successful"
    )


def rows_far_out(counts: list[int], input_rows: int) -> bool:
    """Tell whether a task's input rows are far out against its stage's own spread of rows.

    As for a straggler's time (th.far_out_z), on the log scale: the MAD of the stage's log
    input rows times MAD_SIGMA, never under SIGMA_FLOOR (a stage of equal partitions has a
    MAD of 0: any skewed task is far out from it).
    """
    centre, sigma = log_scale(counts)
    z = (math.log(max(input_rows, 1)) - centre) / max(sigma, th.SIGMA_FLOOR)
    return z >= th.rows_far_out_z(len(counts))


def _on(executor: str | None) -> str:
    """Return ``", on exec-1"``, or nothing when the executor is unknown."""
    return f", on {executor}" if executor else ""


def judge_stage(times_: StageTimes) -> StageVerdict:
    """Turn a stage's slow attempts into straggler and data-skew findings."""
    verdict = StageVerdict()
    slow = _slow_tasks(times_)
    if not slow:
        return verdict
    label, sid, med = times_.stage.stage_id, times_.stage_id, times_.median
    counts = _stage_rows(times_.stage)
    rows_median = median(counts) if counts else None
    _, sigma, _ = stage_sigma(times_.ordered, times_.prior, times_.trimmed)
    slack = max(th.SKEW_TIME_SLACK, math.exp(th.SKEW_SLACK_SIGMAS * sigma))
    chance = expected_max(len(times_.ordered))
    for task in slow:
        rows_ratio = None
        if task.input_rows and rows_median is not None:
            rows_ratio = task.input_rows / max(rows_median, 1.0)
        if (
            rows_ratio is not None
            and rows_ratio >= th.SKEW_ROWS_RATIO
            and task.ratio <= rows_ratio * slack
        ):
            if task.z >= chance + th.SKEW_Z:
                verdict.skewed.append(task)
            continue
        if not task.far_out:
            continue
        grade = th.severity(task.ratio)
        assert grade is not None  # slow tasks are at least MODERATE times the median
        if rows_ratio is None:
            evidence = "its input rows are not recorded, so skewed data cannot be ruled out."
        elif rows_ratio >= th.LOW:
            evidence = (
                f"its input ({rows(task.input_rows)} rows) was {times(rows_ratio)} the stage's "
                f"median, too little to explain it: a slow task more than skewed data."
            )
        else:
            evidence = (
                f"its input ({rows(task.input_rows)} rows) was typical for the stage: "
                "a slow task, not skewed data."
            )
        finding = Finding(
            kind=FindingKind.STRAGGLER,
            severity=grade,
            stage_id=sid,
            task_id=task.task_id,
            executor_id=task.executor,
            value=round(task.ratio, 2),
            message=(
                f"Task {task.task_id if task.task_id is not None else '?'} of stage {label} "
                f"ran {duration(task.took)}, {times(task.ratio)} the stage's median of "
                f"{duration(med)}{_on(task.executor)}; {evidence}"
            ),
        )
        verdict.stragglers.append((task, finding))
    if verdict.skewed and rows_median is not None:
        worst = max(verdict.skewed, key=lambda t: (t.input_rows or 0, t.took))
        rows_ratio = (worst.input_rows or 0) / max(rows_median, 1.0)
        grade = th.severity(rows_ratio)
        assert grade is not None
        more = len(verdict.skewed) - 1
        tail = (
            f" {more} more task{'s' if more > 1 else ''} of the stage read over "
            f"{times(th.SKEW_ROWS_RATIO)} the median input and ran as long."
            if more
            else ""
        )
        verdict.skew_far_out = rows_far_out(counts, worst.input_rows or 0)
        verdict.findings.append(
            Finding(
                kind=FindingKind.DATA_SKEW,
                severity=grade,
                stage_id=sid,
                task_id=worst.task_id,
                executor_id=worst.executor,
                value=round(rows_ratio, 2),
                message=(
                    f"Task {worst.task_id if worst.task_id is not None else '?'} of stage "
                    f"{label} read {rows(worst.input_rows)} input rows, {times(rows_ratio)} the "
                    f"stage's median of {rows(round(rows_median))}, and ran "
                    f"{duration(worst.took)}, {times(worst.ratio)} the median of "
                    f"{duration(med)}{_on(worst.executor)}: skewed data, not a slow task."
                    f"{tail}"
                ),
            )
        )
    return verdict
