"""``--max-site-size``: sizes, and what a job costs beyond its files (selection.py)."""

from __future__ import annotations

import re

from sitegen.errors import UsageError

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMG]i?B|B)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9}
_UNITS |= {"kib": 2**10, "mib": 2**20, "gib": 2**30}
# What every job costs beyond its own directories: its rows on the listing page, the front
# page and /api/jobs, and its find-index entry (measured: about 600 bytes; rounded up).
LISTING_BYTES_PER_JOB = 1024
# The site-wide files that do not grow with the jobs: assets, host files, the pages across
# jobs. Measured on the examples' site: 276 kB, the Executors page 50 kB of it (its executors'
# newest jobs and most frequent errors, bounded per executor); rounded up.
SITE_RESERVE_BYTES = 320 * 1024


def parse_size(text: str) -> int:
    """Turn ``500MB``, ``1GB``, ``1.5GiB`` or ``123456`` (bytes) into bytes."""
    found = _SIZE.match(text)
    if found is None:
        raise UsageError(f"size {text!r} is not a number followed by B, KB, MB, GB (or KiB…)")
    return int(float(found.group(1)) * _UNITS[(found.group(2) or "").lower()])
