"""Read the ``job`` and ``stages`` payloads leniently, for display only.

The payloads are relayed byte for byte to the API; here they are decoded into plain
objects and every field is optional and coerced, because their shapes change between
Ballista releases (``partition_id`` int or list, ``Failed`` gaining fields).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgspec

PERCENTILE_KEYS = ("min", "p25", "median", "p75", "max")


def decode(raw: bytes | msgspec.Raw) -> Any:
    """Decode JSON to plain Python objects; None when it is not JSON."""
    try:
        return msgspec.json.decode(bytes(raw))
    except msgspec.DecodeError:
        return None


def as_int(value: Any) -> int | None:
    """Return ``value`` as an int when it plainly is one (int, float, numeric string)."""
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value == value and abs(value) < 2**63:
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def as_str(value: Any) -> str | None:
    """Return a string field; numbers are shown as text, anything else is None."""
    if isinstance(value, str):
        return value
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


@dataclass(frozen=True)
class TaskStatus:
    """A TaskStatus of any known or future shape, reduced to what the pages show."""

    word: str
    reason: str = ""
    error: str = ""

    @property
    def failed(self) -> bool:
        """Tell whether this is a failure."""
        return self.word == "Failed"


_PLAIN = {w: TaskStatus(w) for w in ("Successful", "Running", "Failed")}


def task_status(value: Any) -> TaskStatus:
    """Read ``"Successful"``, ``{"Failed": {"reason": …, "error": …}}`` or ``{"Failed": "…"}``."""
    if isinstance(value, str):
        return _PLAIN.get(value) or TaskStatus(value)
    if isinstance(value, dict) and len(value) == 1:
        word, detail = next(iter(value.items()))
        if isinstance(detail, dict):
            reason = as_str(detail.get("reason")) or ""
            error = as_str(detail.get("error")) or as_str(detail.get("message")) or ""
            return TaskStatus(str(word), reason, error)
        return TaskStatus(str(word), "", as_str(detail) or "")
    return TaskStatus("Unknown")


@dataclass(frozen=True)
class Percentiles:
    """min / p25 / median / p75 / max of a per-task quantity."""

    values: tuple[int | None, ...]


def percentiles(value: Any) -> Percentiles | None:
    """Read a percentile object; None when absent."""
    if not isinstance(value, dict):
        return None
    return Percentiles(tuple(as_int(value.get(k)) for k in PERCENTILE_KEYS))


@dataclass(frozen=True)
class TaskSummary:
    """One row of a stage's task list."""

    id: int | None
    status: TaskStatus
    partitions: str
    scheduled: int | None
    launch: int | None
    start: int | None
    end: int | None
    duration: int | None
    finish: int | None
    input_rows: int | None
    output_rows: int | None


def _partitions(value: Any) -> str:
    """Show ``partition_id`` whether it is an int (older logs) or a list of ints."""
    if isinstance(value, list):
        return ", ".join(as_str(v) or "?" for v in value)
    return as_str(value) or ""


def task_summary(value: Any) -> TaskSummary | None:
    """Read one TaskSummary; None when it is not an object."""
    if not isinstance(value, dict):
        return None
    start = as_int(value.get("start_exec_time"))
    end = as_int(value.get("end_exec_time"))
    duration = as_int(value.get("exec_duration"))
    if duration is None and start is not None and end is not None:
        duration = end - start
    return TaskSummary(
        id=as_int(value.get("id")),
        status=task_status(value.get("status")),
        partitions=_partitions(value.get("partition_id")),
        scheduled=as_int(value.get("scheduled_time")),
        launch=as_int(value.get("launch_time")),
        start=start,
        end=end,
        duration=duration,
        finish=as_int(value.get("finish_time")),
        input_rows=as_int(value.get("input_rows")),
        output_rows=as_int(value.get("output_rows")),
    )


@dataclass(frozen=True)
class Stage:
    """One QueryStageSummary."""

    stage_id: str
    status: str
    input_rows: int | None
    output_rows: int | None
    elapsed_compute: str | None
    plan: str | None
    duration_percentiles: Percentiles | None
    input_percentiles: Percentiles | None
    tasks: list[TaskSummary] = field(default_factory=list)


def stages(raw: bytes | msgspec.Raw) -> list[Stage]:
    """Read the stages payload: ``{"stages": [...]}`` (a bare list is accepted too)."""
    data = decode(raw)
    items = data.get("stages") if isinstance(data, dict) else data
    if not isinstance(items, list):
        return []
    result = []
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict):
            continue
        tasks = item.get("tasks")
        result.append(
            Stage(
                stage_id=as_str(item.get("stage_id")) or str(n),
                status=as_str(item.get("stage_status")) or "Unknown",
                input_rows=as_int(item.get("input_rows")),
                output_rows=as_int(item.get("output_rows")),
                elapsed_compute=as_str(item.get("elapsed_compute")),
                plan=as_str(item.get("stage_plan")),
                duration_percentiles=percentiles(item.get("task_duration_percentiles")),
                input_percentiles=percentiles(item.get("task_input_percentiles")),
                tasks=[t for t in map(task_summary, tasks if isinstance(tasks, list) else []) if t],
            )
        )
    return result


@dataclass(frozen=True)
class Plans:
    """The plan texts a job page shows (any may be missing)."""

    logical: str | None
    physical: str | None
    stage: str | None


def plans(raw: bytes | msgspec.Raw) -> Plans:
    """Read the plan fields of the job payload."""
    data = decode(raw)
    if not isinstance(data, dict):
        return Plans(None, None, None)
    return Plans(
        as_str(data.get("logical_plan")),
        as_str(data.get("physical_plan")),
        as_str(data.get("stage_plan")),
    )
