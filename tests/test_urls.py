from __future__ import annotations

from pathlib import PurePosixPath

from sitegen import layout
from sitegen.render import urls
from sitegen.render.links import Linker


def test_links_are_relative_and_encoded() -> None:
    page = urls.stage_page("a b", "1")
    link = Linker(page)
    assert page == PurePosixPath("jobs/a b/stage-1.html")
    assert link.jobs() == "../../index.html"
    assert link.job("50%#?") == "../../jobs/50%25%23%3F/index.html"
    assert link.stage("a b", "2") == "../../jobs/a%20b/stage-2.html"
    assert link.static("style.css") == "../../static/style.css"
    assert link.api("job/{job_id}/dot", job_id="x y") == "../../api/job/x%20y/dot"
    assert link.api("job/{job_id}", job_id="x y") == "../../api/job/x%20y/index.json"
    assert Linker(PurePosixPath("index.html")).jobs("2026-01-02") == "list/2026-01-02.html"
    assert Linker(urls.list_page("2026-01-02T10")).jobs() == "../index.html"


def test_list_pages_cannot_collide_with_job_ids() -> None:
    assert urls.list_page("2026-01-02").parts[0] != urls.JOBS_DIR
    assert urls.find_part("2026-01-02").parts[0] != urls.JOBS_DIR


def test_stage_segments_are_safe_and_unique() -> None:
    segments = urls.stage_segments(["1", "2", "../x", "stage-3", "", "1", "x" * 100])
    assert segments[:3] == ["1", "2", "stage-3"]
    assert len(set(segments)) == len(segments) == 7
    assert all("/" not in s and s not in ("", ".", "..") and len(s) < 70 for s in segments)


def test_lane_anchor_is_a_safe_token() -> None:
    anchor = urls.lane_anchor('ex"ec <1> #2')
    assert anchor.startswith("lane-") and anchor[5:].isalnum()
    assert anchor == urls.lane_anchor('ex"ec <1> #2')


def test_fast_links_match_the_url_table() -> None:
    for page in (
        PurePosixPath("index.html"),
        urls.list_page("2026-01-02"),
        urls.stage_page("x", "1"),
    ):
        link = Linker(page)
        for job_id in ("abc", "a b%#?+é"):
            assert link.job(job_id) == urls.href(page, urls.job_page(job_id))
            assert link.job(job_id, "lane-1") == urls.href(page, urls.job_page(job_id), "lane-1")
            for segment in ("1", "stage-3", "x.y_z"):
                assert link.stage(job_id, segment) == urls.href(
                    page, urls.stage_page(job_id, segment)
                )
        assert link.static("a b.css") == urls.href(page, urls.static("a b.css"))
        for template in ("jobs", "job/{job_id}", "job/{job_id}/stage/{stage_id}/dot"):
            segments = {"job_id": "a b%#?+é", "stage_id": "7"}
            needed = {k: v for k, v in segments.items() if "{" + k + "}" in template}
            assert link.api(template, **needed) == urls.href(
                page, layout.endpoint_file(layout.BY_TEMPLATE[template], **needed)
            )


def test_each_job_directory_is_named_for_its_tree_and_its_parent_made_first() -> None:
    from sitegen.builder.map.jobs import root_parents
    from sitegen.render.pages import PageRenderer

    api_dir, pages_dir = layout.api_job_dir("a b"), urls.job_pages_dir("a b")
    assert (api_dir, pages_dir) == ("api/job/a b", PurePosixPath("jobs/a b"))
    for endpoint in layout.JOB_ENDPOINTS:
        found = layout.endpoint_file(endpoint, job_id="a b", stage_id="1")
        assert found.is_relative_to(api_dir)
    for page in (urls.job_page("a b"), urls.stage_page("a b", "1"), urls.raw_log("a b"),
                 urls.stage_tasks_page("a b", "1", 2)):  # fmt: skip
        assert page.is_relative_to(pages_dir)
    parents = root_parents(PageRenderer())
    assert parents == {str(PurePosixPath(api_dir).parent), str(pages_dir.parent)}
