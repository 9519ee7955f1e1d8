"""One finding about one job: what kind, how bad, what it is about, and the evidence."""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable

import msgspec

from sitegen.text.formatting import duration


class FindingSeverity(enum.StrEnum):
    """How much a finding matters; the order is the order of the members."""

    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        """Return 0 for info, 1 for warning, 2 for critical."""
        return _RANK[self]


_RANK = {s: i for i, s in enumerate(FindingSeverity)}


class FindingKind(enum.StrEnum):
    """What a finding says."""

    STRAGGLER = "straggler"
    DATA_SKEW = "data-skew"
    SLOW_EXECUTOR = "slow-executor"
    FAILED_ATTEMPTS = "failed-attempts"
    QUEUED = "queued"
    IDLE = "idle"
    REGRESSION = "regression"


class Finding(msgspec.Struct, frozen=True, gc=False):
    """A finding as ``jobs/<job_id>/findings.json`` lists it (ids as in the log, None if n/a)."""

    kind: FindingKind
    severity: FindingSeverity
    stage_id: int | None
    task_id: int | None
    executor_id: str | None
    value: float
    message: str
    # How much earlier (ms) the job would have ended without it, from a replay of its tasks;
    # None where that does not apply (a regression has its own figures, a failed job's
    # failures cost it the job). Costs of different findings do not add up.
    impact_ms: int | None = None


def most_severe_first(findings: Iterable[Finding]) -> list[Finding]:
    """Order findings for display: most severe first, then by kind, stage and task."""
    return sorted(
        findings,
        key=lambda f: (
            -f.severity.rank,
            f.kind,
            -1 if f.stage_id is None else f.stage_id,
            -1 if f.task_id is None else f.task_id,
            f.executor_id or "",
        ),
    )


class WhatIf(msgspec.Struct, frozen=True, gc=False):
    """The job's run time on fewer or more executors, as the replay estimates it (ms)."""

    executors: int
    slots: int
    run_ms: int
    floor_ms: int
    half_ms: int
    double_ms: int

    def as_json(self) -> dict[str, int]:
        """Return what ``findings.json`` lists under ``what_if``."""
        return {
            "executors": self.executors,
            "floor_ms": self.floor_ms,
            "half_ms": self.half_ms,
            "double_ms": self.double_ms,
        }

    def sentence(self) -> str:
        """Say it as the job page does, with the model's assumptions in one sentence."""
        half = max(1, math.ceil(self.executors / 2))
        slots = f"{self.slots} slot{'s' if self.slots != 1 else ''} each"
        return (
            f"With twice the executors ({2 * self.executors} of {slots}): about "
            f"{duration(self.double_ms)}, {_change(self.double_ms, self.run_ms)}; with half "
            f"({half}): about {duration(self.half_ms)}, {_change(self.half_ms, self.run_ms)}; "
            f"no faster than {duration(self.floor_ms)} however many (the floor, not the "
            "critical path). Replayed from the recorded task times: each attempt as long as it "
            "ran, in the order it ran, on the first free slot, each stage after the stages it "
            "reads; an executor's slots are the most of its tasks seen running at once."
        )


def _change(ms: int, run_ms: int) -> str:
    """Return ``-50%`` or ``+100%``: ``ms`` against the run."""
    if run_ms <= 0:
        return "±0%"
    pct = round(100 * (ms - run_ms) / run_ms)
    return "±0%" if pct == 0 else f"{'+' if pct > 0 else '−'}{abs(pct)}%"
