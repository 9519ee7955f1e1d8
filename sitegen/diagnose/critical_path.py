"""The critical path: the chain of stages through the DAG that determined a job's wall time."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from sitegen.eventlog.schema import TaskEnd
from sitegen.render.formatting import duration


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


def stage_windows(tasks: list[TaskEnd]) -> dict[str, tuple[int, int]]:
    """Return each stage's first task start and last task end, by stage id as text."""
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for task in tasks:
        start = task.start_exec_time
        if start <= 0:
            continue  # never ran
        sid = task.stage_id
        if start < first.get(sid, start + 1):
            first[sid] = start
        end = max(start, task.end_exec_time)
        if end > last.get(sid, -1):
            last[sid] = end
    return {str(sid): (first[sid], last[sid]) for sid in first}


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
