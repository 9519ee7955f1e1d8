"""A job too big to show whole: task tables split into pages, a capped timeline and failure list."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.eventlog.schema import TaskEnd
from sitegen.examples.generator import JobSpec, write_log
from sitegen.render import urls
from sitegen.render.jobpage import FAILURES_SHOWN, TIMELINE_BARS
from sitegen.svg import timeline
from tests.helpers.sitecheck import broken_links

TASKS = 2_500  # each retried once: 5,000 attempts, 2,500 of them failed


@pytest.fixture(scope="module")
def big_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("big")
    logs = root / "logs"
    logs.mkdir()
    spec = JobSpec(job_id="big", job_name="tpch-q1", stages=1, tasks_per_stage=TASKS, retries=TASKS)
    write_log(logs, spec, seed=5)
    build(BuildOptions(logs, root / "site"))
    return root / "site"


def task_ids(page: Path) -> list[int]:
    return [
        int(i)
        for i in re.findall(r"<tr(?: id=task-\d+)?(?: class=\w+)?><td>(\d+)</td>", page.read_text())
    ]


@pytest.mark.slow  # a stage of 5,000 task attempts
def test_task_table_is_split_into_pages(big_site: Path) -> None:
    job = big_site / "jobs" / "big"
    size = urls.TASKS_PER_PAGE
    count = -(-TASKS // size)
    assert count >= 3
    assert sorted(p.name for p in (job / "tasks-1").iterdir()) == sorted(
        f"{n}.html" for n in range(2, count + 1)
    )
    pages = [job / "stage-1.html", *(job / "tasks-1" / f"{n}.html" for n in range(2, count + 1))]
    assert [len(task_ids(p)) for p in pages] == [size] * (count - 1) + [TASKS - (count - 1) * size]
    # Every task once, in the payload's order, across the pages (a retry has id + TASKS).
    assert [i for p in pages for i in task_ids(p)] == list(range(TASKS, 2 * TASKS))
    first, middle, last = (p.read_text() for p in (pages[0], pages[1], pages[-1]))
    assert f"Tasks {size + 1:,}–{2 * size:,} of {TASKS:,}" in middle
    assert f"Page 2 of {count}" in middle
    assert 'rel="prev" href="../../../jobs/big/stage-1.html"' in middle
    assert 'rel="next" href="../../../jobs/big/tasks-1/3.html"' in middle
    assert 'rel="next"' not in last and 'rel="prev"' in last
    # The stage's summary, failures and pictures are on its page only.
    assert 'id="summary"' in first and 'id="failed"' in first and 'id="hist"' in first
    assert 'id="summary"' not in middle and 'id="failed"' not in middle
    assert "<title>Stage 1 tasks, page 2 of tpch-q1" in middle
    assert broken_links(big_site) == []


@pytest.mark.slow  # a stage of 5,000 task attempts
def test_timeline_draws_the_failed_then_longest_attempts(big_site: Path) -> None:
    page = (big_site / "jobs" / "big" / "index.html").read_text()
    assert len(re.findall(r'<rect class="tl-bar c\d+( failed)?"', page)) == TIMELINE_BARS
    # 2,500 failed attempts: the 2,000 drawn are all failed ones.
    assert len(re.findall(r'<rect class="tl-bar c\d+ failed"', page)) == TIMELINE_BARS
    assert "Drawn: the 2,000 longest of 5,000 task attempts, failed ones first" in page


@pytest.mark.slow  # a stage of 5,000 task attempts
def test_failed_attempts_are_listed_up_to_a_limit(big_site: Path) -> None:
    page = (big_site / "jobs" / "big" / "stage-1.html").read_text()
    section = page.split('id="failed"', 1)[1].split("</section>", 1)[0]
    assert section.count('<tr class="has-detail">') == FAILURES_SHOWN  # each with its error
    assert section.count('<tr class="detail">') == FAILURES_SHOWN
    assert "The first 1,000 of 2,500 failed attempts." in section


def test_small_jobs_are_drawn_whole(example_site: tuple[Path, object]) -> None:
    site, _ = example_site
    assert not list(site.glob("jobs/*/tasks-*"))
    for page in site.glob("jobs/*/index.html"):
        assert "Drawn: the" not in page.read_text()


def test_timeline_axis_can_span_attempts_not_drawn() -> None:
    tasks = [
        TaskEnd(stage_id=1, task_id=n, executor_id="e", status="Successful",
                start_exec_time=1_000 + n, end_exec_time=2_000 + 10 * n)
        for n in range(1, 4)
    ]  # fmt: skip
    assert timeline.extent(tasks) == (1_001, 2_030)
    assert timeline.extent([]) is None
    drawn = timeline.timeline(tasks[:1], lambda s: 0, str, "t")
    wide = timeline.timeline(tasks[:1], lambda s: 0, str, "t", window=(1_001, 60_000))
    assert "+50.0 s" in wide and "+50.0 s" not in drawn
