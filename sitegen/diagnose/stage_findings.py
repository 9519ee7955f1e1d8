"""Slow tasks of one stage: stragglers, skewed data, and slow tasks that share one executor."""

from __future__ import annotations

from dataclasses import dataclass, field

from sitegen.diagnose import thresholds as th
from sitegen.diagnose.stats import median, quantile, times
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

    def __post_init__(self) -> None:
        """Sort the durations once."""
        self.ordered = sorted(self.took)
        self.median = median(self.ordered) if self.ordered else 0.0


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


@dataclass
class StageVerdict:
    """What one stage's slow tasks amount to."""

    findings: list[Finding] = field(default_factory=list)
    # Every straggler, slowest first (capped when reported), so a slow-executor finding can
    # take their place.
    stragglers: list[tuple[SlowTask, Finding]] = field(default_factory=list)
    skewed: list[SlowTask] = field(default_factory=list)


def _slow_tasks(times_: StageTimes) -> list[SlowTask]:
    """Return the attempts beyond every threshold, slowest first (usually none)."""
    ordered, med = times_.ordered, times_.median
    if len(ordered) < th.STAGE_MIN_TASKS:
        return []
    p25, p75 = quantile(ordered, 0.25), quantile(ordered, 0.75)
    bar = max(
        med * th.MODERATE, p75 + th.FAR_OUT_IQR * (p75 - p25), med + th.STRAGGLER_MIN_EXCESS_MS
    )
    if ordered[-1] < bar:
        return []  # the common case: one comparison per stage
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
        slow.append(
            SlowTask(
                took=took[i],
                ratio=took[i] / max(med, 1.0),
                executor=times_.executors[i],
                task_id=task_id,
                row=row,
                end=end,
                input_rows=task.input_rows if task is not None else None,
            )
        )
    return slow


def _median_rows(stage: Stage) -> float | None:
    """Return the median input rows of the stage's successful tasks; None if not recorded."""
    tasks = stage.task_list
    counts = sorted(
        t.input_rows
        for t, s in zip(tasks, task_statuses([t.status for t in tasks]), strict=True)
        if t.input_rows is not None and s.word == "Successful"
    )
    return median(counts) if counts else None


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
    rows_median = _median_rows(times_.stage)
    for task in slow:
        rows_ratio = None
        if task.input_rows is not None and rows_median is not None:
            rows_ratio = task.input_rows / max(rows_median, 1.0)
        if (
            rows_ratio is not None
            and rows_ratio >= th.SKEW_ROWS_RATIO
            and task.ratio <= rows_ratio * th.SKEW_TIME_SLACK
        ):
            verdict.skewed.append(task)
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


def same_executor(times_: StageTimes, verdict: StageVerdict, executors: int) -> Finding | None:
    """Return one slow-executor finding when every straggler of the stage ran on one executor."""
    found = verdict.stragglers
    if executors < 2 or len(found) < th.SAME_EXECUTOR_MIN_TASKS:
        return None
    names = {task.executor for task, _ in found}
    if len(names) != 1 or None in names:
        return None
    (name,) = names
    slowest = min(task.ratio for task, _ in found)
    grade = th.severity(slowest)
    assert grade is not None
    return Finding(
        kind=FindingKind.SLOW_EXECUTOR,
        severity=grade,
        stage_id=times_.stage_id,
        task_id=None,
        executor_id=name,
        value=round(slowest, 2),
        message=(
            f"Every slow task of stage {times_.stage.stage_id} ran on {name}: "
            f"{len(found)} tasks at {times(slowest)} the stage's median of "
            f"{duration(times_.median)} or more: a slow executor, not {len(found)} slow tasks."
        ),
    )
