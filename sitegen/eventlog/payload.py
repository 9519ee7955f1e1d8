"""Read the ``job`` and ``stages`` payloads leniently, for display only.

The payloads are relayed byte for byte to the API; here they are decoded into plain
objects and every field is optional and coerced, because their shapes change between
Ballista releases (``partition_id`` int or list, ``Failed`` gaining fields).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import msgspec

from sitegen.eventlog.schema import Int64

PERCENTILE_KEYS = ("min", "p25", "median", "p75", "max")


def decode(raw: bytes | msgspec.Raw) -> Any:
    """Decode JSON to plain Python objects; None when it is not JSON."""
    try:
        return msgspec.json.decode(raw)  # a Raw is a buffer: no copy
    except msgspec.DecodeError:
        return None


# Ballista's numbers are signed 64-bit; a bigger one in a payload is damage, shown as missing
# (a 400-digit duration cannot be drawn or formatted: found by benchmarks/robustness.py).
_MIN_INT, _MAX_INT = -(2**63), 2**63 - 1


def as_int(value: Any) -> int | None:
    """Return ``value`` as an int when it plainly is one (int, float, numeric string)."""
    if type(value) is int:
        return value if _MIN_INT <= value <= _MAX_INT else None
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return int(value) if _MIN_INT <= value <= _MAX_INT else None
    if isinstance(value, float) and value == value and abs(value) < 2**63:
        return int(value)
    if isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            return None
        return number if _MIN_INT <= number <= _MAX_INT else None
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
SUCCESSFUL = _PLAIN["Successful"]


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


def task_statuses(values: Iterable[Any]) -> list[TaskStatus]:
    """Read many statuses; the usual plain ``"Successful"`` costs one comparison, no parse."""
    return [SUCCESSFUL if value == "Successful" else task_status(value) for value in values]


class Percentiles(msgspec.Struct, frozen=True, gc=False):
    """min / p25 / median / p75 / max of a per-task quantity."""

    min: Int64 | None = None
    p25: Int64 | None = None
    median: Int64 | None = None
    p75: Int64 | None = None
    max: Int64 | None = None

    @property
    def values(self) -> tuple[int | None, ...]:
        """Return the five values in ``PERCENTILE_KEYS`` order."""
        return (self.min, self.p25, self.median, self.p75, self.max)


def percentiles(value: Any) -> Percentiles | None:
    """Read a percentile object leniently; None when absent."""
    if not isinstance(value, dict):
        return None
    return Percentiles(*(as_int(value.get(k)) for k in PERCENTILE_KEYS))


class TaskSummary(msgspec.Struct, frozen=True, gc=False):
    """One row of a stage's task list (field names as in the payload).

    Only the fields the pages show: ``scheduled_time`` and ``finish_time`` are skipped while
    decoding (a stage may list 800,000 tasks), and stay in the ``/api`` file's bytes.
    """

    id: Int64 | None = None
    status: Any = None
    partition_id: Int64 | list[Int64] | None = None
    launch_time: Int64 | None = None
    start_exec_time: Int64 | None = None
    end_exec_time: Int64 | None = None
    exec_duration: Int64 | None = None
    input_rows: Int64 | None = None
    output_rows: Int64 | None = None

    @property
    def state(self) -> TaskStatus:
        """Return the status, whatever shape it was written in."""
        return task_status(self.status)


def task_duration(task: TaskSummary) -> int | None:
    """Return a task's duration: ``exec_duration``, else end minus start; None if unknown.

    A task that had not ended when the payload was taken (``end_exec_time`` 0: still running,
    or cut short by its job's end) has none, though the scheduler writes it an
    ``exec_duration`` of 0 (end minus start, saturated at 0).
    """
    if task.end_exec_time == 0:
        return None
    took = task.exec_duration
    if took is None and task.start_exec_time is not None and task.end_exec_time is not None:
        took = task.end_exec_time - task.start_exec_time
    return took


def task_summary(value: Any) -> TaskSummary | None:
    """Read one TaskSummary leniently; None when it is not an object."""
    if not isinstance(value, dict):
        return None
    parts = value.get("partition_id")
    if isinstance(parts, list):
        partition_id: int | list[int] | None = [p for p in map(as_int, parts) if p is not None]
    else:
        partition_id = as_int(parts)
    return TaskSummary(
        id=as_int(value.get("id")),
        status=value.get("status"),
        partition_id=partition_id,
        launch_time=as_int(value.get("launch_time")),
        start_exec_time=as_int(value.get("start_exec_time")),
        end_exec_time=as_int(value.get("end_exec_time")),
        exec_duration=as_int(value.get("exec_duration")),
        input_rows=as_int(value.get("input_rows")),
        output_rows=as_int(value.get("output_rows")),
    )


class Stage(msgspec.Struct):
    """One QueryStageSummary (field names as in the payload)."""

    stage_id: str = ""
    stage_status: str = "Unknown"
    input_rows: Int64 | None = None
    output_rows: Int64 | None = None
    elapsed_compute: str | None = None
    stage_plan: str | None = None
    task_duration_percentiles: Percentiles | None = None
    task_input_percentiles: Percentiles | None = None
    tasks: list[TaskSummary] | None = None

    @property
    def task_list(self) -> list[TaskSummary]:
        """Return the tasks (an absent list is empty)."""
        return self.tasks or []


class _Stages(msgspec.Struct):
    """The stages payload in its current shape: the fast, typed path."""

    stages: list[Stage]


_STAGES_DECODER = msgspec.json.Decoder(_Stages)


def stage_key(stage_id: str) -> tuple[bool, int]:
    """Return the key that sorts stage ids in stage order: numbers first, by value.

    An id that is not a number sorts after them all (a stable sort keeps such ids, and
    numbers written twice such as ``1`` and ``01``, in the order they came).
    """
    number = as_int(stage_id)
    return (number is None, number or 0)


def in_stage_order(found: list[Stage]) -> list[Stage]:
    """Return stages sorted by stage id (the payload's own order is a hash map's)."""
    return sorted(found, key=lambda stage: stage_key(stage.stage_id))


def stages(raw: bytes | msgspec.Raw) -> list[Stage]:
    """Read the stages payload, in stage order: typed when it has today's shape, else leniently.

    The scheduler builds the payload from a hash map, so its stages come in no set order (a
    job's may read 2, 3, 1): every page lists them by stage id. The ``/api`` file keeps the
    payload's bytes, order included.
    """
    try:
        # A Raw is a buffer of the log line: decode it in place rather than copy 200 kB.
        found = _STAGES_DECODER.decode(raw).stages
    except (msgspec.DecodeError, msgspec.ValidationError):
        return in_stage_order(_lenient_stages(decode(raw)))
    for n, stage in enumerate(found, 1):
        stage.stage_id = stage.stage_id or str(n)
    return in_stage_order(found)


def _lenient_stages(data: Any) -> list[Stage]:
    """Read ``{"stages": [...]}`` (or a bare list) of any shape, coercing field by field."""
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
                stage_status=as_str(item.get("stage_status")) or "Unknown",
                input_rows=as_int(item.get("input_rows")),
                output_rows=as_int(item.get("output_rows")),
                elapsed_compute=as_str(item.get("elapsed_compute")),
                stage_plan=as_str(item.get("stage_plan")),
                task_duration_percentiles=percentiles(item.get("task_duration_percentiles")),
                task_input_percentiles=percentiles(item.get("task_input_percentiles")),
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
