"""Damaged lines inside a log: counted per record kind and said in one line, never hidden.

A line that does not decode (``NaN``, a flipped byte, invalid UTF-8) is skipped, as
Ballista's reader does; a job published without it says so (``damaged-lines``). Records of
a kind this sitegen does not know (a newer Ballista) and a last line cut off without its
newline (the scheduler is still writing it) are no damage.
"""

from __future__ import annotations

import json
import re
from typing import Any

# The kinds whose damaged lines are named; a damaged line of another kind is just a line.
KINDS = ("JobStart", "StageStart", "StageEnd", "TaskEnd")
# Line numbers kept per kind: enough to find them, bounded however many lines are damaged.
LINES_KEPT = 10
# Line numbers a message lists.
LINES_SHOWN = 10

DUPLICATE_EV = 'JobEnd record with a duplicate "ev" key (which kind it is cannot be told)'

_KIND = re.compile(rb'"ev"\s*:\s*"(JobStart|StageStart|StageEnd|TaskEnd)"')


def kind_of(line: bytes) -> str:
    """Return the record kind a damaged line names itself, or "" when it names none."""
    found = _KIND.search(line, 0, 4096)  # the envelope's "ev" comes first
    return found[1].decode() if found else ""


def duplicate_kind(line: bytes) -> bool:
    """Tell whether a record line has more than one top-level ``"ev"`` key."""
    if line.count(b'"ev"') < 2:  # nearly always: one scan in C
        return False
    outermost: list[list[tuple[str, Any]]] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        outermost.append(items)  # inner objects first: the record itself comes last
        return {}

    try:
        json.loads(line, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return False
    return bool(outermost) and sum(1 for key, _ in outermost[-1] if key == "ev") > 1


def message(damaged: dict[str, list[int]], counts: dict[str, int], totals: dict[str, int]) -> str:
    """Say which lines were unreadable: ``3 of 36 TaskEnd lines unreadable: lines 12, 13, 15``.

    ``damaged``: kind ("" for none) -> the first line numbers; ``counts``: kind -> how many;
    ``totals``: kind -> how many lines of that kind were read, damaged ones included.
    """
    parts = []
    for kind in (*KINDS, ""):
        n = counts.get(kind, 0)
        if not n:
            continue
        lines = "line" if n == 1 else "lines"
        if kind:
            total = max(totals.get(kind, 0), n)
            parts.append(f"{n:,} of {total:,} {kind} {'line' if total == 1 else 'lines'}")
        else:
            parts.append(f"{n:,} {'other ' if parts else ''}{lines}")
    numbers = sorted(n for found in damaged.values() for n in found)
    count = sum(counts.values())
    shown = ", ".join(f"{n:,}" for n in numbers[:LINES_SHOWN])
    more = ", …" if count > min(len(numbers), LINES_SHOWN) else ""
    return f"{', '.join(parts)} unreadable: {'line' if count == 1 else 'lines'} {shown}{more}"
