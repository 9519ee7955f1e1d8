"""The findings on damaged but schema-valid logs: each case once made a wrong finding.

A stage listed twice, a TaskEnd line written twice, records dropped under load, a clock far
off, an attempt lost before or while it ran: what is found, and what it cost, is as on the
log without the damage.
"""

from __future__ import annotations

from pathlib import Path

import msgspec

from sitegen.diagnose.analysis import analyse
from sitegen.diagnose.diagnosis import Diagnosis
from sitegen.diagnose.timing import idle_gaps
from sitegen.eventlog.reader import read_log
from sitegen.examples.generator import BASE_TIME_MS
from sitegen.finding import FindingKind, FindingSeverity
from tests.helpers.logs import failed_task_end, record
from tests.helpers.planted import Job, T, lines, uniform

# Where the planted jobs' first stage starts (tests/helpers/planted.py).
B = BASE_TIME_MS + 5


def diagnosed(logged: list[bytes]) -> Diagnosis:
    read = read_log(Path("damaged.eventlog"), b"".join(logged))
    assert read.job_end is not None, read.message
    return analyse(read, "damaged.eventlog").diagnosis


def summary(found: Diagnosis) -> list[tuple[str, str, int | None, int | None, int | None]]:
    return [
        (str(f.kind), str(f.severity), f.stage_id, f.task_id, f.impact_ms) for f in found.findings
    ]


def straggler_job() -> list[bytes]:
    """Stage 2's task 5 runs 30 s where the others take 1 s: it cost 29 s of a 31 s run."""
    tasks = uniform(2, 20, executors=3)
    tasks[5] = T(5, "exec-1", 30_000)
    return lines(Job("damaged", {1: uniform(1, 8), 2: tasks}, edges=[(1, 2)]))


STRAGGLER = ("straggler", "critical", 2, 5, 29_000)


def at(logged: list[bytes], kind: str, stage: int) -> int:
    """Return the position of the first record of ``kind`` about ``stage``."""
    tag, sid = f'"{kind}"'.encode(), f'"stage_id":{stage},'.encode()
    return next(n for n, line in enumerate(logged) if tag in line and sid in line)


def test_a_stage_listed_twice_is_judged_once() -> None:
    tasks = [T(n, f"exec-{n % 4 + 1}", 3_000 if n % 4 == 0 else 1_000) for n in range(16)]
    tasks.append(T(40, "exec-2", 10, error="boom"))
    logged = lines(Job("damaged", {1: uniform(1, 8), 2: tasks}, edges=[(1, 2)]))
    once = diagnosed(logged)
    end = msgspec.json.decode(logged[-1])
    listed = end["data"]["stages"]["stages"]
    listed.append(listed[1])  # stage 2 again
    logged[-1] = msgspec.json.encode(end) + b"\n"
    twice = diagnosed(logged)
    assert summary(twice) == summary(once)
    assert [f.kind for f in twice.findings] == [
        FindingKind.SLOW_EXECUTOR,
        FindingKind.FAILED_ATTEMPTS,
    ]
    assert [f.message for f in twice.findings] == [f.message for f in once.findings]
    assert "ran its 6 tasks" in twice.findings[0].message


def test_a_task_end_line_written_twice_is_one_attempt() -> None:
    logged = straggler_job()
    k = at(logged, "TaskEnd", 2) + 5  # stage 2's task 5
    assert b'"task_id":5,' in logged[k]
    logged.insert(k + 1, logged[k])
    assert summary(diagnosed(logged)) == [STRAGGLER]


def test_a_stage_with_only_a_failed_task_end_is_replayed_from_its_rows() -> None:
    """The TaskEnds of a stage dropped under load but a failed one: the rows stand in."""
    logged = straggler_job()
    kept = [line for line in logged if not (b'"TaskEnd"' in line and b'"stage_id":2,' in line)]
    assert summary(diagnosed(kept)) == [STRAGGLER]  # its rows, every TaskEnd gone
    failed = failed_task_end(2, 30, "exec-2", "oops", (B + 2_000, B + 2_001, B + 2_002))
    kept.insert(at(kept, "StageEnd", 2), failed)
    found = diagnosed(kept)
    # No idle stretch (task 5's row ran all along), the straggler costed, the failure free.
    assert summary(found) == [STRAGGLER, ("failed-attempts", "info", 2, 30, 0)]


def test_an_attempt_stamped_far_outside_the_run_changes_no_cost() -> None:
    clean = diagnosed(straggler_job())
    for start in (2**63 - 1_001, 1):
        logged = straggler_job()
        stamped = record(
            "TaskEnd",
            {
                "stage_id": 2,
                "task_id": 99,
                "executor_id": "exec-2",
                "status": {"Failed": {"reason": "ExecutionError", "error": "clock"}},
                "start_exec_time": start,
                "end_exec_time": start + 1_000,
            },
        )
        logged.insert(at(logged, "StageEnd", 2), stamped)
        found = diagnosed(logged)
        assert summary(found)[0] == STRAGGLER
        assert "of the job's 31.0 s run" in found.findings[0].message
        assert not [f for f in found.findings if f.kind is FindingKind.IDLE]
        assert found.what_if == clean.what_if


def test_idle_stretches_never_overlap_nor_reach_past_the_run() -> None:
    # A lost attempt (started 2 s in, no end) before a 1 s one at 3 s; one stamped far after.
    starts, ends = [B + 2_000, B + 3_005, B + 10**12], [0, B + 4_005, B + 10**12 + 5]
    gaps = [(g.start - B, g.end - B) for g in idle_gaps(starts, ends, B, B + 4_015)]
    assert gaps == [(0, 2_000), (2_000, 3_005)]


def test_an_attempt_lost_mid_run_counts_no_idle_time_twice() -> None:
    tasks = [T(n, f"exec-{n % 4 + 1}", 1_000, delay=3_000) for n in range(8)]
    logged = lines(Job("damaged", {1: tasks}))
    clean = diagnosed(logged)
    lost = failed_task_end(1, 99, "exec-9", "executor lost", (B + 1_999, B + 2_000, 0))
    logged.insert(at(logged, "TaskEnd", 1), lost)
    found = diagnosed(logged)
    (idle,) = [f for f in found.findings if f.kind is FindingKind.IDLE]
    (before,) = [f for f in clean.findings if f.kind is FindingKind.IDLE]
    assert idle.severity is before.severity is FindingSeverity.WARNING
    assert idle.message.startswith("No task was running for 3.0 s of the job's 4.0 s run (74%)")


def test_an_attempt_with_no_time_is_not_the_root_cause() -> None:
    tasks = uniform(1, 8)
    tasks[2] = T(2, "exec-3", 500, error="divide by zero")  # the first failure
    job = Job("damaged", {1: tasks, 2: uniform(2, 4, start=20)}, edges=[(1, 2)], failed=True)
    logged = lines(job)
    lost = failed_task_end(2, 23, "exec-4", "executor lost before the task ran", (0, 0, 0))
    logged.insert(at(logged, "StageEnd", 2), lost)
    cause = diagnosed(logged).root_cause
    assert cause is not None
    assert (cause.stage_id, cause.task_id, cause.error) == (1, 2, "ExecutionError: divide by zero")
