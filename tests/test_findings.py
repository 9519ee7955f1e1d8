"""The job findings on planted anomalies of every kind, and their silence on uniform jobs."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.diagnose import thresholds as th
from sitegen.diagnose.diagnosis import Diagnosis, diagnose_log
from sitegen.diagnose.finding import Finding, FindingKind, Severity
from sitegen.eventlog.reader import read_log
from tests.planted import Job, T, lines, uniform


def diagnosed(job: Job) -> Diagnosis:
    """Read the planted job's log as the build does, and diagnose it."""
    read = read_log(Path(f"{job.job_id}.eventlog"), b"".join(lines(job)))
    assert read.job_end is not None, read.message
    return diagnose_log(read)


def kinds(found: Diagnosis) -> list[FindingKind]:
    return [f.kind for f in found.findings]


def only(found: Diagnosis, kind: FindingKind) -> Finding:
    (finding,) = [f for f in found.findings if f.kind is kind]
    return finding


def test_straggler_with_typical_input() -> None:
    tasks = uniform(2, 20, executors=3)
    tasks[5] = T(5, "exec-1", 30_000)
    found = diagnosed(Job("strag", {1: uniform(1, 8), 2: tasks}, edges=[(1, 2)]))
    assert kinds(found) == [FindingKind.STRAGGLER]
    finding = found.findings[0]
    assert (finding.stage_id, finding.task_id, finding.executor_id) == (2, 5, "exec-1")
    assert finding.severity is Severity.CRITICAL  # 30x is beyond the 10x band
    assert finding.value == 30.0
    assert finding.message == (
        "Task 5 of stage 2 ran 30.0 s, 30x the stage's median of 1.0 s, on exec-1; its input "
        "(498K rows) was typical for the stage: a slow task, not skewed data."
    )
    # The stage page's row of task 5 (position 5 of stage 2's list) and its timeline bar.
    assert found.flagged_rows == {2: {5: FindingKind.STRAGGLER}}
    assert found.task_rows == {(2, 5): 5}
    assert len(found.straggler_attempts) == 1


def test_straggler_severity_follows_the_bands() -> None:
    for took, grade in ((2_500, Severity.INFO), (5_000, Severity.WARNING)):
        tasks = uniform(1, 12)
        tasks[3] = T(3, "exec-4", took)
        assert only(diagnosed(Job("bands", {1: tasks})), FindingKind.STRAGGLER).severity is grade


def test_small_differences_never_fire() -> None:
    # 5x the median, but only 400 ms longer: under STRAGGLER_MIN_EXCESS_MS.
    tasks = uniform(1, 12, took=100)
    tasks[0] = T(0, "exec-1", 500)
    assert diagnosed(Job("tiny", {1: tasks})).findings == []
    # A stage of three tasks has no median worth comparing with.
    few = [T(0, "exec-1", 1_000), T(1, "exec-2", 1_000), T(2, "exec-1", 30_000)]
    assert len(few) < th.STAGE_MIN_TASKS
    assert diagnosed(Job("few", {1: few})).findings == []


def test_data_skew_when_rows_explain_the_time() -> None:
    tasks = uniform(1, 16)
    tasks[3] = T(3, "exec-4", 8_000, rows=4_980_000)
    found = diagnosed(Job("skew", {1: tasks}))
    assert kinds(found) == [FindingKind.DATA_SKEW]
    finding = found.findings[0]
    assert (finding.stage_id, finding.task_id, finding.executor_id) == (1, 3, "exec-4")
    assert finding.value == 10.0
    assert finding.severity is Severity.CRITICAL
    assert "read 5M input rows, 10x the stage's median of 498K" in finding.message
    assert found.flagged_rows == {1: {3: FindingKind.DATA_SKEW}}


def test_more_rows_that_do_not_explain_the_time_is_a_straggler() -> None:
    tasks = uniform(1, 16)
    tasks[3] = T(3, "exec-4", 20_000, rows=996_000)  # 2x the rows, 20x the time
    finding = only(diagnosed(Job("not-skew", {1: tasks})), FindingKind.STRAGGLER)
    assert "was 2.0x the stage's median, too little to explain it" in finding.message


def test_slow_tasks_of_a_stage_on_one_executor_are_one_finding() -> None:
    tasks = uniform(1, 24, executors=4)
    for n in (1, 5):  # two of exec-2's six tasks: its median task is as fast as the others'
        tasks[n] = T(n, "exec-2", 9_000)
    found = diagnosed(Job("one-node", {1: tasks}))
    assert kinds(found) == [FindingKind.SLOW_EXECUTOR]
    finding = found.findings[0]
    assert (finding.stage_id, finding.task_id, finding.executor_id) == (1, None, "exec-2")
    assert finding.message.startswith("Every slow task of stage 1 ran on exec-2: 2 tasks at 9.0x")
    assert found.flagged_rows == {1: dict.fromkeys((1, 5), FindingKind.SLOW_EXECUTOR)}
    assert found.straggler_attempts == set()


def test_slow_executor_across_stages() -> None:
    def stage(sid: int) -> list[T]:
        return [
            T(sid * 100 + n, f"exec-{n % 4 + 1}", 4_000 if n % 4 == 2 else 1_000) for n in range(16)
        ]

    found = diagnosed(Job("slow-node", {1: stage(1), 2: stage(2)}, edges=[(1, 2)]))
    assert kinds(found) == [FindingKind.SLOW_EXECUTOR]
    finding = found.findings[0]
    assert (finding.stage_id, finding.task_id, finding.executor_id) == (None, None, "exec-3")
    assert finding.value == 4.0
    assert finding.severity is Severity.WARNING
    assert "each of the 2 stages it shared with them" in finding.message


def test_one_executor_is_never_a_slow_executor() -> None:
    tasks = [T(n, "only", 1_000) for n in range(12)]
    tasks[4] = T(4, "only", 20_000)
    tasks[7] = T(7, "only", 20_000)
    assert set(kinds(diagnosed(Job("lonely", {1: tasks})))) == {FindingKind.STRAGGLER}


def test_failed_attempts_grouped_by_error() -> None:
    tasks = uniform(1, 10)
    tasks += [
        T(3, "exec-2", 50, error="disk full"),
        T(4, "exec-2", 60, error="disk full"),
        T(5, "exec-3", 70, error="connection reset"),
    ]
    found = diagnosed(Job("retries", {1: uniform(1, 4, start=100), 2: tasks}, edges=[(1, 2)]))
    finding = only(found, FindingKind.FAILED_ATTEMPTS)
    assert (finding.stage_id, finding.task_id, finding.executor_id) == (2, None, None)
    assert finding.value == 3
    assert finding.severity is Severity.WARNING  # 3 of 13 attempts, and the job succeeded
    assert finding.message == (
        "3 task attempts of stage 2 failed on exec-2, exec-3: 2× ExecutionError: disk full; "
        "1× ExecutionError: connection reset. Retries succeeded; they cost time."
    )
    assert found.root_cause is None


def test_failed_job_is_critical_and_names_the_first_failure() -> None:
    stage2 = [
        *uniform(2, 6),
        T(7, "exec-3", 900, error="late error"),
        T(8, "exec-4", 50, error="Arrow error: Divide by zero", delay=20),
    ]
    found = diagnosed(Job("failed", {1: uniform(1, 6, start=50), 2: stage2}, failed=True))
    finding = only(found, FindingKind.FAILED_ATTEMPTS)
    assert finding.severity is Severity.CRITICAL
    assert finding.message.endswith("The job failed.")
    cause = found.root_cause
    assert cause is not None
    assert (cause.stage_id, cause.task_id, cause.executor_id) == (2, 8, "exec-4")
    assert cause.error == "ExecutionError: Arrow error: Divide by zero"


def test_queued() -> None:
    found = diagnosed(Job("waited", {1: uniform(1, 4, took=5_000)}, queued_ms=60_000))
    finding = only(found, FindingKind.QUEUED)
    assert finding.severity is Severity.CRITICAL  # 65 s from submission for a 5 s run
    assert finding.message.startswith("The job waited 1 min 0 s in the queue and then ran 5.0 s")
    short = diagnosed(Job("short-wait", {1: uniform(1, 4, took=100)}, queued_ms=4_000))
    assert short.findings == []  # 40x its run, but under QUEUED_MIN_MS


def test_idle() -> None:
    job = Job("idle", {1: uniform(1, 4), 2: uniform(2, 4, start=10)}, gap_ms=20_000)
    finding = only(diagnosed(job), FindingKind.IDLE)
    assert finding.severity is Severity.CRITICAL  # 22 s run, 2 s of it running tasks: 11x
    assert finding.message.startswith("No task was running for 20.0 s of the job's 22.0 s run")


def test_critical_path_follows_the_producer_that_ended_last() -> None:
    job = Job(
        "path",
        {1: uniform(1, 4), 2: uniform(2, 4, took=3_000, start=10), 3: uniform(3, 4, start=20)},
        edges=[(1, 3), (2, 3)],
    )
    found = diagnosed(job)
    assert found.critical_path is not None
    assert found.critical_path.stages == ("2", "3")


@pytest.mark.slow  # 60 generated jobs of up to 60 tasks a stage
@settings(max_examples=60, deadline=None)
@given(
    stages=st.integers(1, 4),
    tasks=st.integers(1, 60),
    executors=st.integers(1, 6),
    base=st.integers(1, 600_000),
    rows=st.integers(0, 10_000_000),
    data=st.data(),
)
def test_uniform_jobs_have_no_slow_task_findings(
    stages: int, tasks: int, executors: int, base: int, rows: int, data: st.DataObject
) -> None:
    """Tasks within ±15% of each other (time and rows) give no straggler, skew or slow node."""
    spread = st.floats(0.87, 1.0)  # every pair within 1/0.87 = 1.15x of each other
    plan = {
        sid: [
            T(
                sid * 1000 + n,
                f"exec-{data.draw(st.integers(1, executors))}",
                max(1, round(base * data.draw(spread))),
                rows=round(rows * data.draw(spread)),
                delay=data.draw(st.integers(0, 50)),
            )
            for n in range(tasks)
        ]
        for sid in range(1, stages + 1)
    }
    found = diagnosed(Job("uniform", plan, edges=[(s, s + 1) for s in range(1, stages)]))
    noisy = {FindingKind.STRAGGLER, FindingKind.DATA_SKEW, FindingKind.SLOW_EXECUTOR}
    assert [f for f in found.findings if f.kind in noisy] == []
    assert found.flagged_rows == {}
