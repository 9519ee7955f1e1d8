"""The string-built run comparison rows against the template loop they replaced."""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import cast

import jinja2
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.diagnose.recurring import ContextKey, RunContext
from sitegen.model import JobSummary, StageFigures
from sitegen.render.pages import PageRenderer
from sitegen.render.runs import StageChange, comparison_rows, job_row, side_by_side_rows

# The loop ``_runs.html`` printed the rows with, cell by cell: the reference bytes.
LOOP = """\
{% for row in rows %}
<tr><th scope="row">{{ row.stage_id }}</th>
{%- for field, cell in (("duration_ms", "duration_cell"), ("tasks", "num_cell"), \
("input_rows", "rows_cell"), ("output_rows", "rows_cell")) %}
{%- set now = row.now[field] if row.now else none %}\
{% set before = row.before[field] if row.before else none %}
{%- if cell == "duration_cell" %}{{ now|duration_cell }}{{ before|duration_cell }}\
{% elif cell == "num_cell" %}{{ now|num_cell }}{{ before|num_cell }}\
{% else %}{{ now|stage_rows_cell(row.now.tasks if row.now else 0) }}\
{{ before|stage_rows_cell(row.before.tasks if row.before else 0) }}{% endif %}\
<td class="num">{% if cell == "rows_cell" %}{% set a, b = row.figures(field) %}\
{{ rows_change(a, b, true) }}\
{% else %}{{ row.delta(field) }}{% endif %}</td>
{%- endfor %}</tr>
{% endfor %}"""


# The loop ``compare.html`` printed its stage rows with (``c`` the page's comparison).
SIDE_BY_SIDE_LOOP = """\
{% for row in rows %}
<tr><th scope="row">{{ row.stage_id }}</th>
{% for f in ("duration_ms", "task_median_ms", "task_max_ms") %}{% set a, b = row.figures(f) %}\
{{ a|duration_cell }}{{ b|duration_cell }}<td class="num">{{ change(a, b) }}</td>{% endfor %}
{% set a, b = row.figures("failed") %}{{ a|num_cell }}{{ b|num_cell }}
{% for f in ("input_rows", "output_rows") %}{% set a, b = row.figures(f) %}\
{{ (row.now|attr(f) if row.now else none)|stage_rows_cell(row.now.tasks if row.now else 0) }}\
{{ (row.before|attr(f) if row.before else none)|stage_rows_cell(row.before.tasks if row.before \
else 0) }}<td class="num">{{ rows_change(a, b, comparable) }}</td>{% endfor %}
</tr>
{% endfor %}"""


# The job's row ``_runs.html`` printed cell by cell (``s`` the summary, ``c`` the run context).
JOB_ROW = (
    '<tr class="total"><th scope="row">Job</th>{{ (s.ended_at - s.start_time if s.ended_at >= s.start_time else none)|duration_cell }}{{ c.baseline_ms|duration_cell }}<td class="num">{{ change(s.ended_at - s.start_time if s.ended_at >= s.start_time else none, c.baseline_ms) }}</td>{{ s.tasks|num_cell }}{{ c.baseline_tasks|num_cell }}<td class="num">{{ change(s.tasks, c.baseline_tasks) }}</td>{{ s.input_rows|stage_rows_cell(s.tasks) }}{{ c.baseline_'
    'input_rows|stage_rows_cell(c.baseline_tasks) }}<td class="num">{{ rows_change(recorded(s.input_rows, s.tasks), recorded(c.baseline_input_rows, c.baseline_tasks), job.rows_comparable) }}</td>{{ s.output_rows|stage_rows_cell(s.tasks) }}{{ c.baseline_output_rows|stage_rows_cell(c.baseline_tasks) }}<td class="num">{{ rows_change(recorded(s.output_rows, s.tasks), recorded(c.baseline_output_rows, c.baseline_tasks), job.rows_comparable) }}</td></tr>\n'
)


@functools.cache
def loop() -> jinja2.Template:
    return PageRenderer().env.from_string(LOOP)


@functools.cache
def side_by_side_loop() -> jinja2.Template:
    return PageRenderer().env.from_string(SIDE_BY_SIDE_LOOP)


figures = st.builds(
    StageFigures,
    stage_id=st.text(max_size=12),
    duration_ms=st.integers(0, 10**12),
    tasks=st.integers(0, 10**7),
    input_rows=st.integers(0, 10**15),
    output_rows=st.integers(0, 10**15),
    failed=st.integers(0, 10**4),
    task_median_ms=st.none() | st.integers(0, 10**9),
    task_max_ms=st.none() | st.integers(0, 10**9),
)
changes = st.builds(
    StageChange,
    stage_id=st.text(max_size=12),
    now=st.none() | figures,
    before=st.none() | figures,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(changes, max_size=6))
def test_comparison_rows_are_the_template_loop_byte_for_byte(rows: list[StageChange]) -> None:
    assert str(comparison_rows(rows)) == loop().render(rows=rows)


@settings(max_examples=200, deadline=None)
@given(st.lists(changes, max_size=6), st.booleans())
def test_side_by_side_rows_are_the_compare_pages_loop_byte_for_byte(
    rows: list[StageChange], comparable: bool
) -> None:
    expected = side_by_side_loop().render(rows=rows, comparable=comparable)
    assert str(side_by_side_rows(rows, comparable)) == expected


def test_log_text_in_a_stage_id_is_escaped_and_its_controls_shown() -> None:
    row = StageChange("<b>\x00", StageFigures("1", 5, 1, 2, 3), None)
    html = str(comparison_rows([row]))
    assert "&lt;b&gt;\u2400" in html and "<b>" not in html
    assert html == loop().render(rows=[row])


times = st.integers(0, 10**13)
counts = st.none() | st.integers(0, 10**7)


@settings(max_examples=300, deadline=None)
@given(
    times,
    times,
    st.integers(0, 10**7),
    counts,
    counts,
    counts,
    counts,
    counts,
    counts,
    st.booleans(),
)
def test_the_job_row_is_the_template_row_byte_for_byte(
    start: int,
    end: int,
    tasks: int,
    rows_in: int | None,
    rows_out: int | None,
    before_ms: int | None,
    before_tasks: int | None,
    before_in: int | None,
    before_out: int | None,
    comparable: bool,
) -> None:
    s = SimpleNamespace(
        start_time=start, ended_at=end, tasks=tasks, input_rows=rows_in, output_rows=rows_out
    )
    c = RunContext(
        ContextKey(),
        baseline_ms=before_ms,
        baseline_tasks=before_tasks,
        baseline_input_rows=before_in,
        baseline_output_rows=before_out,
    )
    job = SimpleNamespace(rows_comparable=comparable)
    expected = PageRenderer().env.from_string(JOB_ROW).render(s=s, c=c, job=job)
    # The row's line ends in a newline, which Jinja drops from the end of a template's text.
    assert str(job_row(cast(JobSummary, s), c, comparable)) == expected + "\n"
