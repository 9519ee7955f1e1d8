from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.examples.generator import BASE_TIME_MS, JobSpec, write_log
from sitegen.render import sqlpage
from tests.helpers.sitecheck import broken_links, html_pages, parse

ODD_IDS = ["with space", "100%", "a%2Fb", "hash#tag", "what?now", "c++", "naïve-日本", "x&y<z>"]


@pytest.mark.slow  # resolves every link of the example site
def test_every_link_in_the_example_site_resolves(example_site: tuple[Path, BuildReport]) -> None:
    site, _ = example_site
    assert len(html_pages(site)) > 20
    assert broken_links(site) == []


def test_pages_use_no_absolute_urls(example_site: tuple[Path, BuildReport]) -> None:
    site, _ = example_site
    for page in html_pages(site):
        # The query page loads its engine from a CDN unless the site has its own (--sql-engine).
        text = page.read_text(encoding="utf-8").replace(sqlpage.CDN_ORIGIN, "")
        assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert "https://" not in text
        if page != site / "404.html":  # shown at any depth: it links from the host's root
            assert 'href="/' not in text and 'src="/' not in text


@pytest.fixture(scope="module")
def odd_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("odd")
    logs = root / "logs"
    logs.mkdir()
    for n, job_id in enumerate(ODD_IDS):
        spec = JobSpec(job_id=job_id, job_name=f"job {job_id}", stages=2, tasks_per_stage=3)
        spec.start_ms = BASE_TIME_MS + n * 1000
        write_log(logs, spec, seed=n)
    build(BuildOptions(log_dirs=logs, output=root / "site", workers=1))
    return root / "site"


def test_odd_ids_round_trip_through_links(odd_site: Path) -> None:
    assert broken_links(odd_site) == []
    links = parse(odd_site / "index.html").links
    for job_id in ODD_IDS:
        # Percent-encoded as one segment, "%" included, and it leads to the job's own directory.
        href = f"jobs/{quote(job_id, safe='')}/index.html"
        assert href in links, job_id
        assert (odd_site / "jobs" / job_id / "index.html").is_file()
        stage_links = [
            link
            for link in parse(odd_site / "jobs" / job_id / "index.html").links
            if "/stage-" in link
        ]
        assert stage_links and all(quote(job_id, safe="") in link for link in stage_links)


@pytest.mark.slow  # 120 jobs
def test_jobs_list_is_paged_by_time(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(53):  # one a second: more than a page in a minute, so pages of 30 s
        spec = JobSpec(job_id=f"job{n:03d}", job_name="q", stages=1, tasks_per_stage=1)
        spec.start_ms = BASE_TIME_MS + n * 1000
        write_log(logs, spec, seed=n)
    build(BuildOptions(log_dirs=logs, output=tmp_path / "site", workers=1))
    site = tmp_path / "site"
    first = site / "index.html"
    assert first.read_text().count('href="jobs/job') == 50
    assert "job052" in first.read_text()  # newest first
    archive = sorted((site / "list").glob("*.html"))
    listed = [[x for x in parse(p).links if x.startswith("../jobs/job")] for p in archive]
    assert 2 <= len(archive) <= 3 and all(0 < len(jobs) <= 50 for jobs in listed)
    assert sorted(x for jobs in listed for x in jobs) == [
        f"../jobs/job{n:03d}/index.html" for n in range(53)
    ]
    assert all(p.name.endswith("-30s.html") for p in archive)
    assert "Older" not in archive[0].read_text() and "Newer" in archive[0].read_text()
    # The front page leads to the page of the first job it does not show (job002).
    (older,) = [
        p for p, jobs in zip(archive, listed, strict=True) if any("job002" in x for x in jobs)
    ]
    assert f"list/{older.name}" in parse(first).links
    assert broken_links(site) == []


def test_hostile_payload_shapes_still_publish(tmp_path: Path) -> None:
    # Repeated and path-like stage ids, a stage list of the wrong type for a field, and a DOT
    # that is not Ballista's: the job page and one page per stage are written all the same.
    logs = tmp_path / "logs"
    logs.mkdir()
    path = write_log(logs, JobSpec(job_id="odd", job_name="odd", stages=3, tasks_per_stage=2), 1)
    lines = path.read_bytes().splitlines(keepends=True)
    end = lines[-1].replace(b'"stage_id":"2"', b'"stage_id":"1"')
    end = end.replace(b'"stage_id":"3"', b'"stage_id":"../../x"')
    end = end.replace(
        b'"dot":"digraph G {', b'"dot":"strict digraph { x -> y; subgraph cluster_q {'
    )
    path.write_bytes(b"".join([*lines[:-1], end]))
    report = build(BuildOptions(log_dirs=logs, output=tmp_path / "site", workers=1))
    assert report.published == 1
    job_dir = tmp_path / "site/jobs/odd"
    stages = sorted(p.name for p in job_dir.glob("stage-*.html"))
    # Stages 2 and 3 of the TaskEnds are no longer named: pages of stages a replan dropped,
    # named apart from the payload's (tests/test_replanned.py).
    assert stages == [
        "stage-1-2.html", "stage-1.html", "stage-2.html", "stage-3.html", "stage-stage-3.html"
    ]  # fmt: skip
    # One directory per job: the stage pages sit beside the job page.
    assert [p.name for p in job_dir.iterdir() if p.is_dir()] == []
    assert broken_links(tmp_path / "site") == []
