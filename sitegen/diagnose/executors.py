"""Slow executors: nodes whose tasks ran slower, task for task, than others' on the same stages.

Each successful attempt of an executor is compared with the other executors' attempts of
its stage on the log scale (where task times' noise is symmetric): its log ratio to the
median of the other executors' median durations (each executor counts once, so one bad node
cannot hide in its own median), in units of the stage's robust sigma. The executor is slow
when its median attempt is far out: a node that ran more tasks at normal speed is not,
however many slow tasks landed on it.
"""

from __future__ import annotations

import functools
import math
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field

from sitegen.diagnose import thresholds as th
from sitegen.diagnose.stage_findings import StageTimes, robust_sigma
from sitegen.diagnose.stats import median, times
from sitegen.eventlog.schema import TaskEnd
from sitegen.finding import Finding, FindingKind
from sitegen.text.formatting import duration

# The standard error of a median of k normal draws is this many sigmas over the root of k.
MEDIAN_SE = 1.2533


@dataclass
class Comparison:
    """One executor's attempts in one stage against the other executors of that stage."""

    stage: str
    stage_id: int | None
    theirs: float  # the median of the other executors' median durations (ms)
    sigma: float  # the stage's robust sigma of log durations
    took: list[int] = field(default_factory=list)
    ends: list[TaskEnd] = field(default_factory=list)

    @property
    def mine(self) -> float:
        """Return its median attempt's duration (ms)."""
        return median(sorted(self.took))

    @functools.cached_property
    def scores(self) -> tuple[list[float], list[float], list[float]]:
        """Return each attempt's log ratio to its peers, that in sigmas, and its excess (ms)."""
        # Made once: an executor is judged over all its stages, and then in each one.
        base = math.log(max(self.theirs, 1.0))
        log, sigma, theirs = math.log, self.sigma, self.theirs
        ratios = [log(took if took > 1 else 1) - base for took in self.took]
        return ratios, [r / sigma for r in ratios], [took - theirs for took in self.took]


def compare(stage: StageTimes) -> list[tuple[str, Comparison]]:
    """Compare every executor of a stage with the others."""
    if stage.ends is None or len(stage.took) < th.STAGE_MIN_TASKS:
        return []
    by_executor: dict[str, list[int]] = defaultdict(list)
    ends_of: dict[str, list[TaskEnd]] = defaultdict(list)
    for name, took, end in zip(stage.executors, stage.took, stage.ends, strict=True):
        by_executor[name or ""].append(took)
        ends_of[name or ""].append(end)
    if len(by_executor) < 2:
        return []
    sigma = robust_sigma(stage)
    medians = {name: median(sorted(took)) for name, took in by_executor.items()}
    ordered = sorted(medians.values())
    others = len(ordered) - 1
    result = []
    for name, mine in medians.items():
        # The median of the other executors' medians: ``ordered`` without one copy of
        # mine, read around the gap (no copy per executor).
        gone = bisect_left(ordered, mine)

        def rest(k: int, gone: int = gone) -> float:
            return ordered[k if k < gone else k + 1]

        mid = others // 2
        theirs = rest(mid) if others % 2 else (rest(mid - 1) + rest(mid)) / 2
        result.append(
            (
                name,
                Comparison(
                    stage.stage.stage_id,
                    stage.stage_id,
                    theirs,
                    sigma,
                    by_executor[name],
                    ends_of[name],
                ),
            )
        )
    return result


@dataclass(frozen=True)
class Verdict:
    """How much slower an executor's attempts ran than its peers', and how sure that is."""

    tasks: int
    ratio: float  # its median attempt's ratio to its peers' (exp of the median log ratio)
    z: float  # the median standardised log ratio, in standard errors of a median
    excess_ms: float  # its median attempt's time beyond its peers'

    @property
    def slow(self) -> bool:
        """Tell whether this is a slow node by every threshold."""
        return (
            self.tasks >= th.EXECUTOR_MIN_TASKS
            and self.ratio >= th.EXECUTOR_MIN_RATIO
            and self.z >= th.EXECUTOR_Z
            and self.excess_ms >= th.EXECUTOR_MIN_EXCESS_MS
        )


def judge(comparisons: list[Comparison]) -> Verdict:
    """Pool an executor's attempts over ``comparisons`` and judge them."""
    ratios: list[float] = []
    units: list[float] = []
    excess: list[float] = []
    for c in comparisons:
        mine = c.scores
        ratios += mine[0]
        units += mine[1]
        excess += mine[2]
    k = len(ratios)
    if not k:
        return Verdict(0, 1.0, 0.0, 0.0)
    ratio = math.exp(median(sorted(ratios)))
    z = median(sorted(units)) * math.sqrt(k) / MEDIAN_SE
    return Verdict(k, ratio, z, median(sorted(excess)))


@dataclass
class SlowExecutor:
    """A slow node's finding, and its attempts with the duration its peers would have taken."""

    finding: Finding
    # Per attempt (a TaskEnd of it): its duration at its peers' speed.
    at_peer_speed: dict[int, int]
    ends: list[TaskEnd]


def comparisons(stages: list[StageTimes]) -> dict[str, list[Comparison]]:
    """Return each executor's comparisons with its peers, over every stage it shared."""
    seen: dict[str, list[Comparison]] = defaultdict(list)
    for stage in stages:
        for name, comparison in compare(stage):
            seen[name].append(comparison)
    return seen


def slow_executors(
    stages: list[StageTimes], seen: dict[str, list[Comparison]] | None = None
) -> dict[tuple[str, int | None], SlowExecutor]:
    """Return the slow executors, by (name, None) job-wide or (name, stage id) in one stage.

    An executor is judged over every stage it shared with others; one that is not slow
    there may still be slow in one stage (a node that struggled for a while). ``seen``:
    the comparisons, when the caller made them already.
    """
    if seen is None:
        seen = comparisons(stages)
    found: dict[tuple[str, int | None], SlowExecutor] = {}
    least = th.EXECUTOR_MIN_TASKS
    for name, shared in seen.items():
        # Too few attempts to be slow by the thresholds (the usual case on a small job with
        # many executors): no verdict to work out.
        if not name or sum(len(c.took) for c in shared) < least:
            continue
        pooled = judge(shared)
        if pooled.slow:
            found[(name, None)] = _finding(name, shared, pooled, job_wide=True)
            continue
        if len(shared) < 2:
            continue
        for c in shared:
            if len(c.took) < least:
                continue
            alone = judge([c])
            if alone.slow:
                found[(name, c.stage_id)] = _finding(name, [c], alone, job_wide=False)
    return found


def _finding(
    name: str, comparisons: list[Comparison], verdict: Verdict, job_wide: bool
) -> SlowExecutor:
    """Return the slow-executor finding of a verdict, and its attempts at peer speed."""
    grade = th.at_least_info(verdict.ratio)
    worst = max(comparisons, key=lambda c: c.mine / max(c.theirs, 1.0))
    where = (
        f"stage {comparisons[0].stage}"
        if len(comparisons) == 1
        else f"the {len(comparisons)} stages it shared with them"
    )
    fixed: dict[int, int] = {}
    ends: list[TaskEnd] = []
    for c in comparisons:
        scale = min(1.0, c.theirs / max(c.mine, 1.0))
        for took, end in zip(c.took, c.ends, strict=True):
            fixed[id(end)] = round(took * scale)
            ends.append(end)
    finding = Finding(
        kind=FindingKind.SLOW_EXECUTOR,
        severity=grade,
        stage_id=None if job_wide else comparisons[0].stage_id,
        task_id=None,
        executor_id=name,
        value=round(verdict.ratio, 2),
        message=(
            f"Executor {name} ran its {verdict.tasks} tasks slower than the other executors "
            f"in {where}: its median task took {times(verdict.ratio)} theirs (stage "
            f"{worst.stage}: {duration(worst.mine)} against {duration(worst.theirs)}): "
            "a slow node, not slow tasks."
        ),
    )
    return SlowExecutor(finding, fixed, ends)
