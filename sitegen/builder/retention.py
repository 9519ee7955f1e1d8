"""Which completed jobs the site keeps: the newest N, and those that ended recently enough."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from sitegen.errors import UsageError
from sitegen.model import newest_first

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_age(text: str) -> float:
    """Turn ``30d``, ``12h``, ``90m``, ``2w`` or ``45s`` into seconds."""
    found = _AGE.match(text)
    if found is None:
        raise UsageError(f"max age {text!r} is not a number followed by s, m, h, d or w")
    return float(found.group(1)) * _SECONDS[found.group(2)]


class Ended(Protocol):
    """A completed job as retention sees it."""

    @property
    def job_id(self) -> str: ...

    @property
    def start_time(self) -> int: ...

    @property
    def end_time(self) -> int: ...


def retained(
    jobs: Sequence[Ended],
    max_jobs: int | None,
    max_age_seconds: float | None,
    now_seconds: float,
) -> set[str]:
    """Return the ids of the jobs retention keeps (all of them when no limit is set)."""
    if max_jobs is None and max_age_seconds is None:
        return {j.job_id for j in jobs}  # no order needed: every build without limits asks
    kept = newest_first(jobs)
    if max_age_seconds is not None:
        cutoff_ms = (now_seconds - max_age_seconds) * 1000
        kept = [j for j in kept if j.end_time >= cutoff_ms]
    if max_jobs is not None:
        kept = kept[:max_jobs]
    return {j.job_id for j in kept}
