"""Every page type in headless Chromium on a phone (375x800) and with axe-core, light and dark."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.examples.generator import BASE_TIME_MS, JobSpec, write_log
from sitegen.render import urls
from tests.helpers.logs import FAILED_JOB
from tests.helpers.servers import http_server

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
PHONE = {"width": 375, "height": 800}
# The smallest chart text a phone shows readably (CSS px).
MIN_CHART_TEXT_PX = 11.0
# A failed-attempts row (task, executor, start, reason) is one or two lines, never a tower.
MAX_FAILURE_ROW_PX = 80.0
# The error under it is about as wide as the screen: not a column of a few characters.
MIN_ERROR_WIDTH_PX = 250.0
BIG_TASKS = urls.TASKS_PER_PAGE + 30  # two task pages
OPERATOR_PAGE = """# Runbook

| Symptom | First thing to check | Who to call | Dashboard |
|---|---|---|---|
| Stage stuck at 99 % for more than ten minutes | executor logs for OutOfMemory | the data platform on-call rotation | https://grafana.example.com/d/ballista-executors-overview |
"""

# One page of each type (path from the site root, and what it is).
PAGES = {
    "jobs": "index.html",
    "job": f"jobs/{FAILED_JOB}/index.html",
    "stage": f"jobs/{FAILED_JOB}/stage-5.html",
    "tasks": "jobs/big/tasks-1/2.html",
    "executors": "executors/index.html",
    "problems": "problems/index.html",
    "running": "running/index.html",
    "operator": "pages/runbook/index.html",
    "404": "404.html",
}

# A real Chromium, axe-core on every page type: about 30 s for the module.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The examples, 45 more jobs (two list pages), a stage of two task pages, a damaged log."""
    root = tmp_path_factory.mktemp("phone")
    logs = root / "logs"
    logs.mkdir()
    for log in EXAMPLE_LOG_DIR.iterdir():
        (logs / log.name).write_bytes(log.read_bytes())
    for n in range(45):
        spec = JobSpec(f"job-{n:03d}", f"nightly-{n:03d}", stages=1, tasks_per_stage=2,
                       start_ms=BASE_TIME_MS - (n + 2) * 86_400_000)  # fmt: skip
        write_log(logs, spec, seed=n)
    write_log(logs, JobSpec("big", "tpch-q1", stages=1, tasks_per_stage=BIG_TASKS), seed=3)
    (logs / "damaged.eventlog").write_text('{"ev": "JobStart", "version": 1, "data": \n')
    pages = root / "pages"
    pages.mkdir()
    (pages / "runbook.md").write_text(OPERATOR_PAGE)
    build(BuildOptions(log_dirs=logs, output=root / "site", workers=1, pages_dir=pages))
    for path in PAGES.values():
        assert (root / "site" / path).is_file(), path
    with http_server(root / "site") as port:
        yield f"http://127.0.0.1:{port}/"


@pytest.fixture(scope="module")
def phone(browser: Any) -> Iterator[Any]:
    """One phone-sized page for the module's layout checks."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    yield context.new_page()
    context.close()


def _page_overflow(page: Any) -> int:
    return int(page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth"))


@pytest.mark.parametrize("kind", PAGES)
def test_no_page_level_sideways_scroll(site: str, phone: Any, kind: str) -> None:
    phone.goto(site + PAGES[kind])
    assert phone.evaluate("window.innerWidth") == 375
    assert _page_overflow(phone) <= 0, kind


# Read how big every chart text is drawn: its font size in the picture's units times the
# picture's scale on screen.
_CHART_TEXT = """() => Array.from(document.querySelectorAll("svg text")).map(t => {
  const svg = t.ownerSVGElement;
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return [t.textContent, parseFloat(getComputedStyle(t).fontSize) * scale];
})"""


@pytest.mark.parametrize("kind", ["job", "stage"])
def test_chart_text_is_readable_on_a_phone(site: str, phone: Any, kind: str) -> None:
    phone.goto(site + PAGES[kind])
    sizes = phone.evaluate(_CHART_TEXT)
    assert len(sizes) >= 8  # the stage page: its operators and the histogram axis
    small = [(text, size) for text, size in sizes if size < MIN_CHART_TEXT_PX]
    assert small == [], small[:5]


def test_chart_text_measure_sees_shrunk_pictures(site: str, phone: Any) -> None:
    # The check above can fail: squeeze the timeline into the screen as the old CSS did.
    phone.goto(site + PAGES["job"])
    phone.evaluate("document.querySelector('svg.timeline').style.minWidth = '0'")
    sizes = [size for _, size in phone.evaluate(_CHART_TEXT)]
    assert min(sizes) < MIN_CHART_TEXT_PX


# After scrolling the middle row of each long table into view: is the table's head on
# screen and on top (not covered, not scrolled away)?
_HEAD_IN_VIEW = """() => Array.from(document.querySelectorAll(".table-wrap > table"))
  .filter(t => t.tBodies[0] && t.tBodies[0].rows.length >= 30)
  .map(t => {
    const rows = t.tBodies[0].rows;
    rows[Math.floor(rows.length / 2)].scrollIntoView({block: "center"});
    const th = t.tHead.rows[0].cells[1];
    const box = th.getBoundingClientRect();
    const hit = document.elementFromPoint(box.left + 4, box.top + box.height / 2);
    return [t.className, box.top >= 0 && box.bottom <= innerHeight && th.contains(hit)];
  })"""


@pytest.mark.parametrize("kind", ["jobs", "tasks"])
def test_headers_stay_in_view_in_a_long_table(site: str, phone: Any, kind: str) -> None:
    phone.goto(site + PAGES[kind])
    seen = phone.evaluate(_HEAD_IN_VIEW)
    assert seen and all(ok for _, ok in seen), seen


def test_failed_attempts_read_as_rows_with_the_error_below(site: str, phone: Any) -> None:
    phone.goto(site + PAGES["stage"])
    rows = phone.evaluate("""() => Array.from(
        document.querySelectorAll(".failure-box tbody tr:not(.detail)"),
        r => r.getBoundingClientRect().height)""")
    errors = phone.evaluate("""() => Array.from(
        document.querySelectorAll(".failure-box tr.detail pre"), p => {
          const box = p.getBoundingClientRect();
          return [box.left, box.right, box.width];
        })""")
    assert rows and len(errors) == len(rows)
    assert max(rows) <= MAX_FAILURE_ROW_PX, rows
    for left, right, width in errors:
        assert width >= MIN_ERROR_WIDTH_PX and left >= 0 and right <= 375, (left, right)


def test_jobs_list_does_not_move_when_its_script_runs(site: str, browser: Any) -> None:
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.add_init_script("""window.__shift = 0;
      new PerformanceObserver(l => l.getEntries().forEach(e => { window.__shift += e.value;
        (window.__shifts = window.__shifts || []).push(e.sources.map(s => s.node && s.node.outerHTML.slice(0, 80))); }))
        .observe({type: "layout-shift", buffered: true});""")
    page.goto(site + PAGES["jobs"], wait_until="load")
    page.locator(".table-filter input").wait_for()
    page.wait_for_timeout(300)
    assert page.evaluate("window.__shift") == 0, page.evaluate("window.__shifts")
    context.close()


def test_timeline_bar_tips_by_tap_and_keyboard(site: str, browser: Any) -> None:
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    page.goto(site + PAGES["job"])
    detail = page.locator(".tl-detail")
    assert detail.inner_text() == ""
    bar = page.locator("svg.timeline rect.tl-bar:not(.failed)").first
    bar.scroll_into_view_if_needed()
    bar.tap()
    assert detail.inner_text() == bar.locator("title").text_content()
    # The keyboard reaches the failed bars (after the skip link), and focus shows the tip too.
    page.goto(site + PAGES["job"])
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    failed = page.locator("svg.timeline rect.tl-bar.failed")
    assert failed.count() > 0
    assert failed.evaluate_all("bars => bars.every(b => b.tabIndex === 0)")
    failed.first.focus()
    assert detail.inner_text().startswith("Task ")
    assert "Failed" in detail.inner_text()
    context.close()


def test_pager_landmarks_have_unique_names(site: str, phone: Any) -> None:
    for kind in ("jobs", "tasks"):
        phone.goto(site + PAGES[kind])
        labels = phone.locator("nav").evaluate_all("navs => navs.map(n => n.ariaLabel)")
        assert labels.count("Site") == 1 and len(labels) >= 3
        assert len(set(labels)) == len(labels), labels


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("width", [375, 1400])
def test_axe_finds_no_violations(site: str, browser: Any, width: int, scheme: str) -> None:
    context = browser.new_context(
        viewport={"width": width, "height": 800}, color_scheme=scheme, bypass_csp=True
    )
    page = context.new_page()
    found = {}
    for kind, path in PAGES.items():
        if kind == "tasks":
            continue  # the stage page's template: its 1,000 rows only cost time here
        page.goto(site + path)
        page.add_script_tag(path=str(AXE))
        result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        found[kind] = [
            (v["id"], [n["target"] for n in v["nodes"]][:3]) for v in result["violations"]
        ]
    context.close()
    assert all(v == [] for v in found.values()), json.dumps(found, indent=1)
