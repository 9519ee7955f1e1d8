"""``--max-age``: how long ago a job may have ended and still be on the site (selection.py).

A job ended at its index's ``end_time``, or a cancelled job at its ``completed_at`` (its index
says 0): the state's ``end_time`` column holds that (``model.ended_at``).
"""

from __future__ import annotations

import re

from sitegen.errors import UsageError

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d|w)\s*$")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800}


def parse_age(text: str) -> float:
    """Turn ``30d``, ``12h``, ``90m``, ``2w`` or ``45s`` into seconds."""
    found = _AGE.match(text)
    if found is None:
        raise UsageError(f"max age {text!r} is not a number followed by s, m, h, d or w")
    return float(found.group(1)) * _SECONDS[found.group(2)]


# A running log not written to for this long is abandoned, a finished one without JobEnd
# ended unrecorded (the default of --stale-after).
STALE_AFTER = "24h"


def parse_stale_after(text: str) -> int:
    """Turn ``--stale-after`` (``24h``, ``3d``; ``0``: never) into nanoseconds."""
    if text.strip() == "0":
        return 0
    return int(parse_age(text) * 1_000_000_000)
