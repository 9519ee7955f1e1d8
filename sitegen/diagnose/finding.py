"""One finding about one job: what kind, how bad, what it is about, and the evidence."""

from __future__ import annotations

import enum
from collections.abc import Iterable

import msgspec


class Severity(enum.StrEnum):
    """How much a finding matters; the order is the order of the members."""

    INFO = "info"
    WARNING = "warning"
    CRITICAL = "critical"

    @property
    def rank(self) -> int:
        """Return 0 for info, 1 for warning, 2 for critical."""
        return _RANK[self]


_RANK = {s: i for i, s in enumerate(Severity)}


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
    severity: Severity
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
