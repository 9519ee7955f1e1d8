"""The TaskEnd records' extras: decoded by the reader, or read again in a few decodes or line by line."""

from __future__ import annotations

import json
from array import array
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from sitegen.eventlog import schema, taskmetrics
from sitegen.eventlog.reader import read_log
from sitegen.eventlog.taskmetrics import MISSING, TaskExtras, task_columns, task_extras
from tests.helpers.logs import job_lines, write


def _edit_first_task(edit: Callable[[dict[str, object]], None]) -> Callable[[bytes], bytes]:
    """Return a change to a log that edits its first TaskEnd record's data."""

    def change(text: bytes) -> bytes:
        lines = text.splitlines(keepends=True)
        n = next(i for i, line in enumerate(lines) if b'"TaskEnd"' in line)
        record = json.loads(lines[n])
        edit(record["data"])
        lines[n] = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        return b"".join(lines)

    return change


def _late_task_end(text: bytes) -> bytes:
    """Append a copy of the first TaskEnd line after the JobEnd (an old scheduler did)."""
    first = next(line for line in text.splitlines(keepends=True) if b'"TaskEnd"' in line)
    return text + first.replace(b'"launch_time":', b'"launch_time":1,"x":', 1)


def _another_last_ev(text: bytes) -> bytes:
    """Make the first TaskEnd line name another kind last (the reader's fast path takes it)."""
    lines = text.splitlines(keepends=True)
    n = next(i for i, line in enumerate(lines) if b'"TaskEnd"' in line)
    lines[n] = lines[n][: -len(b"}\n")] + b',"ev":"StageEnd"}\n'
    return b"".join(lines)


CHANGES: dict[str, Callable[[bytes], bytes]] = {
    "as written": lambda text: text,
    "no launch time": _edit_first_task(lambda d: d.pop("launch_time")),
    "a null launch time": _edit_first_task(lambda d: d.update(launch_time=None)),
    "no metrics": _edit_first_task(lambda d: d.pop("metrics")),
    "null metrics": _edit_first_task(lambda d: d.update(metrics=None)),
    "a metric missing": _edit_first_task(lambda d: d["metrics"].pop("input_rows")),  # type: ignore[attr-defined]
    "a metric of text": _edit_first_task(lambda d: d["metrics"].update(output_rows="7")),  # type: ignore[attr-defined]
    "an executor the reader refuses": _edit_first_task(lambda d: d.update(executor_id=7)),
    "a blank line": lambda text: text.replace(b"\n", b"\n\n", 2),
    "CRLF line ends": lambda text: text.replace(b"\n", b"\r\n"),
    "a TaskEnd after the JobEnd": _late_task_end,
    "a TaskEnd line whose last ev is another": _another_last_ev,
}


@pytest.mark.parametrize("change", list(CHANGES))
@pytest.mark.parametrize("piece", [1 << 20, 700])
def test_a_held_log_gives_the_extras_read_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str, piece: int
) -> None:
    monkeypatch.setattr(taskmetrics, "_PIECE", piece)  # 700: a piece of a line or two
    path = write(tmp_path / "job.eventlog", job_lines("extras", retries=1))
    path.write_bytes(CHANGES[change](path.read_bytes()))
    held = path.read_bytes()
    read = read_log(path, held)
    assert read.job_end is not None and read.tasks
    line_by_line = task_extras(read)  # not held: read again line by line (_scan)
    assert task_extras(read, held) == line_by_line
    if change == "as written":
        found = TaskExtras(array("q"), array("q"), array("q"), array("q"))
        assert taskmetrics._held(read, held, found)  # in pieces, not line by line
        assert MISSING not in line_by_line.launch_time


def test_task_columns_are_the_readers_fields(tmp_path: Path) -> None:
    path = write(tmp_path / "job.eventlog", job_lines("columns", retries=1))
    read = read_log(path)
    columns = task_columns(read.tasks)
    assert list(columns.stage_id) == [t.stage_id for t in read.tasks]
    assert list(columns.task_id) == [t.task_id for t in read.tasks]
    assert columns.executor_id == [t.executor_id for t in read.tasks]
    assert columns.status == [t.status for t in read.tasks]
    assert list(columns.start) == [t.start_exec_time for t in read.tasks]
    assert list(columns.end) == [t.end_exec_time for t in read.tasks]


# The changes after which a held log's TaskEnd records do not all carry their extras: the
# reader reads that record as usual, and the extras are read again.
UNMEASURED = {"a metric of text"}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_measured_read_gives_the_extras_read_again(tmp_path: Path, change: str) -> None:
    path = write(tmp_path / "job.eventlog", job_lines("measured", retries=1))
    path.write_bytes(CHANGES[change](path.read_bytes()))
    held = path.read_bytes()
    plain, measured = read_log(path, held), read_log(path, held, measured=True)
    assert measured.measured is (change not in UNMEASURED)
    assert not plain.measured
    # The same records, the same fields the pages read, whatever else they carry.
    fields = [f.name for f in msgspec.structs.fields(schema.TaskEnd)]
    lean = [[getattr(t, f) for f in fields] for t in plain.tasks]
    assert [[getattr(t, f) for f in fields] for t in measured.tasks] == lean
    assert (measured.job_end, measured.classification) == (plain.job_end, plain.classification)
    extras = task_extras(measured, held)
    assert extras == task_extras(plain)  # line by line (_scan)
    if measured.measured:
        assert all(isinstance(t, schema.MeasuredTaskEnd) for t in measured.tasks)
        if change == "as written":
            assert MISSING not in extras.launch_time and MISSING not in extras.compute_ns


def test_a_streamed_log_is_not_measured(tmp_path: Path) -> None:
    # Not held: its records stay lean (a streamed log may hold 800,000 of them).
    path = write(tmp_path / "job.eventlog", job_lines("streamed", retries=1))
    read = read_log(path, None, measured=True)
    assert read.job_end is not None and read.tasks and not read.measured
    assert not any(isinstance(t, schema.MeasuredTaskEnd) for t in read.tasks)
    assert task_extras(read) == task_extras(read_log(path, path.read_bytes(), measured=True))
