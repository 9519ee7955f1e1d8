"""The replay of a job's task attempts: costs and what-ifs on jobs whose answer is known."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.diagnose.replay import Change, TaskRun, inferred_slots, prepare, what_if

T0 = 1_767_225_600_000
GAP = 1_000  # the idle finding's shortest gap


def two_waves() -> list[TaskRun]:
    """8 equal 1 s tasks on 4 one-slot executors: two waves, 2 s."""
    return [
        TaskRun(1, n, f"e{n % 4}", T0 + (n // 4) * 1_000, T0 + (n // 4) * 1_000 + 1_000)
        for n in range(8)
    ]


def test_what_if_of_two_waves_on_four_executors() -> None:
    replay = prepare(two_waves(), [], T0, T0 + 2_000, GAP)
    assert replay.slots == {"e0": 1, "e1": 1, "e2": 1, "e3": 1}
    assert replay.time() == 2_000
    found = what_if(replay)
    assert found is not None
    assert (found.executors, found.slots) == (4, 1)
    assert (found.floor_ms, found.half_ms, found.double_ms) == (1_000, 4_000, 1_000)
    assert found.as_json() == {
        "executors": 4,
        "floor_ms": 1_000,
        "half_ms": 4_000,
        "double_ms": 1_000,
    }


def test_slots_are_the_most_attempts_running_at_once() -> None:
    runs = [
        TaskRun(1, 0, "a", 0, 10),
        TaskRun(1, 1, "a", 5, 20),
        TaskRun(1, 2, "a", 10, 30),  # starts as task 0 ends: still two at once
        TaskRun(1, 3, "b", 0, 10),
    ]
    assert inferred_slots(runs) == {"a": 2, "b": 1}


def test_a_straggler_costs_what_its_stage_waited() -> None:
    runs = two_waves()
    runs[7] = TaskRun(1, 7, "e3", T0 + 1_000, T0 + 4_000)  # 3 s instead of 1 s
    replay = prepare(runs, [], T0, T0 + 4_000, GAP)
    assert replay.time() == 4_000
    assert replay.without(Change(durations={7: 1_000})) == 2_000
    # A task of the first wave at the median changes nothing.
    assert replay.without(Change(durations={0: 500})) == 0


def test_consumers_wait_for_their_producers() -> None:
    stage1 = [TaskRun(1, n, f"e{n}", T0, T0 + (5_000 if n == 0 else 1_000)) for n in range(2)]
    stage2 = [TaskRun(2, n, f"e{n}", T0 + 5_010, T0 + 6_010) for n in range(2)]
    replay = prepare(stage1 + stage2, [(1, 2)], T0, T0 + 6_020, GAP)
    assert replay.time() == 6_020
    # Task 0 of stage 1 at 1 s: stage 2 starts 4 s earlier, so the job ends 4 s earlier.
    assert replay.without(Change(durations={0: 1_000})) == 4_000


def test_failed_attempts_not_run_and_retries_wait_for_them() -> None:
    runs = [
        TaskRun(1, 0, "e0", T0, T0 + 2_000, ok=False),
        TaskRun(1, 0, "e1", T0 + 2_000, T0 + 3_000),
        TaskRun(1, 1, "e2", T0, T0 + 1_000),
    ]
    replay = prepare(runs, [], T0, T0 + 3_000, GAP)
    assert replay.time() == 3_000
    assert replay.without(Change(dropped=frozenset({0}))) == 2_000


def test_idle_gaps_are_kept_and_removed_on_request() -> None:
    runs = [TaskRun(1, n, f"e{n}", T0, T0 + 1_000) for n in range(2)]
    runs += [TaskRun(2, n, f"e{n}", T0 + 6_000, T0 + 7_000) for n in range(2)]
    replay = prepare(runs, [(1, 2)], T0, T0 + 7_000, GAP)
    assert replay.time() == 7_000
    assert replay.without(Change(no_idle=True)) == 5_000
    found = what_if(replay)
    assert found is not None and found.floor_ms == 7_000  # the gap stays in every what-if


def test_a_stage_that_waited_for_slots_starts_earlier_with_more() -> None:
    # Stage 2 reads nothing but ran after stage 1 because both slots were busy.
    runs = [TaskRun(1, n, f"e{n}", T0, T0 + 1_000) for n in range(2)]
    runs += [TaskRun(2, n, f"e{n}", T0 + 1_000, T0 + 2_000) for n in range(2)]
    replay = prepare(runs, [], T0, T0 + 2_000, GAP)
    found = what_if(replay)
    assert found is not None
    assert (found.floor_ms, found.double_ms, found.half_ms) == (1_000, 1_000, 4_000)


def test_no_attempts_no_what_if_and_costs_stay_in_the_run() -> None:
    replay = prepare([], [], T0, T0 + 1_000, GAP)
    assert what_if(replay) is None
    assert replay.without(Change()) == 0
    runs = two_waves()
    replay = prepare(runs, [], T0, T0 + 2_000, GAP)
    # A change that would save more than the run is clamped to the run.
    assert 0 <= replay.without(Change(dropped=frozenset(range(8)))) <= replay.run_ms


def test_an_attempt_that_never_started_keeps_every_position() -> None:
    """A change names attempts by position: one that never ran (start 0) shifts none."""
    runs = two_waves()
    runs[7] = TaskRun(1, 7, "e3", T0 + 1_000, T0 + 4_000)  # 3 s instead of 1 s
    never = TaskRun(1, 0, "e9", 0, 0, ok=False)  # failed before it started
    replay = prepare([never, *runs], [], T0, T0 + 4_000, GAP)
    assert replay.time() == 4_000
    assert replay.without(Change(durations={8: 1_000})) == 2_000  # the straggler, at 8 now
    assert replay.without(Change(durations={7: 10})) == 0  # a first-wave task
    assert replay.without(Change(dropped=frozenset({0}))) == 0
    assert replay.slots == {"e0": 1, "e1": 1, "e2": 1, "e3": 1}


@settings(max_examples=60, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6), lost=st.integers(1, 5))
def test_attempts_that_never_started_change_no_replay(seed: int, lost: int) -> None:
    """Insert attempts with no start anywhere: every cost and what-if is as without them."""
    rng = random.Random(seed)
    runs, now = [], T0
    for stage in (1, 2):
        for n in range(rng.randint(4, 40)):
            took = round(rng.lognormvariate(7, 0.5))  # about 1 s, log-normal as on clusters
            start = now + rng.randint(0, 500)
            runs.append(TaskRun(stage, n, f"e{rng.randint(1, 4)}", start, start + took))
        now = max(r.end for r in runs) + 10
    picked = rng.sample(range(len(runs)), 3)
    changes = [
        Change(durations={n: runs[n].took // 4 for n in picked}),
        Change(dropped=frozenset(picked)),
        Change(no_idle=True),
    ]
    plain = prepare(runs, [(1, 2)], T0, now, GAP)
    # The same attempts with ``lost`` that never started put in at random places.
    with_lost, where = list(runs), list(range(len(runs)))
    for _ in range(lost):
        at = rng.randint(0, len(with_lost))
        with_lost.insert(at, TaskRun(rng.choice((1, 2)), 0, "e9", 0, 0, ok=False))
        where = [k + (k >= at) for k in where]
    other = prepare(with_lost, [(1, 2)], T0, now, GAP)
    for change in changes:
        moved = Change(
            durations={where[n]: ms for n, ms in change.durations.items()},
            dropped=frozenset(where[n] for n in change.dropped),
            no_idle=change.no_idle,
        )
        assert other.without(moved) == plain.without(change)
    assert what_if(other) == what_if(plain)
    assert other.slots == plain.slots
