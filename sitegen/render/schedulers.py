"""The schedulers a site's jobs ran on, as the jobs list and ``fleet.json`` show them."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import msgspec


class SchedulerRow(msgspec.Struct, frozen=True, gc=False):
    """One scheduler's published jobs: how many, failed, the first start and the last end (ms)."""

    name: str
    jobs: int
    failed: int
    first: int
    last: int


def scheduler_rows(rows: Iterable[tuple[str, int, int, int, int]]) -> list[SchedulerRow]:
    """Return the rows of ``State.schedulers``' tuples, by name."""
    return [SchedulerRow(*row) for row in rows]


def fleet_schedulers(rows: Sequence[SchedulerRow]) -> list[dict[str, Any]]:
    """Return ``fleet.json``'s ``schedulers``: plain objects, by name (times in ms)."""
    return [
        {"scheduler": r.name, "jobs": r.jobs, "failed": r.failed, "first": r.first, "last": r.last}
        for r in rows
    ]
