"""Slow executors: nodes whose tasks were slower than their peers' in every stage they shared."""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass

from sitegen.diagnose import thresholds as th
from sitegen.diagnose.stage_findings import StageTimes
from sitegen.diagnose.stats import median, times
from sitegen.finding import Finding, FindingKind
from sitegen.text.formatting import duration


@dataclass(frozen=True)
class Comparison:
    """One executor in one stage against the other executors of that stage."""

    stage: str
    tasks: int
    mine: float  # its median task duration
    theirs: float  # the median of the other executors' median durations

    @property
    def ratio(self) -> float:
        """Return how many times slower its median task was."""
        return self.mine / max(self.theirs, 1.0)


def compare(stage: StageTimes) -> list[tuple[str, Comparison]]:
    """Compare every executor of a stage with the others (each executor counts once)."""
    if stage.ends is None or len(stage.took) < th.STAGE_MIN_TASKS:
        return []
    by_executor: dict[str, list[int]] = defaultdict(list)
    for name, took in zip(stage.executors, stage.took, strict=True):
        by_executor[name or ""].append(took)
    if len(by_executor) < 2:
        return []
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
        tasks = len(by_executor[name])
        result.append((name, Comparison(stage.stage.stage_id, tasks, mine, theirs)))
    return result


def slow_executors(stages: list[StageTimes]) -> dict[str, Finding]:
    """Return a slow-executor finding per executor slower than its peers in every shared stage."""
    seen: dict[str, list[Comparison]] = defaultdict(list)
    # Executors of a stage where none can be slow: their median is at most the stage's
    # slowest task and their peers' at least its fastest. The usual stage stops here,
    # without grouping its tasks by executor.
    fine: set[str | None] = set()
    for stage in stages:
        ordered = stage.ordered
        if stage.ends is None or len(ordered) < th.STAGE_MIN_TASKS:
            continue
        if (
            ordered[-1] < ordered[0] * th.MODERATE
            or ordered[-1] - ordered[0] < th.EXECUTOR_MIN_EXCESS_MS
        ):
            names = set(stage.executors)
            if len(names) > 1:
                fine |= names
            continue
        for name, comparison in compare(stage):
            seen[name].append(comparison)
    found = {}
    for name, comparisons in seen.items():
        tasks = sum(c.tasks for c in comparisons)
        if not name or name in fine or tasks < th.EXECUTOR_MIN_TASKS:
            continue
        if any(
            c.ratio < th.MODERATE or c.mine - c.theirs < th.EXECUTOR_MIN_EXCESS_MS
            for c in comparisons
        ):
            continue
        least = min(comparisons, key=lambda c: c.ratio)
        grade = th.severity(least.ratio)
        assert grade is not None
        worst = max(comparisons, key=lambda c: c.ratio)
        where = (
            f"stage {least.stage}"
            if len(comparisons) == 1
            else f"each of the {len(comparisons)} stages it shared with them"
        )
        found[name] = Finding(
            kind=FindingKind.SLOW_EXECUTOR,
            severity=grade,
            stage_id=None,
            task_id=None,
            executor_id=name,
            value=round(least.ratio, 2),
            message=(
                f"Executor {name} ran its {tasks} tasks slower than the other executors in "
                f"{where}: its median task took {times(least.ratio)} theirs or more (stage "
                f"{worst.stage}: {duration(worst.mine)} against {duration(worst.theirs)}): "
                "a slow node, not slow tasks."
            ),
        )
    return found
