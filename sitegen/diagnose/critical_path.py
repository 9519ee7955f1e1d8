"""The critical path: the chain of stages through the DAG that determined a job's wall time."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from operator import attrgetter

from sitegen.eventlog.schema import TaskEnd
from sitegen.text.formatting import duration

_START = attrgetter("start_exec_time")
_END = attrgetter("end_exec_time")


@dataclass(frozen=True)
class CriticalPath:
    """Stage ids from the first producer to the last stage, and the time they span."""

    stages: tuple[str, ...]
    start: int
    end: int

    def sentence(self, run_ms: int) -> str:
        """Name the path: ``stage 1 → stage 3 → stage 4 (4.2 s of the job's 5.0 s run)``."""
        chain = " → ".join(f"stage {s}" for s in self.stages)
        return f"{chain} ({duration(self.end - self.start)} of the job's {duration(run_ms)} run)"


def stage_windows(stages: list[list[TaskEnd]]) -> dict[str, tuple[int, int]]:
    """Return each stage's first task start and last task end, by stage id as text.

    ``stages`` holds each stage's TaskEnd records; attempts that never started (0) are left
    out, and an end before its start counts as the start.
    """
    windows: dict[str, tuple[int, int]] = {}
    for ends in stages:
        if not ends:
            continue
        starts = list(map(_START, ends))
        first = min(starts)
        if first <= 0:
            starts = [s for s in starts if s > 0]
            if not starts:
                continue
            first = min(starts)
        last = max(max(map(_END, ends)), max(starts))
        sid = str(ends[0].stage_id)
        old = windows.get(sid)
        windows[sid] = (first, last) if old is None else (min(old[0], first), max(old[1], last))
    return windows


def critical_path(
    windows: dict[str, tuple[int, int]], edges: list[tuple[str, str]]
) -> CriticalPath | None:
    """Walk back from the stage that ended last through the producer that ended last.

    A consumer cannot finish before its inputs are written, so the producer that finished
    last is the one it waited for; the walk stops at a stage with no producer that ran.
    """
    if not windows:
        return None
    producers: dict[str, list[str]] = defaultdict(list)
    for src, dst in edges:
        if src in windows:
            producers[dst].append(src)
    # The latest end; ties go to the stage that started last (it depended on the others).
    here = max(windows, key=lambda s: (windows[s][1], windows[s][0], s))
    chain = [here]
    seen = {here}
    while True:
        options = [p for p in producers.get(here, ()) if p not in seen]
        if not options:
            break
        here = max(options, key=lambda s: (windows[s][1], s))
        chain.append(here)
        seen.add(here)
    chain.reverse()
    return CriticalPath(tuple(chain), windows[chain[0]][0], windows[chain[-1]][1])
