"""Order statistics of task durations and row counts (one sort, then lookups)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def median(ordered: Sequence[float]) -> float:
    """Return the median of a sorted, non-empty sequence (the mean of the middle two if even)."""
    n = len(ordered)
    mid = n // 2
    return float(ordered[mid]) if n % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def quantile(ordered: Sequence[float], q: float) -> float:
    """Return the ``q`` quantile of a sorted, non-empty sequence by linear interpolation."""
    at = q * (len(ordered) - 1)
    low = int(at)
    if low + 1 >= len(ordered):
        return float(ordered[-1])
    return ordered[low] + (ordered[low + 1] - ordered[low]) * (at - low)


def times(ratio: float) -> str:
    """Return a ratio as a person reads it: ``30x``, ``2.4x``."""
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.1f}x"


# The median absolute deviation times this estimates a normal distribution's sigma.
MAD_SIGMA = 1.4826


def mad(values: Sequence[float], centre: float) -> float:
    """Return the median absolute deviation of ``values`` (non-empty) from ``centre``."""
    return median(sorted(abs(v - centre) for v in values))


def log_scale(values: Sequence[float]) -> tuple[float, float]:
    """Return the median and the robust sigma (MAD) of the logs of positive ``values``.

    Task and run times are right-skewed (roughly log-normal): on their logs the noise is
    symmetric, so one spread judges the slow and the fast alike.
    """
    logs = sorted(math.log(1.0 if v < 1.0 else v) for v in values)  # max(v, 1.0), no call
    centre = median(logs)
    return centre, MAD_SIGMA * mad(logs, centre)
