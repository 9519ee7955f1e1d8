"""Schedulers: each job's scheduler, the jobs list's filter pages, /api/state and fleet.json."""

from __future__ import annotations

import json
import posixpath
import re
from pathlib import Path

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.reduce.days import SchedulerScope
from sitegen.eventlog.reader import read_log
from sitegen.render import urls
from sitegen.render.listing import PAGE_CAPACITY
from tests.helpers.logs import job_lines, with_scheduler_id, write
from tests.helpers.sitecheck import broken_links
from tests.helpers.sqldata import rows

DAY = 86_400_000


def _log(dir_: Path, job_id: str, start: int, scheduler: bytes | None = None, **kw: object) -> Path:
    """Write one small job's log, with ``scheduler_id`` (raw JSON) on its JobStart if given."""
    lines = job_lines(job_id, start_ms=start, **kw)
    if scheduler is not None:
        lines = with_scheduler_id(lines, scheduler)
    dir_.mkdir(parents=True, exist_ok=True)
    return write(dir_ / f"{job_id}.eventlog", lines)


def _build(tmp_path: Path, *dirs: Path, data: bool | None = None) -> Path:
    """Build a site of ``dirs`` into ``tmp_path/site``; return it."""
    site = tmp_path / "site"
    build(BuildOptions(log_dirs=tuple(dirs), output=site, workers=1, data=data))
    return site


def _job_ids(html: str) -> list[str]:
    """Return the ids a listing page links to, in order."""
    return re.findall(r'href="[^"]*jobs/([^/"]+)/index.html"><code>', html)


def test_the_key_sits_after_submitted_at_and_reads_as_written(tmp_path: Path) -> None:
    path = _log(tmp_path, "j1", 1_000, b'"sched-a:50050"')
    first = path.read_bytes().split(b"\n")[0]
    assert first.index(b'"submitted_at"') < first.index(b'"scheduler_id"')
    assert first.index(b'"scheduler_id"') < first.index(b'"logical_plan"')
    read = read_log(path)
    assert read.job_start is not None and read.job_start.scheduler_id == "sched-a:50050"
    read = read_log(_log(tmp_path, "j2", 1_000, b"null"))
    assert read.job_start is not None and read.job_start.scheduler_id is None


@pytest.fixture
def two_dirs(tmp_path: Path) -> tuple[Path, Path]:
    """Two schedulers' log dirs: one names its scheduler on some logs, the other never."""
    east, west = tmp_path / "east", tmp_path / "west"
    _log(east, "e-named", 10 * DAY + 5_000, b'"east-host:50050"')
    _log(east, "e-null", 10 * DAY + 4_000, b"null")
    _log(east, "e-none", 10 * DAY + 3_000)
    _log(west, "w-1", 10 * DAY + 2_000)
    _log(west, "w-failed", 10 * DAY + 1_000, outcome="failed")
    return east, west


def test_a_site_of_two_dirs_names_each_jobs_scheduler(
    tmp_path: Path, two_dirs: tuple[Path, Path]
) -> None:
    site = _build(tmp_path, *two_dirs, data=True)
    # The key where it is a string; else (null, or absent) the dir the log came from.
    fleet = json.loads((site / "fleet.json").read_bytes())
    # Both lists in the one file: these generated jobs ran on executors too.
    assert fleet["executors"] and all("verdict" in e for e in fleet["executors"])
    by_name = {s["scheduler"]: s for s in fleet["schedulers"]}
    assert sorted(by_name) == ["east", "east-host:50050", "west"]
    assert (by_name["east"]["jobs"], by_name["east"]["failed"]) == (2, 0)
    assert (by_name["west"]["jobs"], by_name["west"]["failed"]) == (2, 1)
    assert by_name["west"]["first"] == 10 * DAY + 1_000
    assert by_name["west"]["last"] >= by_name["west"]["first"]
    assert by_name["east-host:50050"]["first"] == 10 * DAY + 5_000
    table = {row["job_id"]: row["scheduler"] for row in rows(site, "jobs")}
    assert table == {
        "e-named": "east-host:50050",
        "e-null": "east",
        "e-none": "east",
        "w-1": "west",
        "w-failed": "west",
    }
    # The job page says which; the jobs list has the column, the section and the filter.
    job = (site / "jobs/e-named/index.html").read_text()
    assert "<dt>Scheduler</dt><dd>east-host:50050</dd>" in job
    assert "<dt>Scheduler</dt><dd>west</dd>" in (site / "jobs/w-1/index.html").read_text()
    front = (site / "index.html").read_text()
    assert '<th scope="col">Scheduler</th>' in front
    assert '<h2 id="schedulers">Schedulers</h2>' in front
    assert "<td>east-host:50050</td>" in front
    state = json.loads((site / "api/state").read_bytes())
    assert list(state)[:2] == ["started", "scheduler_id"]
    assert state["scheduler_id"] == "history-server"
    assert broken_links(site) == []


def test_the_filter_narrows_the_list_to_one_schedulers_jobs(
    tmp_path: Path, two_dirs: tuple[Path, Path]
) -> None:
    site = _build(tmp_path, *two_dirs)
    front = (site / "index.html").read_text()
    for name, ids in {
        "west": ["w-1", "w-failed"],
        "east": ["e-null", "e-none"],
        "east-host:50050": ["e-named"],
    }.items():
        page = urls.scheduler_page(name)
        # Linked from the front page (a static link: no script needed), relative to it.
        assert f'href="{page}"' in front
        html = (site / page).read_text()
        assert _job_ids(html) == ids
        assert f"Jobs of scheduler {name}" in html
        # Its filter links back to all jobs and to the others, never to itself.
        assert 'href="../../index.html">all</a>' in html
        assert f"<strong>{name}</strong>" in html
    assert broken_links(site) == []


def test_one_scheduler_shows_no_column_filter_or_pages(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    _log(logs, "a", 10 * DAY + 2_000, b'"only:50050"')
    _log(logs, "b", 10 * DAY + 1_000, b'"only:50050"')
    site = _build(tmp_path, logs)
    front = (site / "index.html").read_text()
    assert "Scheduler" not in front and not (site / urls.SCHEDULERS_DIR).exists()
    fleet = json.loads((site / "fleet.json").read_bytes())
    assert [s["scheduler"] for s in fleet["schedulers"]] == ["only:50050"]
    # The log names it: the job page says so.
    assert "<dt>Scheduler</dt><dd>only:50050</dd>" in (site / "jobs/a/index.html").read_text()


def test_one_dir_without_the_key_names_no_scheduler_on_its_pages(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    _log(logs, "a", 10 * DAY + 2_000)
    site = _build(tmp_path, logs)
    assert "Scheduler" not in (site / "jobs/a/index.html").read_text()
    fleet = json.loads((site / "fleet.json").read_bytes())
    assert fleet["schedulers"] == [
        {
            "scheduler": "logs",
            "jobs": 1,
            "failed": 0,
            "first": 10 * DAY + 2_000,
            "last": fleet["schedulers"][0]["last"],
        }
    ]


def test_a_schedulers_list_pages_by_span_and_an_incremental_build_agrees(
    tmp_path: Path,
) -> None:
    east, west = tmp_path / "east", tmp_path / "west"
    # More than a page of east's jobs over three days; west has two.
    count = PAGE_CAPACITY + 20
    for n in range(count):
        _log(east, f"e{n:03d}", 10 * DAY + (n % 3) * DAY + n * 1_000, stages=1, tasks_per_stage=1)
    # West's jobs have a name of their own: a new one is no run of an east job's name.
    _log(west, "w-1", 11 * DAY, name="west-q", stages=1, tasks_per_stage=1)
    _log(west, "w-2", 12 * DAY, name="west-q", stages=1, tasks_per_stage=1)
    site = _build(tmp_path, east, west)
    index = (site / urls.scheduler_page("east")).read_text()
    assert len(_job_ids(index)) == PAGE_CAPACITY
    # Older pages follow from its pager, a static link each, until every east job is listed.
    seen = _job_ids(index)
    page = str(urls.scheduler_page("east"))
    html, pages = index, 1
    while (older := re.search(r'rel="next" href="([^"]+)"', html)) is not None and pages < 10:
        page = posixpath.normpath(posixpath.join(posixpath.dirname(page), older.group(1)))
        assert page.startswith(urls.scheduler_dir("east") + "/")
        html = (site / page).read_text()
        seen += _job_ids(html)
        pages += 1
    assert len(set(seen)) == count and all(i.startswith("e") for i in seen)
    assert broken_links(site) == []
    # One new west job: a build in place writes the site a clean build writes, and leaves
    # east's pages as they were (none of its jobs changed).
    east_pages = {p: p.stat().st_mtime_ns for p in (site / urls.scheduler_dir("east")).iterdir()}
    _log(west, "w-3", 12 * DAY + 5_000, name="west-q", stages=1, tasks_per_stage=1)
    build(BuildOptions(log_dirs=(east, west), output=site, workers=1))
    assert {p: p.stat().st_mtime_ns for p in east_pages} == east_pages
    clean = tmp_path / "clean"
    build(BuildOptions(log_dirs=(east, west), output=clean, workers=1))
    for sub in (urls.SCHEDULERS_DIR,):
        ours = sorted(p.relative_to(site) for p in (site / sub).rglob("*.html"))
        theirs = sorted(p.relative_to(clean) for p in (clean / sub).rglob("*.html"))
        assert ours == theirs
        for rel in ours:
            assert (site / rel).read_bytes() == (clean / rel).read_bytes(), rel
    assert _job_ids((site / urls.scheduler_page("west")).read_text()) == ["w-3", "w-2", "w-1"]


def test_a_schedulers_pages_go_with_its_last_job(tmp_path: Path) -> None:
    east, west = tmp_path / "east", tmp_path / "west"
    _log(east, "e1", 10 * DAY)
    gone = _log(east, "e2", 10 * DAY + 1_000, b'"other:1"')
    _log(west, "w1", 10 * DAY + 2_000)
    site = _build(tmp_path, east, west)
    assert (site / urls.scheduler_page("other:1")).is_file()
    gone.unlink()
    build(BuildOptions(log_dirs=(east, west), output=site, workers=1))
    assert not (site / urls.scheduler_dir("other:1")).exists()
    assert (site / urls.scheduler_page("east")).is_file()
    assert "other:1" not in (site / urls.scheduler_page("west")).read_text()
    # One scheduler left: no filter, no pages.
    (east / "e1.eventlog").unlink()
    build(BuildOptions(log_dirs=(east, west), output=site, workers=1))
    assert not (site / urls.SCHEDULERS_DIR).exists()
    assert "Scheduler" not in (site / "index.html").read_text()
    fleet = json.loads((site / "fleet.json").read_bytes())
    assert [s["scheduler"] for s in fleet["schedulers"]] == ["west"]


def test_a_schedulers_id_is_log_text_escaped_everywhere(tmp_path: Path) -> None:
    east, west = tmp_path / "east", tmp_path / "west"
    _log(east, "e1", 10 * DAY, b'"<b>x</b>&\\"1"')
    _log(west, "w1", 10 * DAY + 1_000)
    site = _build(tmp_path, east, west)
    name = '<b>x</b>&"1'
    for page in (
        site / "index.html",
        site / urls.scheduler_page(name),
        site / "jobs/e1/index.html",
    ):
        html = page.read_text()
        assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;&amp;" in html, page
    assert urls.scheduler_dir(name).startswith("schedulers/b-x-b-1-")
    fleet = json.loads((site / "fleet.json").read_bytes())
    assert name in [s["scheduler"] for s in fleet["schedulers"]]


def test_a_change_to_a_schedulers_jobs_cuts_again_only_its_day(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    east, west = tmp_path / "east", tmp_path / "west"
    # East: 40 jobs on each of three days, each day one archive page; the newest page lists
    # day 12's, day 11's and day 10's newest 20. West: one job.
    for day in (10, 11, 12):
        for n in range(40):
            start = day * DAY + 3_600_000 + n * 60_000
            # A name each: no run has runs before it, so no regression comes or goes.
            _log(east, f"e{day}-{n:02d}", start, name=f"q{day}-{n}", stages=1, tasks_per_stage=1)
    _log(west, "w-1", 11 * DAY, name="west-q", stages=1, tasks_per_stage=1)
    site = _build(tmp_path, east, west)
    pages = {p.name: p.stat().st_mtime_ns for p in (site / urls.scheduler_dir("east")).iterdir()}
    assert len(pages) == 4  # the newest jobs, and a page per day
    spans: list[tuple[int, int]] = []
    listed = SchedulerScope.listed

    def counted(self: SchedulerScope, begin: int, end: int) -> list[tuple[str, int, str]]:
        spans.append((begin, end))
        return listed(self, begin, end)

    monkeypatch.setattr(SchedulerScope, "listed", counted)
    # A job older than any of day 10's: only day 10's page changes.
    _log(east, "e10-early", 10 * DAY + 60_000, name="early", stages=1, tasks_per_stage=1)
    build(BuildOptions(log_dirs=(east, west), output=site, workers=1))
    assert spans and all(b >= 10 * DAY and e <= 11 * DAY for b, e in spans), spans
    now = {p.name: p.stat().st_mtime_ns for p in (site / urls.scheduler_dir("east")).iterdir()}
    assert [name for name in now if now[name] != pages.get(name)] == ["1970-01-11.html"]
    # A job of day 11 gone: its day's page and the newest page change; the site is the one
    # a clean build makes.
    spans.clear()
    (east / "e11-05.eventlog").unlink()
    build(BuildOptions(log_dirs=(east, west), output=site, workers=1))
    assert spans and all(b >= 11 * DAY and e <= 12 * DAY for b, e in spans), spans
    clean = tmp_path / "clean"
    build(BuildOptions(log_dirs=(east, west), output=clean, workers=1))
    ours = sorted(p.relative_to(site) for p in (site / urls.SCHEDULERS_DIR).rglob("*.html"))
    theirs = sorted(p.relative_to(clean) for p in (clean / urls.SCHEDULERS_DIR).rglob("*.html"))
    assert ours == theirs and len(ours) == 5
    for rel in ours:
        assert (site / rel).read_bytes() == (clean / rel).read_bytes(), rel
