"""``--max-site-size``: keep the newest completed jobs whose files fit in a byte budget."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from sitegen.errors import UsageError
from sitegen.model import newest_first

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]i?B|B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9}
_UNITS |= {"kib": 2**10, "mib": 2**20, "gib": 2**30}
# What every job costs beyond its own directories: its rows on the listing page, the front
# page and /api/jobs, and its find-index entry (measured: about 600 bytes; rounded up).
LISTING_BYTES_PER_JOB = 1024
# The site-wide files that do not grow with the jobs: assets, host files, empty pages.
SITE_RESERVE_BYTES = 256 * 1024


def parse_size(text: str) -> int:
    """Turn ``500MB``, ``1GB``, ``1.5GiB`` or ``123456`` (bytes) into bytes."""
    found = _SIZE.match(text)
    if found is None:
        raise UsageError(f"size {text!r} is not a number followed by B, KB, MB, GB (or KiB…)")
    return int(float(found.group(1)) * _UNITS[(found.group(2) or "").lower()])


class Sized(Protocol):
    """A completed job as selection sees it."""

    @property
    def job_id(self) -> str: ...

    @property
    def start_time(self) -> int: ...

    @property
    def bytes(self) -> int: ...

    @property
    def raw_bytes(self) -> int: ...


def fits(jobs: Sequence[Sized], limit: int, raw_logs: bool = True) -> set[str]:
    """Return the ids of the newest jobs whose files fit in ``limit`` bytes, in order.

    With ``raw_logs`` False the jobs are counted without their gzip copies of the log.
    """
    budget = limit - SITE_RESERVE_BYTES
    kept: set[str] = set()
    for job in newest_first(jobs):
        cost = job.bytes - (0 if raw_logs else job.raw_bytes) + LISTING_BYTES_PER_JOB
        if cost > budget:
            break  # the newest that fit, not a sample of smaller older ones
        budget -= cost
        kept.add(job.job_id)
    return kept
