from __future__ import annotations

import json
import time
from pathlib import PurePosixPath

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sitegen.finding import Finding, FindingKind, FindingSeverity
from sitegen.model import JobSummary
from sitegen.render import urls
from sitegen.render.links import Linker
from sitegen.render.listing import (
    FIND_PART_CAPACITY,
    PAGE_CAPACITY,
    Listed,
    archive_pages,
    cut_span,
    find_index,
    find_spans,
    job_rows,
    recut_span,
    replace_span,
    span_records,
)
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
{% if fs %}{% set w = fs|map(attribute="severity")|map(attribute="rank")|max %}{% set word = (fs|selectattr("severity.rank", "equalto", w)|first).severity %}{% set cost = fs|map(attribute="impact_ms")|map("default", 0, true)|max %}<td data-v="{{ cost * 10 + w + 1 }}"><span class="severity {{ word }}">{{ fs|length }} {{ word }}</span></td>{% else %}<td data-v="0"></td>{% endif +%}
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
    st.sampled_from(FindingSeverity),
    st.none(),
    st.none(),
    st.none(),
    st.floats(0, 100),
    text,
    st.none() | st.integers(0, 10**9),
)


@pytest.mark.slow  # 150 examples through a template
@settings(max_examples=150, deadline=None)
@given(
    st.lists(summaries(), max_size=4),
    st.sampled_from([None, "2026-01-02", "t0-5"]),
    st.lists(findings, max_size=3),
    st.lists(findings, max_size=2),
)
@example([], None, [], [])
def test_rows_are_the_bytes_the_template_loop_printed(
    jobs: list[JobSummary], name: str | None, own: list[Finding], more: list[Finding]
) -> None:
    # Some jobs have findings of their own, some one of the reduce step (a regression).
    for job, found in zip(jobs, [own, [], own[:1]], strict=False):
        job.findings = found
    extra = {job.job_id: f for job, f in zip(jobs[1:], more, strict=False)}
    page = urls.FRONT if name is None else urls.list_page(name)
    built = job_rows(jobs, Linker(page), extra)
    expected = _reference(jobs, page, extra)
    # The loop ends every row with a newline; the template prints one after the rows.
    assert (built + "\n" if jobs else "") == expected


@settings(max_examples=100, deadline=None)
@given(st.lists(summaries(), max_size=6))
def test_find_index_is_a_script_holding_every_job_as_written(jobs: list[JobSummary]) -> None:
    script = find_index(jobs).decode()
    prefix, suffix = "sitegenJobPart(", ");\n"
    assert script.startswith(prefix) and script.endswith(suffix)
    rows = json.loads(script[len(prefix) : -len(suffix)])
    assert rows == [[j.job_id, j.job_name, j.status, j.start_time] for j in jobs]
    # Log text stays inside JSON strings: "</script>" or a quote cannot end the expression.
    assert "\n" not in script[:-1]


# Start times on a few UTC days, dense enough that days split into hours, minutes, seconds.
DAY_MS = 86_400_000
starts = st.integers(min_value=0, max_value=3 * DAY_MS) | st.integers(
    min_value=DAY_MS, max_value=DAY_MS + 5_000
)


def _listed(times: list[int]) -> list[Listed]:
    jobs = [(f"job{n}", t, f"sig{n}") for n, t in enumerate(times)]
    return newest_first_listed(jobs)


def newest_first_listed(jobs: list[Listed]) -> list[Listed]:
    return sorted(sorted(jobs, key=lambda j: j[0]), key=lambda j: j[1], reverse=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(starts, min_size=0, max_size=400))
def test_archive_pages_hold_every_job_once_newest_first(times: list[int]) -> None:
    jobs = _listed(times)
    pages = archive_pages(jobs)
    if len(jobs) <= PAGE_CAPACITY:
        assert pages == []
        return
    assert [j for p in pages for j in p.jobs] == jobs
    assert all(0 < len(p.jobs) <= PAGE_CAPACITY for p in pages)
    assert len({p.name for p in pages}) == len(pages)
    assert all(urls.list_page(p.name).parent == PurePosixPath(urls.LIST_DIR) for p in pages)


@settings(max_examples=60, deadline=None)
@given(st.lists(starts, min_size=PAGE_CAPACITY + 1, max_size=300), starts, st.data())
def test_a_new_or_removed_job_changes_only_pages_of_its_own_day(
    times: list[int], start: int, data: st.DataObject
) -> None:
    jobs = _listed(times)
    before = {(p.name, tuple(p.jobs)) for p in archive_pages(jobs)}
    new = ("new", start, "sig")
    added = {(p.name, tuple(p.jobs)) for p in archive_pages(newest_first_listed([*jobs, new]))}
    changed = before ^ added
    day = start // DAY_MS
    # Pages are named by their span: the day's pages can change, no other day's.
    assert all(any(j[1] // DAY_MS == day for j in jobs_) for _, jobs_ in changed if jobs_)
    assert {name[:10] for name, _ in changed} <= {_day(start)}
    gone = data.draw(st.sampled_from(jobs))
    removed = {(p.name, tuple(p.jobs)) for p in archive_pages([j for j in jobs if j != gone])}
    if len(jobs) - 1 > PAGE_CAPACITY:  # else the archive goes: the front page holds all
        assert {name[:10] for name, _ in before ^ removed} <= {_day(gone[1])}


def _day(start_ms: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(start_ms // 1000))


def test_archive_pages_are_named_by_their_span() -> None:
    base = 1_767_225_600_000  # 2026-01-01T00:00:00Z
    few = _listed([base + n * 3_600_000 for n in range(PAGE_CAPACITY + 1)])  # 51 hours
    assert [p.name for p in archive_pages(few)] == ["2026-01-03", "2026-01-02", "2026-01-01"]
    dense = _listed([base + n * 1000 for n in range(PAGE_CAPACITY + 1)])  # 51 seconds
    pages = archive_pages(dense)
    assert [p.name for p in pages] == ["2026-01-01T000030-30s", "2026-01-01T000000-30s"]
    assert pages[1].label == "on 2026-01-01, 00:00:00 to 00:00:30"
    same = _listed([base] * (2 * PAGE_CAPACITY + 1))  # one millisecond: numbered pages
    assert [p.name for p in archive_pages(same)] == [
        "2026-01-01T000000-1s",
        "2026-01-01T000000-1s.2",
        "2026-01-01T000000-1s.3",
    ]
    far = _listed([10**20] * (PAGE_CAPACITY + 1))  # no calendar holds it: still a safe name
    assert [p.name for p in archive_pages(far)] == [f"t1s-{10**20}", f"t1s-{10**20}.2"]


# Start times within one UTC day, crowded in places so that spans split down to the second.
in_a_day = (
    st.integers(0, DAY_MS - 1)
    | st.integers(3_600_000, 3_600_000 + 3_000)
    | st.sampled_from([0, 5_000, 5_001, 43_200_000, DAY_MS - 1])
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(in_a_day, max_size=60),
    st.lists(st.tuples(st.booleans(), in_a_day), max_size=6),
    st.sampled_from([1, 2, 3, 5, PAGE_CAPACITY]),
)
@example([5_000] * 7, [(False, 0), (True, 5_000)], 3)  # numbered pages of one second
def test_recutting_the_changed_spans_equals_cutting_the_day_again(
    times: list[int], changes: list[tuple[bool, int]], capacity: int
) -> None:
    jobs = _listed(times)
    records = span_records(cut_span(jobs, 0, capacity), {})
    moments = []
    for n, (add, value) in enumerate(changes):
        if add:
            jobs.append((f"new{n}", value, "sig"))
            moments.append(value)
        elif jobs:
            moments.append(jobs.pop(value % len(jobs))[1])
    jobs = newest_first_listed(jobs)

    def within(begin: int, end: int) -> list[Listed]:
        return [j for j in jobs if begin <= j[1] < end]

    def count(begin: int, end: int) -> int:
        return len(within(begin, end))

    for moment in sorted(moments):
        level, begin, end = recut_span(records, moment, capacity, count)
        fresh = span_records(cut_span(within(begin, end), level, capacity), {})
        records = replace_span(records, begin, end, fresh)
    assert records == span_records(cut_span(jobs, 0, capacity), {})


def test_find_index_parts_are_spans_of_at_most_their_capacity() -> None:
    base = 1_767_225_600_000
    jobs = _listed([base + n * 10 for n in range(FIND_PART_CAPACITY + 1)])  # 20 s of jobs
    parts = find_spans(jobs)
    assert [j for p in parts for j in p.jobs] == jobs
    assert len(parts) > 1 and all(len(p.jobs) <= FIND_PART_CAPACITY for p in parts)
    assert find_spans(jobs[:FIND_PART_CAPACITY])[0].name == "2026-01-01"  # a day holds them
