"""Replay a job's recorded task attempts on executor slots: the cost of a finding, and what-ifs.

The model, in one sentence: each attempt runs for its recorded duration, in the recorded
order, on the first free slot (of its own executor, or of any executor in a what-if), each
stage once the stages it reads from have ended and a retry once its earlier attempt has;
the time a stage waited while the cluster had a free slot (scheduling, idling) is kept.

An executor's slots are not in the log: they are inferred as the most attempts seen running
at once on it. Every figure is the job's recorded run time plus the difference two replays
make, so what the model leaves out (shuffle, locality, start-up) cancels out.
"""

from __future__ import annotations

import heapq
import math
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import NamedTuple

from sitegen.diagnose import thresholds as th
from sitegen.diagnose.stats import median
from sitegen.finding import WhatIf


class TaskRun(NamedTuple):
    """One recorded task attempt: its stage, task, executor, times (ms) and outcome."""

    # A tuple, not a frozen dataclass: a job makes two of these per attempt, and a frozen
    # dataclass's __init__ (a setattr call per field) was a tenth of its diagnosis.

    stage: int
    task: int | None
    executor: str
    start: int
    end: int
    ok: bool = True

    @property
    def took(self) -> int:
        """Return its duration in ms (0 when its end is before its start)."""
        return max(0, self.end - self.start)


@dataclass(frozen=True)
class Change:
    """An anomaly taken out of a replay: attempts run shorter, attempts not run, gaps gone."""

    durations: Mapping[int, int] = field(default_factory=dict)
    dropped: frozenset[int] = frozenset()
    # The idle stretches (of at least the replay's ``gap_min``) are not waited.
    no_idle: bool = False


NO_CHANGE = Change()


def inferred_slots(runs: Sequence[TaskRun]) -> dict[str, int]:
    """Return each executor's slots: the most of its attempts seen running at once."""
    events: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for run in runs:
        # An attempt ending at t frees its slot for one starting at t: ends sort first.
        points = events[run.executor]
        points.append((run.start, 1))
        points.append((run.end if run.end > run.start else run.start, -1))
    slots = {}
    for name, points in events.items():
        points.sort()
        slots[name] = max(accumulate((step for _, step in points), initial=0)) or 1
    return slots


class _Timeline:
    """How many attempts ran when: free time (a slot idle) and long idle stretches, by bisection."""

    def __init__(self, runs: Sequence[TaskRun], slots: int, gap_min: int) -> None:
        points = [(r.start, 1) for r in runs]
        points += [(r.end if r.end > r.start else r.start, -1) for r in runs]
        points.sort()
        self.slots = slots
        # Built with accumulate and comprehensions, not a loop of appends: a job replays
        # 800,000 attempts at most, and this ran over each twice.
        times = self.times = [t for t, _ in points]  # when the number running changes
        # Attempts running from times[k] to times[k + 1].
        running = self.busy = list(accumulate(step for _, step in points))
        spans = list(zip(times, times[1:], running, strict=False))
        # Time before times[k] (from times[0]) with a slot free.
        free = accumulate((b - a if n < slots else 0 for a, b, n in spans), initial=0)
        self.free = list(free) if times else []
        # Stretches of at least gap_min with nothing running.
        gaps = [(a, b) for a, b, n in spans if n == 0 and b - a >= gap_min]
        if times and times[0] >= gap_min:  # nothing ran from the job's start
            gaps.insert(0, (0, times[0]))
        self.gaps = gaps
        self.gap_starts = [a for a, _ in gaps]

    def _free_to(self, t: int) -> int:
        """Return the time from times[0] to ``t`` with a slot free (negative before times[0])."""
        times = self.times
        if not times or t <= times[0]:
            return t - (times[0] if times else 0)
        k = bisect_right(times, t) - 1
        spare = self.busy[k] < self.slots
        return self.free[k] + (t - times[k] if spare else 0)

    def free_between(self, a: int, b: int) -> int:
        """Return the time in [a, b) when fewer attempts ran than there are slots."""
        return max(0, self._free_to(b) - self._free_to(a)) if b > a else 0

    def idle_between(self, a: int, b: int) -> int:
        """Return the time in [a, b) inside idle stretches of at least ``gap_min``."""
        total = 0
        for start, end in self.gaps[max(0, bisect_right(self.gap_starts, a) - 1) :]:
            if start >= b:
                break
            total += max(0, min(end, b) - max(start, a))
        return total


@dataclass
class Replay:
    """A job's attempts and stages, prepared once for any number of replays."""

    # Every attempt, at its position in the list prepared; ``order``: those that ran, by start.
    runs: list[TaskRun]
    producers: dict[int, list[int]]
    started_at: int
    completed_at: int
    slots: dict[str, int]
    # Per stage: the wait kept in every replay, and the part of it spent in long idle gaps.
    delays: dict[int, int]
    idle_delays: dict[int, int]
    tail: int
    idle_tail: int
    order: list[int]

    @property
    def run_ms(self) -> int:
        """Return the job's recorded run time (started to completed)."""
        return max(0, self.completed_at - self.started_at)

    @property
    def executors(self) -> int:
        """Return how many executors ran its attempts."""
        return len(self.slots)

    @property
    def median_slots(self) -> int:
        """Return the median of the executors' inferred slots (at least 1)."""
        values = sorted(self.slots.values())
        return max(1, round(median(values))) if values else 1

    def __post_init__(self) -> None:
        """Index the attempts as lists once: a job is replayed several times."""
        self._plain: int | None = None
        runs = self.runs
        stages = sorted({r.stage for r in runs})
        index = {sid: k for k, sid in enumerate(stages)}
        names = sorted(self.slots)
        where = {name: k for k, name in enumerate(names)}
        self._stage = [index[r.stage] for r in runs]
        self._took = [r.end - r.start if r.end > r.start else 0 for r in runs]
        # An attempt that never started ran on no executor that the slots know of.
        self._executor = [where.get(r.executor, 0) for r in runs]
        self._slots = [self.slots[name] for name in names]
        self._producers = [tuple(index[p] for p in self.producers.get(sid, ())) for sid in stages]
        self._delay = [self.delays.get(sid, 0) for sid in stages]
        self._idle = [self.idle_delays.get(sid, 0) for sid in stages]
        # What each stage waits for: its attempts that ran (those in ``order``).
        self._ran = bytearray(len(runs))
        self._count = [0] * len(stages)
        for n in self.order:
            self._ran[n] = 1
            self._count[self._stage[n]] += 1
        # The attempt before each one of the same task (a retry waits for it), or -1.
        self._before = [-1] * len(runs)
        last: dict[tuple[int, int], int] = {}
        for n in self.order:
            task = runs[n].task
            if task is not None:
                key = (runs[n].stage, task)
                self._before[n] = last.get(key, -1)
                last[key] = n

    def time(
        self,
        change: Change = NO_CHANGE,
        pool: int | None = None,
        unlimited: bool = False,
    ) -> int:
        """Return the replayed run time: pinned to the recorded executors, or on ``pool`` slots."""
        plain = change is NO_CHANGE and pool is None and not unlimited
        if plain and self._plain is not None:
            return self._plain  # the replay as recorded: every cost is against it
        found = self._time(change, pool, unlimited)
        if plain:
            self._plain = found
        return found

    def _time(self, change: Change, pool: int | None, unlimited: bool) -> int:
        """Replay the attempts (see ``time``)."""
        stage_of, took, executor_of = self._stage, self._took, self._executor
        producers, before, durations = self._producers, self._before, change.durations
        dropped = change.dropped
        remaining = self._count[:]
        ran = self._ran
        for n in dropped:
            if 0 <= n < len(stage_of) and ran[n]:
                remaining[stage_of[n]] -= 1
        waits = self._delay
        if change.no_idle:
            waits = [max(0, d - i) for d, i in zip(self._delay, self._idle, strict=True)]
        ready: list[int | None] = [None] * len(remaining)
        stage_end = [0] * len(remaining)
        end_of = [0] * len(stage_of)
        heaps = [[0] * k for k in self._slots] if pool is None else []
        shared = [0] * pool if pool is not None else []
        pending: dict[int, list[int]] = {}
        end_all = 0
        # A slot's next free instant is the heap's least; the attempt's end replaces it in one
        # call (``heapreplace``: the same values as a pop and a push, one sift fewer).
        replace = heapq.heapreplace

        def run(n: int) -> bool:
            """Run attempt ``n``; return whether its stage has now ended."""
            nonlocal end_all
            stage = stage_of[n]
            at = ready[stage]
            if at is None:
                at = ready[stage] = (
                    max((stage_end[p] for p in producers[stage]), default=0) + (waits[stage])
                )
            k = before[n]
            if k >= 0 and end_of[k] > at:
                at = end_of[k]
            if not unlimited:
                heap = shared if pool is not None else heaps[executor_of[n]]
                free = heap[0]
                if free > at:
                    at = free
            end = at + durations.get(n, took[n]) if durations else at + took[n]
            if not unlimited:
                replace(heap, end)
            end_of[n] = end
            if end > stage_end[stage]:
                stage_end[stage] = end
            if end > end_all:
                end_all = end
            remaining[stage] -= 1
            return remaining[stage] == 0

        def blocked(stage: int) -> bool:
            return any(remaining[p] > 0 for p in producers[stage])

        def release() -> None:
            """Run the waiting attempts of every stage whose producers have all ended."""
            ended = True
            while ended and pending:
                ended = False
                for stage in [s for s in pending if not blocked(s)]:
                    for n in pending.pop(stage):
                        ended = run(n) or ended

        for n in self.order:
            if dropped and n in dropped:
                continue
            stage = stage_of[n]
            at = ready[stage]
            if at is None:
                if stage in pending or blocked(stage):
                    pending.setdefault(stage, []).append(n)
                elif run(n):
                    release()
                continue
            # The usual attempt, inlined (a job is replayed several times, with 800,000
            # attempts at most): run(n) for a stage already started.
            k = before[n]
            if k >= 0 and end_of[k] > at:
                at = end_of[k]
            if unlimited:
                end = at + durations.get(n, took[n]) if durations else at + took[n]
            else:
                heap = shared if pool is not None else heaps[executor_of[n]]
                free = heap[0]
                if free > at:
                    at = free
                end = at + durations.get(n, took[n]) if durations else at + took[n]
                replace(heap, end)
            end_of[n] = end
            if end > stage_end[stage]:
                stage_end[stage] = end
            if end > end_all:
                end_all = end
            remaining[stage] -= 1
            if not remaining[stage]:
                release()
        while pending:  # a cycle in a damaged DAG: run what is left, stage by stage
            for n in pending.pop(min(pending)):
                run(n)
            release()
        tail = self.tail - (self.idle_tail if change.no_idle else 0)
        return end_all + max(0, tail)

    def without(self, change: Change) -> int:
        """Return the wall time by which the job would have ended earlier without ``change``."""
        saved = self.time() - self.time(change)
        return min(max(0, saved), self.run_ms)


def prepare(
    runs: Iterable[TaskRun],
    edges: Iterable[tuple[int, int]],
    started_at: int,
    completed_at: int,
    gap_min: int,
) -> Replay:
    """Prepare a replay of ``runs`` (attempts that never started are not run).

    Nor are attempts that started further than ``CLOCK_SKEW_MS`` outside the job's run, when
    it is known; an end past it counts as at most that far. A ``Change`` names attempts by
    their position in ``runs``: those not run keep theirs. ``edges`` are (producer,
    consumer) stage ids; ``gap_min`` is the shortest idle stretch that the idle finding
    counts (``Change.no_idle`` removes those).
    """
    runs = list(runs)
    # Attempts recorded outside the job's run, beyond clock skew, are damaged: not replayed.
    lo, hi = 1, 2**63
    if 0 < started_at <= completed_at:
        lo, hi = started_at - th.CLOCK_SKEW_MS, completed_at + th.CLOCK_SKEW_MS
    started = [n for n, r in enumerate(runs) if r.start > 0 and lo <= r.start <= hi]
    ran = [runs[n] for n in started]
    t0 = started_at if started_at > 0 else min((r.start for r in ran), default=0)
    if ran:
        t0 = min(t0, min(r.start for r in ran))
    # tuple.__new__ itself: TaskRun._make is a Python-level call per attempt (a fifth of this);
    # the end is min(max(start, end), hi) as comparisons, not two calls an attempt.
    new = tuple.__new__
    every = [
        new(
            TaskRun,
            (
                r.stage,
                r.task,
                r.executor,
                r.start - t0,
                (e if (e := r.end if r.end > r.start else r.start) < hi else hi) - t0,
                r.ok,
            ),
        )
        for r in runs
    ]
    shifted = [every[n] for n in started]
    stages = {r.stage for r in shifted}
    producers: dict[int, list[int]] = defaultdict(list)
    for a, b in edges:
        if a in stages and b in stages and a != b and a not in producers[b]:
            producers[b].append(a)
    slots = inferred_slots(shifted)
    timeline = _Timeline(shifted, sum(slots.values()), gap_min)
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for r in shifted:
        sid = r.stage
        if first.get(sid, r.start) >= r.start:
            first[sid] = r.start
        if last.get(sid, r.end) <= r.end:
            last[sid] = r.end
    delays, idle_delays = {}, {}
    for stage in stages:
        ready = max((last[p] for p in producers.get(stage, ())), default=0)
        delays[stage] = timeline.free_between(ready, first[stage])
        idle_delays[stage] = min(delays[stage], timeline.idle_between(ready, first[stage]))
    end_rec = max((r.end for r in shifted), default=0)
    run_end = max(completed_at - t0, end_rec) if completed_at > 0 else end_rec
    tail = run_end - end_rec
    # By start, ties in the log's order (sorted is stable): no key tuple per attempt.
    starts = [r.start for r in every]
    order = sorted(started, key=starts.__getitem__)
    return Replay(
        runs=every,
        producers=dict(producers),
        started_at=t0,
        completed_at=t0 + run_end,
        slots=slots,
        delays=delays,
        idle_delays=idle_delays,
        tail=tail,
        idle_tail=tail if tail >= gap_min else 0,
        order=order,
    )


def what_if(replay: Replay) -> WhatIf | None:
    """Return the job's run time with half, twice and unlimited executors (None: no tasks)."""
    if not replay.order or replay.run_ms <= 0:
        return None
    n = replay.executors
    per = replay.median_slots
    # The reference is the replay as recorded (each attempt on its own executor), as for
    # the costs: a pool of n executors of the median slots is the same when slots agree.
    as_run = replay.time()

    def shifted(ms: int) -> int:
        return max(0, replay.run_ms + ms - as_run)

    return WhatIf(
        executors=n,
        slots=per,
        run_ms=replay.run_ms,
        floor_ms=shifted(replay.time(unlimited=True)),
        half_ms=shifted(replay.time(pool=max(1, math.ceil(n / 2)) * per)),
        double_ms=shifted(replay.time(pool=2 * n * per)),
    )
