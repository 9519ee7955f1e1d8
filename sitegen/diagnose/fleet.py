"""The fleet verdict: each executor's evidence pooled across jobs, and when it went bad.

A median needs every attempt, which the state does not keep; so the map step keeps per job
and executor a bounded record (``Evidence``): the sum of its attempts' standardised log
ratios to their peers (each clipped, and each stage weighing at most FLEET_STAGE_ATTEMPTS
attempts), their count, the sum of their log ratios, their time beyond their peers', and
its own failed attempts. Sums add across jobs and subtract when a job goes, so the state
keeps them per executor and hour (``Cell``), and the reduce judges each executor from its
cells: slow over the stretch of hours whose attempts ran slowest (the pooled mean is far out
in standard errors there), failing over the stretch whose attempts failed most, on their own.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from sitegen.diagnose import thresholds as th
from sitegen.diagnose.executors import Comparison
from sitegen.eventlog.payload import Stage
from sitegen.eventlog.schema import TaskEnd
from sitegen.model import ExecutorEvidence as Evidence
from sitegen.model import ExecutorStats, is_failed

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
# Log ratios are clipped to a tenth and ten times the peers': one absurd attempt (a clock
# jump) must not decide a node's mean.
_LOG_CLIP = math.log(10.0)

HEALTHY, SLOW, FAILING = "healthy", "slow", "failing"


def evidence(
    seen: Mapping[str, list[Comparison]], stages: Iterable[tuple[Stage, list[TaskEnd]]]
) -> dict[str, Evidence]:
    """Return each executor's evidence in one job from its comparisons and its stages."""
    own: Counter[str] = Counter()
    for _, ends in stages:
        failed = [e.executor_id for e in ends if is_failed(e.status)]
        if not failed:  # most stages: no executor to count
            continue
        # Failures every executor of the stage shares (or that more than one has) are the
        # query's or its data's; a stage run by one executor tells nothing about the node.
        if len(set(failed)) == 1 and len({e.executor_id for e in ends}) > 1:
            own.update(failed)
    found: dict[str, Evidence] = {}
    cap, clip = th.FLEET_STAGE_ATTEMPTS, th.FLEET_CLIP_Z
    for name in sorted(seen.keys() | own.keys()):
        if not name:
            continue
        compared, z_sum, log_sum, excess = 0, 0.0, 0.0, 0.0
        for c in seen.get(name, ()):
            ratios, units, extra = c.scores
            k = len(ratios)
            if k == 1:  # most comparisons: one attempt, weighing 1 (the same sums, no calls)
                z, r = units[0], ratios[0]
                compared += 1
                z_sum += clip if z > clip else -clip if z < -clip else z
                log_sum += _LOG_CLIP if r > _LOG_CLIP else -_LOG_CLIP if r < -_LOG_CLIP else r
                excess += extra[0]
                continue
            if not k:
                continue
            weight = min(k, cap) / k
            compared += min(k, cap)
            z_sum += weight * _clipped_sum(units, clip)
            log_sum += weight * _clipped_sum(ratios, _LOG_CLIP)
            excess += sum(extra)
        found[name] = Evidence(compared, z_sum, log_sum, round(excess), own[name])
    return found


def _clipped_sum(values: list[float], bound: float) -> float:
    """Return the sum of ``values``, each clipped to ``[-bound, bound]``."""
    if -bound <= min(values) and max(values) <= bound:  # nearly always: nothing to clip
        return sum(values)
    return sum(-bound if v < -bound else bound if v > bound else v for v in values)


class Cell(NamedTuple):
    """One executor's pooled evidence in one hour (by its jobs' start times)."""

    at: int  # the hour's start (ms since the epoch)
    jobs: int
    tasks: int
    failed: int
    compared: int
    z_sum: float
    log_sum: float
    excess_ms: float
    own_failed: int
    failing_jobs: int  # jobs in which it had failed attempts of its own


@dataclass
class FleetExecutor:
    """One executor across the published jobs, and its verdict."""

    executor_id: str
    first_seen: int
    last_seen: int
    jobs: int
    attempts: int
    failed_attempts: int
    own_failed: int
    # Its attempts' pooled ratio to their peers' (exp of the mean log ratio; 1.0: none).
    slowness: float
    verdict: str
    # The hours its evidence lies in: [start, end) in ms; None when healthy.
    window: tuple[int, int] | None
    # In the window: its jobs, the pooled ratio and z, what its slowness cost (ms).
    window_jobs: int = 0
    window_ratio: float = 1.0
    window_z: float = 0.0
    cost_ms: int = 0
    cells: list[Cell] = field(default_factory=list)


def _best_stretch(values: list[float]) -> tuple[int, int, float]:
    """Return the stretch ``[i, j]`` of ``values`` with the largest sum, and the sum."""
    best, begin, end = 0.0, 0, -1
    running, start = 0.0, 0
    for n, value in enumerate(values):
        if running <= 0:
            running, start = 0.0, n
        running += value
        if running > best:
            best, begin, end = running, start, n
    return begin, end, best


def judge(
    executor_id: str,
    first_seen: int,
    last_seen: int,
    cells: list[Cell],
) -> FleetExecutor:
    """Judge one executor from its cells (in time order): healthy, slow or failing."""
    jobs = sum(c.jobs for c in cells)
    compared = sum(c.compared for c in cells)
    log_sum = sum(c.log_sum for c in cells)
    slowness = math.exp(log_sum / compared) if compared else 1.0
    result = FleetExecutor(
        executor_id,
        first_seen,
        last_seen,
        jobs,
        sum(c.tasks for c in cells),
        sum(c.failed for c in cells),
        sum(c.own_failed for c in cells),
        round(slowness, 3),
        HEALTHY,
        None,
        cells=cells,
    )
    # Failing: the stretch whose own failures most exceed FLEET_FAILED_SHARE of its attempts.
    i, j, _ = _best_stretch([c.own_failed - th.FLEET_FAILED_SHARE * c.tasks for c in cells])
    window = cells[i : j + 1]
    failing_jobs = sum(c.failing_jobs for c in window)
    if (
        failing_jobs >= th.FLEET_MIN_FAILING_JOBS
        and sum(c.own_failed for c in window) >= th.FLEET_MIN_FAILED
    ):
        result.verdict = FAILING
        result.window = (window[0].at, window[-1].at + HOUR_MS)
        result.window_jobs = sum(c.jobs for c in window)
        return result
    # Slow: the stretch whose attempts ran slowest, by their standardised log ratios less a
    # drift (a healthy node's stretches shrink to nothing), judged on its pooled mean.
    i, j, _ = _best_stretch([c.z_sum - th.FLEET_DRIFT * c.compared for c in cells])
    # The drift trims a stretch's edges where the node was slow but its few attempts noisy:
    # the hours next to it that still ran slower than their peers belong to it.
    while j >= i and i > 0 and cells[i - 1].z_sum > 0:
        i -= 1
    while i <= j < len(cells) - 1 and cells[j + 1].z_sum > 0:
        j += 1
    window = cells[i : j + 1]
    n = sum(c.compared for c in window)
    if not window or not n:
        return result
    z = sum(c.z_sum for c in window) / math.sqrt(n)
    ratio = math.exp(sum(c.log_sum for c in window) / n)
    excess = sum(c.excess_ms for c in window)
    result.window_ratio, result.window_z = round(ratio, 3), round(z, 2)
    in_jobs = sum(c.jobs for c in window)
    if (
        in_jobs >= th.FLEET_MIN_JOBS
        and n >= th.FLEET_MIN_ATTEMPTS
        and z >= th.FLEET_Z
        and ratio >= th.FLEET_MIN_RATIO
        and excess > 0
    ):
        result.verdict = SLOW
        result.window = (window[0].at, window[-1].at + HOUR_MS)
        result.window_jobs = in_jobs
        result.cost_ms = round(excess)
    return result


def hour_of(start: int) -> int:
    """Return the start of the hour a job started in (ms): the cell its evidence pools in."""
    return start // HOUR_MS * HOUR_MS


def cells_of(
    jobs: Iterable[tuple[int, Mapping[str, ExecutorStats], Mapping[str, Evidence]]],
) -> dict[str, list[Cell]]:
    """Pool jobs' ``(start_time, executors, evidence)`` into each executor's hourly cells."""
    sums: dict[tuple[str, int], list[float]] = defaultdict(lambda: [0.0] * 9)
    for start, executors, found in jobs:
        hour = hour_of(start)
        for name, stats in executors.items():
            e = found.get(name, Evidence())
            row = sums[name, hour]
            for n, value in enumerate(
                (
                    1,
                    stats.tasks,
                    stats.failed,
                    e.compared,
                    e.z_sum,
                    e.log_sum,
                    e.excess_ms,
                    e.own_failed,
                    1 if e.own_failed else 0,
                )
            ):
                row[n] += value
    by_executor: dict[str, list[Cell]] = defaultdict(list)
    for (name, hour), row in sorted(sums.items()):
        count, tasks, failed, compared, z_sum, log_sum, excess, own, failing = row
        by_executor[name].append(
            Cell(
                hour,
                int(count),
                int(tasks),
                int(failed),
                int(compared),
                z_sum,
                log_sum,
                excess,
                int(own),
                int(failing),
            )
        )
    return dict(by_executor)


def pool(
    jobs: Iterable[tuple[int, Mapping[str, ExecutorStats], Mapping[str, Evidence]]],
) -> list[FleetExecutor]:
    """Judge every executor of some jobs (``sitegen check``: the logs it reads, no state)."""
    jobs = list(jobs)
    seen: dict[str, tuple[int, int]] = {}
    for start, executors, _ in jobs:
        for name in executors:
            first, last = seen.get(name, (start, start))
            seen[name] = (min(first, start), max(last, start))
    return [judge(name, *seen[name], cells) for name, cells in sorted(cells_of(jobs).items())]


def bucket_ms(first: int, last: int) -> int:
    """Return the picture's column width: hours for a history of a few days, else days."""
    return HOUR_MS if last - first <= th.FLEET_HOURS_SPAN_MS else DAY_MS
