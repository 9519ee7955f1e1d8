"""A recurring run compared with the previous successful run of its name, stage by stage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sitegen.model import StageFigures
from sitegen.text.formatting import NONE


def change(now: int | None, before: int | None) -> str:
    """Return the relative change from ``before`` to ``now``: ``+35%``, ``-10%``, ``±0%``."""
    if now is None or before is None:
        return NONE
    if before == 0:
        return "±0%" if now == 0 else "new"
    percent = round((now - before) * 100 / before)
    if percent == 0:
        return "±0%"
    return f"+{percent}%" if percent > 0 else f"\u2212{-percent}%"


@dataclass(frozen=True)
class StageChange:
    """One stage in this run and in the baseline (either may lack it)."""

    stage_id: str
    now: StageFigures | None
    before: StageFigures | None

    def delta(self, field: str) -> str:
        """Return the change of one figure (``duration_ms``, ``tasks``, ``input_rows``…)."""
        now = getattr(self.now, field) if self.now else None
        before = getattr(self.before, field) if self.before else None
        return change(now, before)


def compare(now: Sequence[StageFigures], before: Sequence[StageFigures]) -> list[StageChange]:
    """Pair stages by id: this run's in order, then any only the baseline had."""
    earlier = {f.stage_id: f for f in before}
    pairs = [StageChange(f.stage_id, f, earlier.pop(f.stage_id, None)) for f in now]
    pairs += [StageChange(f.stage_id, None, f) for f in before if f.stage_id in earlier]
    return pairs
