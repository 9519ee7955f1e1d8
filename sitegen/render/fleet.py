"""The fleet: ``fleet.json`` (executors and schedulers) and the Executors page's verdict words."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from sitegen.diagnose.failures import ExecutorError
from sitegen.diagnose.fleet import FAILING, SLOW, FleetExecutor
from sitegen.text.formatting import duration, plural, timestamp

_encode = msgspec.json.Encoder().encode


def executor_json(e: FleetExecutor, errors: Sequence[ExecutorError] = ()) -> dict[str, Any]:
    """Return one executor's object of ``fleet.json``'s ``executors``."""
    return {
        "executor_id": e.executor_id,
        "first_seen": e.first_seen,
        "last_seen": e.last_seen,
        "jobs": e.jobs,
        "attempts": e.attempts,
        "failed_attempts": e.failed_attempts,
        "own_failed_attempts": e.own_failed,
        "slowness": e.slowness,
        "verdict": e.verdict,
        "window": None if e.window is None else {"start": e.window[0], "end": e.window[1]},
        "window_jobs": e.window_jobs,
        "window_slowness": e.window_ratio if e.verdict == SLOW else None,
        "cost_ms": e.cost_ms if e.verdict == SLOW else None,
        "errors": [
            {"pattern": x.pattern, "example": x.example, "attempts": x.attempts, "jobs": x.jobs}
            for x in errors
        ],
    }


def fleet_json(
    executors: Sequence[FleetExecutor],
    schedulers: Sequence[Mapping[str, Any]],
    errors: Mapping[str, Sequence[ExecutorError]],
) -> bytes:
    """Return ``fleet.json``: every executor and its verdict, and every scheduler.

    The one writer of the file: the executors come from the fleet verdict, the schedulers
    (``scheduler``, ``jobs``, ``failed``, ``first``, ``last``) from the jobs' schedulers;
    ``errors``: each executor's most frequent errors of its failed attempts.
    """
    body = {
        "executors": [executor_json(e, errors.get(e.executor_id, ())) for e in executors],
        "schedulers": list(schedulers),
    }
    return _encode(body) + b"\n"


def verdict_text(e: FleetExecutor) -> str:
    """Return the verdict in words: "slow from … to …, in 23 jobs, costing about …"."""
    if e.window is None:
        return "healthy"
    begin, end = timestamp(e.window[0]), timestamp(e.window[1])
    jobs = plural(e.window_jobs, "job")
    if e.verdict == FAILING:
        return f"failing from {begin} to {end}, in {jobs}: its own failed attempts"
    return (
        f"slow from {begin} to {end}, in {jobs}: {e.window_ratio:.2f}x its peers' time, "
        f"costing about {duration(e.cost_ms)} of task time"
    )


def verdict_words(executors: Sequence[FleetExecutor]) -> dict[str, str]:
    """Return each executor's verdict in words, by id."""
    return {e.executor_id: verdict_text(e) for e in executors}
