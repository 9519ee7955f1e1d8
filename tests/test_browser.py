"""The pages in a real headless Chromium, over HTTP (under a sub-path) and over file://."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.examples.generator import BASE_TIME_MS, JobSpec, write_log
from sitegen.render import urls
from sitegen.text.formatting import timestamp
from tests.conftest import require
from tests.helpers.logs import FAILED_JOB
from tests.helpers.servers import http_server, nginx


def task_ends(job_id: str) -> int:
    """Count the TaskEnd records of a bundled example log: one timeline bar each."""
    from sitegen.examples import EXAMPLE_LOG_DIR

    lines = (EXAMPLE_LOG_DIR / f"{job_id}.eventlog").read_bytes().splitlines()
    return sum(1 for line in lines if line.startswith(b'{"ev":"TaskEnd"'))


SCREENSHOTS = Path(__file__).parent.parent / "test-artifacts" / "screenshots"
PER_PAGE = urls.TASKS_PER_PAGE
BIG_STAGE_TASKS = 2 * PER_PAGE + 7
XSS_NAME = "<img src=x onerror=alert(1)><script>alert(2)</script>"

# A real Chromium: about 30 s for the module.
pytestmark = pytest.mark.slow


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """Serve a directory holding the example site at /site/ (a sub-path, as GitHub Pages)."""
    root = tmp_path_factory.mktemp("served")
    (root / "logs").mkdir()
    from sitegen.examples import EXAMPLE_LOG_DIR

    for log in EXAMPLE_LOG_DIR.iterdir():
        (root / "logs" / log.name).write_bytes(log.read_bytes())
    write_log(
        root / "logs",
        JobSpec(
            job_id="xss 100%#?",
            job_name=XSS_NAME,
            stages=2,
            tasks_per_stage=4,
            start_ms=BASE_TIME_MS - 86_400_000,
        ),
        seed=5,
    )
    build(BuildOptions(log_dirs=root / "logs", output=root / "site", workers=1))
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/site/", root / "site"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def nginx_root(served: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Serve the same site at the root of a real nginx, with the config sitegen generates."""
    with nginx(require("nginx"), served[1], tmp_path_factory.mktemp("nginx")) as port:
        yield f"http://127.0.0.1:{port}/"


@dataclass
class Watched:
    """A page plus everything that went wrong on it."""

    page: Any
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    # Per frame: how many documents it has shown, and the navigations (document requests)
    # not shown yet; per request: the document it belongs to (a navigation's: the next).
    shown: dict[Any, int] = field(default_factory=dict)
    under_way: dict[Any, set[Any]] = field(default_factory=dict)
    document: dict[Any, int] = field(default_factory=dict)

    def clean(self) -> None:
        assert self.errors == []
        assert self.dialogs == []


def _requested(w: Watched, request: Any) -> None:
    frame = request.frame
    shown = w.shown.get(frame, 0)
    if request.is_navigation_request():
        w.under_way.setdefault(frame, set()).add(request)
        w.document[request] = shown + 1
    else:
        w.document[request] = shown


def _navigated(w: Watched, frame: Any) -> None:
    # With a navigation under way the frame shows a new document; without, the address
    # changed within the page (a #fragment), and its requests go on.
    if w.under_way.get(frame):
        w.shown[frame] = w.shown.get(frame, 0) + 1
        w.under_way[frame].clear()


def _overtaken(w: Watched, request: Any) -> bool:
    """Tell whether another navigation of the request's frame replaced, or is replacing, its document."""
    frame = request.frame
    document = w.document.get(request)
    if document is None:
        return False
    replaced = w.shown.get(frame, 0) > document
    replacing = bool(w.under_way.get(frame, set()) - {request})
    return replaced or replacing


def _failed(w: Watched, request: Any) -> None:
    # A navigation cuts short what the document it replaces was still loading (its icon, a
    # script, the document itself): that is the test moving on, not a broken site. Only
    # net::ERR_ABORTED of such a request is let through; every other failure counts.
    cut_short = request.failure == "net::ERR_ABORTED" and _overtaken(w, request)
    w.under_way.get(request.frame, set()).discard(request)
    if cut_short:
        return
    w.errors.append(f"request failed: {request.url} ({request.failure})")


@pytest.fixture
def watched(browser: Any) -> Iterator[Watched]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    w = Watched(page)
    page.on(
        "console",
        lambda m: (
            w.errors.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning")
            else None
        ),
    )
    page.on("pageerror", lambda e: w.errors.append(f"page error: {e}"))
    page.on("request", lambda r: _requested(w, r))
    page.on("framenavigated", lambda f: _navigated(w, f))
    page.on("requestfailed", lambda r: _failed(w, r))
    page.on(
        "response",
        lambda r: w.errors.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
    )

    def on_dialog(dialog: Any) -> None:
        w.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    yield w
    context.close()


def _shoot(page: Any, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _bases(served: tuple[str, Path]) -> list[tuple[str, str]]:
    url, site = served
    return [("http", url), ("file", site.as_uri() + "/")]


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_jobs_page(served: tuple[str, Path], watched: Watched, scheme: str) -> None:
    base = dict(_bases(served))[scheme]
    page = watched.page
    page.goto(base + "index.html")
    rows = page.locator("table.jobs tbody tr")
    assert rows.count() == 26
    assert page.locator("table.jobs").get_by_text("Job failed due to stage 5 failed").count() == 1
    # The progressive enhancement: filter and sort the static rows.
    page.locator(".table-filter input").fill("tpch-q1")
    visible = page.locator("table.jobs tbody tr:not([hidden])")
    assert 1 <= visible.count() < 26
    page.locator(".table-filter input").fill("")
    page.locator("table.jobs thead th").nth(6).locator("button").click()
    assert page.locator("table.jobs thead th").nth(6).get_attribute("aria-sort") == "ascending"
    _shoot(page, f"jobs-{scheme}")
    watched.clean()


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_job_page(served: tuple[str, Path], watched: Watched, scheme: str) -> None:
    base = dict(_bases(served))[scheme]
    page = watched.page
    page.goto(base + "index.html")
    page.locator(f'a[href="jobs/{FAILED_JOB}/index.html"]').click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text().startswith("tpch-q9")
    assert "Why it failed" in page.locator(".failure-box h2").inner_text()
    nodes = page.locator("svg.dag .dag-node")
    assert nodes.count() == 5
    # The stage label carries its status (SVG nodes have text content, not inner text).
    assert "Stage 5 · Failed" in (
        page.locator('svg.dag .dag-node[data-stage="5"]').text_content() or ""
    )
    bars = page.locator("svg.timeline rect.tl-bar")
    assert bars.count() == task_ends(FAILED_JOB) == 84
    assert page.locator("svg.timeline rect.tl-bar.failed").count() > 0
    # A bar's tip reads "Task 0 · stage 1 · 972 ms" (written with &#183; to keep it ASCII).
    tips = page.locator("svg.timeline rect.tl-bar:not(.failed) title").all_text_contents()
    assert tips and all(re.fullmatch(r"Task \d+ · stage \d+ · [^&]+", tip) for tip in tips)
    assert page.locator("svg.timeline .tl-lane").count() == 4
    assert page.locator("table.stages tbody tr").count() == 5
    assert page.locator('link[rel="alternate"][type="application/json"]').count() == 1
    _shoot(page, f"job-{scheme}")
    watched.clean()
    # Every JSON link points at the file holding that endpoint's exact body (file://
    # included). Extensionless files download rather than display, so fetch, don't click.
    links = page.locator("ul.api a")
    assert links.count() == 4 + 5  # job, stages, config, dot, and one DOT per stage
    stages_href = page.locator('ul.api a[href$="/stages"]').get_attribute("href")
    assert stages_href is not None
    target = urljoin(page.url, stages_href)
    if scheme == "http":
        body = page.request.get(target).body()
    else:
        body = Path(unquote(urlsplit(target).path)).read_bytes()
    assert body == (served[1] / "api/job" / FAILED_JOB / "stages").read_bytes()
    assert json.loads(body)["stages"]


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_stage_page(served: tuple[str, Path], watched: Watched, scheme: str) -> None:
    base = dict(_bases(served))[scheme]
    page = watched.page
    page.goto(base + f"jobs/{FAILED_JOB}/index.html")
    page.locator("svg.dag a").last.click()  # the DAG's boxes link to the stage pages
    page.wait_for_load_state()
    assert page.locator("h1").inner_text().startswith("Stage 5")
    assert page.locator("table.tasks tbody tr").count() == 16
    assert page.locator("table.tasks tbody tr.failed").count() > 0
    assert page.locator(".failure-box table tbody tr").count() > 0
    assert page.locator("svg.dag.ops .op-node").count() >= 3
    assert page.locator("svg.histogram rect.hist-bar").count() > 0
    # Exact counts are shown grouped ("12,345"); sorting reads them as numbers.
    page.locator("table.tasks th", has_text="Input rows").locator("button").click()
    shown = page.locator("table.tasks tbody tr td:nth-child(9)").all_inner_texts()
    counts = [int(t.replace(",", "")) for t in shown if t != "—"]
    assert len(counts) > 1 and any("," in t for t in shown)
    assert counts == sorted(counts)
    _shoot(page, f"stage-{scheme}")
    watched.clean()


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_hostile_job_name_is_text(served: tuple[str, Path], watched: Watched, scheme: str) -> None:
    base = dict(_bases(served))[scheme]
    page = watched.page
    page.goto(base + "index.html")
    cell = page.locator("table.jobs tbody tr", has_text="alert(2)")
    assert XSS_NAME in cell.inner_text()
    cell.locator("a").first.click()  # id "xss 100%#?" must survive percent-encoding
    page.wait_for_load_state()
    assert XSS_NAME in page.locator("h1").inner_text()
    assert page.locator("img[src=x]").count() == 0
    page.goto(page.url.rsplit("/", 1)[0] + "/stage-1.html")
    assert XSS_NAME in page.locator(".crumbs").inner_text()
    _shoot(page, f"xss-{scheme}")
    watched.clean()


def test_pages_at_the_root_of_nginx(nginx_root: str, watched: Watched) -> None:
    page = watched.page
    page.goto(nginx_root)  # the directory index, as a visitor types it
    assert page.locator("table.jobs tbody tr").count() == 26
    page.locator(f'a[href="jobs/{FAILED_JOB}/index.html"]').click()
    page.wait_for_load_state()
    assert page.locator("svg.dag .dag-node").count() == 5
    assert page.locator("svg.timeline rect.tl-bar").count() == task_ends(FAILED_JOB)
    page.locator("table.stages tbody th a").first.click()
    page.wait_for_load_state()
    assert page.locator("table.tasks tbody tr").count() == 16
    _shoot(page, "stage-nginx")
    watched.clean()


def test_other_pages_load_cleanly(served: tuple[str, Path], watched: Watched) -> None:
    url, _ = served
    page = watched.page
    for path in ("executors/index.html", "problems/index.html", "running/index.html"):
        # networkidle: let the favicon load before the next navigation aborts it.
        page.goto(url + path, wait_until="networkidle")
        assert page.locator("header.site nav a").count() >= 4
    page.goto(url + "executors/index.html")
    page.locator("section table.executor-jobs a").first.click()
    page.wait_for_load_state()
    assert "#lane-" in page.url
    fragment = page.url.split("#", 1)[1]
    assert page.locator(f"svg.timeline g#{fragment}").count() == 1
    watched.clean()


def test_404_page_deep_in_the_site_is_whole_on_nginx(nginx_root: str, browser: Any) -> None:
    # Built without --base-url, served at the root of the host by the generated config.
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
    response = page.goto(nginx_root + "jobs/nope/stage-9.html", wait_until="networkidle")
    assert response is not None and response.status == 404
    assert failed == [nginx_root + "jobs/nope/stage-9.html"]  # only the page itself
    # Styled: the stylesheet loaded (its header background, not the browser's default).
    head = page.evaluate("getComputedStyle(document.querySelector('header.site')).backgroundColor")
    assert head == "rgb(240, 243, 246)"
    page.get_by_role("link", name="Problems").first.click()
    page.wait_for_load_state()
    assert page.url == nginx_root + "problems/index.html"
    assert page.locator("h1").inner_text() == "Problems"
    context.close()


def test_phone_and_dark(served: tuple[str, Path], browser: Any) -> None:
    url, _ = served
    context = browser.new_context(viewport={"width": 390, "height": 844}, color_scheme="dark")
    page = context.new_page()
    page.goto(url + f"jobs/{FAILED_JOB}/index.html")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(13, 17, 23)"
    # Nothing but the scrolling table wrappers may be wider than the phone.
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    _shoot(page, "job-phone-dark")
    context.close()


@contextlib.contextmanager
def built_and_served(
    tmp_path_factory: pytest.TempPathFactory, name: str, specs: list[tuple[JobSpec, int]]
) -> Iterator[tuple[int, Path, BuildReport]]:
    """Write one log per (spec, seed), build them, and serve the site with http.server."""
    root = tmp_path_factory.mktemp(name)
    logs = root / "logs"
    logs.mkdir()
    for spec, seed in specs:
        write_log(logs, spec, seed=seed)
    report = build(BuildOptions(log_dirs=logs, output=root / "site", workers=1))
    with http_server(root / "site") as port:
        yield port, root / "site", report


@pytest.fixture(scope="module")
def many_pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A site whose jobs list has three pages; the oldest job has a hostile id and name."""
    specs = [
        (JobSpec(f"job-{n:03d}", f"nightly-{n:03d}", stages=1, tasks_per_stage=2,
                 start_ms=BASE_TIME_MS + n * 60_000), n)
        for n in range(120)
    ]  # fmt: skip
    hostile = JobSpec("xss 100%#?", XSS_NAME, stages=1, tasks_per_stage=2, start_ms=BASE_TIME_MS)
    with built_and_served(tmp_path_factory, "many", [*specs, (hostile, 7)]) as (port, site, report):
        assert report.published == 121
        yield f"http://127.0.0.1:{port}/index.html", site


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_find_a_job_on_any_page(
    many_pages: tuple[str, Path], watched: Watched, scheme: str
) -> None:
    url, site = many_pages
    page = watched.page
    page.goto(url if scheme == "http" else site.as_uri() + "/index.html")
    assert page.locator("table.jobs:not(.found) tbody tr").count() == 50
    find = page.get_by_label("Find a job")
    # The oldest job is on the last page; the box finds it from the first.
    find.fill("alert(2)")
    found = page.locator("table.found tbody tr")
    found.first.wait_for()
    assert found.count() == 1
    assert XSS_NAME in found.inner_text()
    assert page.locator("img[src=x]").count() == 0
    assert page.locator("table.jobs:not(.found)").is_hidden()
    assert page.locator("nav.pager").first.is_hidden()  # its pages are not what is shown
    find.fill("nightly-000")
    assert found.locator("td").nth(3).inner_text() == timestamp(BASE_TIME_MS)  # as pages show it
    find.fill("nightly-11")
    assert page.locator(".table-filter [aria-live]").inner_text() == "10 of 121 jobs match"
    _shoot(page, f"find-{scheme}")
    find.fill("")
    assert page.locator("table.found").is_hidden()
    assert page.locator("table.jobs:not(.found) tbody tr").count() == 50
    find.fill("100%#?")
    found.first.locator("a").click()  # the id must survive percent-encoding
    page.wait_for_load_state()
    assert XSS_NAME in page.locator("h1").inner_text()
    watched.clean()


@pytest.fixture(scope="module")
def big_stage(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """A site with one stage whose task table has three pages, the last one short."""
    spec = JobSpec("big job", "tpch-q1", stages=1, tasks_per_stage=BIG_STAGE_TASKS)
    with built_and_served(tmp_path_factory, "big-stage", [(spec, 3)]) as (port, site, _):
        yield f"http://127.0.0.1:{port}/", site


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_task_table_pages(big_stage: tuple[str, Path], watched: Watched, scheme: str) -> None:
    url, site = big_stage
    base = url if scheme == "http" else site.as_uri() + "/"
    page = watched.page
    page.goto(base + "jobs/big%20job/index.html")
    page.locator("table.stages a", has_text="Stage 1").click()
    pager = page.locator("nav.pager").first
    assert "Page 1 of 3" in pager.inner_text()
    pager.get_by_text("Last »").click()
    page.wait_for_load_state()
    assert page.locator("table.tasks tbody tr").count() == 7
    caption = f"Tasks {2 * PER_PAGE + 1:,}–{BIG_STAGE_TASKS:,} of {BIG_STAGE_TASKS:,}"
    assert caption in page.locator("table.tasks caption").inner_text()
    page.locator("nav.pager").first.get_by_text("‹ Previous").click()
    # count() does not wait: on a loaded machine it counted a half-parsed page.
    page.wait_for_url("**/tasks-1/2.html")
    page.wait_for_load_state()
    rows = page.locator("table.tasks tbody tr")
    assert rows.count() == PER_PAGE
    assert rows.first.locator("td").first.inner_text() == str(PER_PAGE)
    # Sorting works within the page: by duration, the longest last.
    page.locator("table.tasks th", has_text="Duration").locator("button").click()
    took = [int(v) for v in page.locator("table.tasks tbody td[data-v]").evaluate_all(
        "cells => cells.map(c => c.dataset.v)")]  # fmt: skip
    assert len(took) == PER_PAGE and took == sorted(took)
    page.locator("nav.crumbs a", has_text="Stage 1").click()
    page.wait_for_load_state()
    assert page.locator("#summary").count() == 1
    if scheme == "http":
        _shoot(page, "stage-task-pages")
    watched.clean()


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_finding_link_lands_on_the_flagged_task_row(
    served: tuple[str, Path], watched: Watched, scheme: str
) -> None:
    base = dict(_bases(served))[scheme]
    page = watched.page
    page.goto(base + "jobs/planted-straggler/index.html")
    finding = page.locator("ul.findings li", has_text="straggler")
    assert "Task 5 of stage 2 ran 3.0 s" in finding.inner_text()
    finding.get_by_role("link", name="Show the task row").click()
    page.wait_for_load_state()
    assert page.url.endswith("/stage-2.html#task-5")
    row = page.locator("table.tasks tbody tr:target")
    assert row.count() == 1
    assert row.locator("td").first.inner_text() == "5"
    assert "straggler" in row.inner_text()  # the marker is text, not only a colour
    # The browser scrolled the row into view.
    box = row.bounding_box()
    assert box is not None and 0 <= box["y"] < page.viewport_size["height"]
    _shoot(page, f"finding-row-{scheme}")
    watched.clean()
