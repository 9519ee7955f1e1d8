"""The string-built task table against a plain Jinja rendering of the same rows."""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import Any

import jinja2
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitegen.eventlog.payload import Stage, TaskSummary, task_status
from sitegen.eventlog.schema import TaskEnd
from sitegen.render import urls
from sitegen.render.jobpage import StageInfo, TaskTable
from sitegen.render.pages import PageRenderer

# One row as a template would print it, every rule spelled out plainly: the reference bytes.
ROW = (
    "<tr{% if anchor %} id=task-{{ t.id }}{% endif %}{% if word == 'Failed' %} class=failed{% endif %}>"
    "<td>{{ '—' if t.id is none else t.id }}</td>"
    '<td><span class="badge {{ word|status_class }}">{{ word }}</span></td>'
    "<td>{{ parts }}</td><td>{{ executor }}</td>"
    "<td>{{ t.launch_time|clock }}</td><td>{{ t.start_exec_time|clock }}</td>"
    "<td>{{ t.end_exec_time|clock }}</td>"
    '{% if took is none %}<td>—</td>{% else %}<td data-v="{{ took }}">{{ took|duration }}</td>'
    "{% endif %}<td>{{ t.input_rows|number }}</td><td>{{ t.output_rows|number }}</td></tr>"
)


def clock(ms: int | None) -> str:
    """Return the UTC time of day with milliseconds, from datetime (the plain definition)."""
    if ms is None or ms <= 0:
        return "—"
    moment = datetime.fromtimestamp(ms // 1000, UTC)
    return moment.strftime("%H:%M:%S.") + f"{ms % 1000:03d}Z"


def partitions(value: int | list[int] | None) -> str:
    """Return the partition display: the ids comma-separated, a dash for none."""
    if isinstance(value, list):
        return ", ".join(map(str, value)) or "—"
    return "—" if value is None else str(value)


def duration_of(t: TaskSummary) -> int | None:
    """Return none for a task not ended (end 0), else ``exec_duration``, else end minus start."""
    if t.end_exec_time == 0:
        return None
    if t.exec_duration is not None:
        return t.exec_duration
    if t.start_exec_time is None or t.end_exec_time is None:
        return None
    return t.end_exec_time - t.start_exec_time


def executor_of(t: TaskSummary, ends: list[TaskEnd]) -> str:
    """Return the executor: same task and times, else same times, else the task's only end."""
    exact = [e for e in ends if (e.task_id, e.start_exec_time, e.end_exec_time) == (
        t.id, t.start_exec_time, t.end_exec_time)]  # fmt: skip
    if exact:
        return exact[0].executor_id
    timed = [e for e in ends if (e.start_exec_time, e.end_exec_time) == (
        t.start_exec_time, t.end_exec_time)]  # fmt: skip
    if timed:
        return timed[-1].executor_id
    same_id = [e for e in ends if e.task_id == t.id]
    return same_id[0].executor_id if len(same_id) == 1 else "—"


@functools.cache
def row_template() -> jinja2.Template:
    env = PageRenderer().env.overlay()
    env.filters["clock"] = clock
    return env.from_string(ROW)


def reference(tasks: list[TaskSummary], ends: list[TaskEnd]) -> str:
    row = row_template()
    # A task id listed twice anchors (``#task-<id>``, where findings link) its first row only.
    first = {t.id: n for n, t in reversed(list(enumerate(tasks))) if t.id is not None}
    return "\n".join(
        row.render(
            t=t,
            anchor=first.get(t.id) == n,
            word=task_status(t.status).word,
            parts=partitions(t.partition_id),
            executor=executor_of(t, ends),
            took=duration_of(t),
        )
        for n, t in enumerate(tasks)
    )


hostile = st.sampled_from(
    ["", "<script>alert(1)</script>", "a&b", "\"'", "Failed", "Successful", "é ü", "—"]
)
text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=10) | hostile
# Times from a small pool as well, so that task summaries and TaskEnd records match.
pool = st.sampled_from([1_767_225_600_000, 1_767_225_600_250, 1_767_254_495_127])
moment = pool | st.integers(min_value=-5, max_value=253_402_300_799_999)  # to the year 9999
status: st.SearchStrategy[Any] = (
    hostile
    | text
    | st.fixed_dictionaries({"Failed": st.fixed_dictionaries({"reason": text, "error": text})})
    | st.dictionaries(text, st.none() | text, min_size=1, max_size=1)
    | st.none()
)


@st.composite
def summaries(draw: st.DrawFn) -> TaskSummary:
    return TaskSummary(
        id=draw(st.none() | st.integers(0, 5)),
        status=draw(status),
        partition_id=draw(
            st.none() | st.integers(0, 10**6) | st.lists(st.integers(0, 999), max_size=3)
        ),
        launch_time=draw(st.none() | moment),
        start_exec_time=draw(st.none() | moment),
        end_exec_time=draw(st.none() | moment),
        exec_duration=draw(st.none() | st.integers(-5, 10**8)),
        input_rows=draw(st.none() | st.integers(0, 10**12)),
        output_rows=draw(st.none() | st.integers(0, 10**12)),
    )


@st.composite
def ends(draw: st.DrawFn) -> TaskEnd:
    return TaskEnd(
        stage_id=1,
        task_id=draw(st.integers(0, 5)),
        executor_id=draw(text),
        status=draw(status),
        start_exec_time=draw(pool | st.integers(0, 10**13)),
        end_exec_time=draw(pool | st.integers(0, 10**13)),
    )


@pytest.mark.slow  # 120 examples through a template
@settings(max_examples=120, deadline=None)
@given(st.lists(summaries(), max_size=6), st.lists(ends(), max_size=6))
@example(
    [TaskSummary(id=1, status="<b>", partition_id=[], start_exec_time=1, end_exec_time=9)],
    [TaskEnd(1, 1, "<img src=x onerror=alert(1)>", "Successful", 1, 9)],
)
@example(  # not ended when the payload was taken: no duration, though its start is known
    [TaskSummary(id=0, status="Running", start_exec_time=1_767_225_600_000, end_exec_time=0)], []
)
def test_rows_are_the_bytes_a_plain_template_prints(
    tasks: list[TaskSummary], task_ends: list[TaskEnd]
) -> None:
    table = TaskTable(StageInfo(Stage(stage_id="1", tasks=tasks), "1", 0, None, task_ends))
    assert table.rows(1) == reference(tasks, task_ends)


def test_hostile_executor_and_status_are_escaped_and_empty_partitions_show_a_dash() -> None:
    tasks = [TaskSummary(id=1, status="<b>", partition_id=[], start_exec_time=1, end_exec_time=9)]
    task_ends = [TaskEnd(1, 1, "<img src=x>", "Successful", 1, 9)]
    row = TaskTable(StageInfo(Stage(stage_id="1", tasks=tasks), "1", 0, None, task_ends)).rows(1)
    assert "<img" not in row and "&lt;img src=x&gt;" in row
    assert '<span class="badge st-b">&lt;b&gt;</span>' in row
    assert row.count("<td>—</td>") == 4  # the partitions, the launch time, both row counts


def test_each_page_holds_its_slice_of_the_rows() -> None:
    tasks = [TaskSummary(id=n, status="Successful") for n in range(urls.TASKS_PER_PAGE + 3)]
    table = TaskTable(StageInfo(Stage(stage_id="1", tasks=tasks), "1", 0, None, []))
    assert table.pages == 2
    assert table.rows(2) == reference(tasks[urls.TASKS_PER_PAGE :], [])
