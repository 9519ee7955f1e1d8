from __future__ import annotations

import json
from pathlib import PurePosixPath

from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitegen.diagnose.finding import Finding, FindingKind, Severity
from sitegen.model import JobSummary
from sitegen.render import urls
from sitegen.render.links import Linker
from sitegen.render.listing import find_index, job_rows
from sitegen.render.pages import PageRenderer

# The loop jobs.html rendered before the rows were built in Python: the reference bytes.
TEMPLATE_LOOP = """\
{% for job in jobs %}
{% set st = job.status|status_class %}
<tr>
<td><a href="{{ u.job(job.job_id) }}"><code>{{ job.job_id }}</code></a></td>
<td>{{ job.job_name }}{% if job.failure %}<p class="failure">{{ job.failure }}</p>{% endif %}</td>
<td data-v="{{ job.status }}"><span class="badge {{ st }}">{{ job.status }}</span></td>
<td class="num" data-v="{{ job.completed_stages }}">{{ job.completed_stages }}/{{ job.num_stages }}</td>
<td class="num" data-v="{{ job.tasks }}">{{ job.tasks|number }}</td>
{% set fs = job.findings + ([extra[job.job_id]] if job.job_id in extra else []) %}
{% if fs %}{% set w = fs|map(attribute="severity")|map(attribute="rank")|max %}{% set word = (fs|selectattr("severity.rank", "equalto", w)|first).severity %}<td data-v="{{ (w + 1) * 1000000 + fs|length }}"><span class="severity {{ word }}">{{ fs|length }} {{ word }}</span></td>{% else %}<td data-v="0"></td>{% endif +%}
<td data-v="{{ job.start_time }}"><time datetime="{{ job.start_time|timestamp_ms }}">{{ job.start_time|timestamp }}</time></td>
{% if job.end_time >= job.start_time %}<td class="num" data-v="{{ job.end_time - job.start_time }}">{{ (job.end_time - job.start_time)|duration }}</td>{% else %}<td class="num">—</td>{% endif %}
</tr>
{% endfor %}
"""

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
tricky = st.sampled_from(["", "a&b", "<script>", "\"'", "Failed", "Completed", "é ü"])
moment = st.integers(min_value=-5, max_value=4_102_444_800_000)


@st.composite
def summaries(draw: st.DrawFn) -> JobSummary:
    return JobSummary(
        job_id=draw(text | tricky),
        job_name=draw(text | tricky),
        status=draw(text | tricky),
        job_status="",
        start_time=draw(moment),
        end_time=draw(moment),
        num_stages=draw(st.integers(0, 999)),
        completed_stages=draw(st.integers(0, 999)),
        percent_complete=0,
        queued_at=0,
        started_at=0,
        completed_at=0,
        file="x.eventlog",
        failure=draw(st.none() | text | tricky),
        tasks=draw(st.integers(0, 10**9)),
    )


def _reference(
    jobs: list[JobSummary], page: PurePosixPath, extra: dict[str, Finding] | None = None
) -> str:
    renderer = PageRenderer()
    template = renderer.env.from_string(TEMPLATE_LOOP)
    return template.render(jobs=jobs, u=Linker(page), extra=extra or {})


findings = st.builds(
    Finding,
    st.sampled_from(FindingKind),
    st.sampled_from(Severity),
    st.none(),
    st.none(),
    st.none(),
    st.floats(0, 100),
    text,
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(summaries(), max_size=4),
    st.sampled_from([1, 2, 7]),
    st.lists(findings, max_size=3),
    st.lists(findings, max_size=2),
)
@example([], 1, [], [])
def test_rows_are_the_bytes_the_template_loop_printed(
    jobs: list[JobSummary], n: int, own: list[Finding], more: list[Finding]
) -> None:
    # Some jobs have findings of their own, some one of the reduce step (a regression).
    for job, found in zip(jobs, [own, [], own[:1]], strict=False):
        job.findings = found
    extra = {job.job_id: f for job, f in zip(jobs[1:], more, strict=False)}
    page = urls.jobs_list(n)
    built = job_rows(jobs, Linker(page), extra)
    expected = _reference(jobs, page, extra)
    # The loop ends every row with a newline; the template prints one after the rows.
    assert (built + "\n" if jobs else "") == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(summaries(), max_size=6))
def test_find_index_is_a_script_holding_every_job_as_written(jobs: list[JobSummary]) -> None:
    script = find_index(jobs).decode()
    prefix, suffix = "window.sitegenJobIndex = ", ";\n"
    assert script.startswith(prefix) and script.endswith(suffix)
    rows = json.loads(script[len(prefix) : -len(suffix)])
    assert rows == [[j.job_id, j.job_name, j.status, j.start_time] for j in jobs]
    # Log text stays inside JSON strings: "</script>" or a quote cannot end the expression.
    assert "\n" not in script[:-1]
