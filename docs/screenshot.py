"""Retake the README's screenshots with headless Chromium: a job page, the fleet, the query page.

Run ``python docs/screenshot.py`` (after ``npm ci && npm run engine``, for the query page's
engine): it builds the examples into a temporary directory and writes ``docs/job-page.png``
(a desktop), ``docs/job-page-phone.png`` (a phone, 375 px), ``docs/fleet-page.png`` (the
Executors page's fleet view) and ``docs/sql-page.png`` (an example
query answered, the site served over HTTP as the page needs).
"""

from __future__ import annotations

import functools
import http.server
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from sitegen.builder.pipeline import BuildOptions, build
from sitegen.examples import EXAMPLE_LOG_DIR

JOB = "Ca05RFR"  # the failed example job: shows the failure box, DAG, stages and timeline
ENGINE = Path(__file__).parent.parent / "sql-engine"
QUERY = "Executors that failed the most task attempts"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def main() -> None:
    """Build the example site and photograph one job page."""
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        build(BuildOptions(log_dirs=EXAMPLE_LOG_DIR, output=site, workers=1, sql_engine=ENGINE))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=shutil.which("chromium"), args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto((site / "jobs" / JOB / "index.html").as_uri())
            height = page.locator("#plans").bounding_box()["y"]
            page.screenshot(
                path=str(Path(__file__).parent / "job-page.png"),
                full_page=True,
                clip={"x": 0, "y": 0, "width": 1280, "height": height},
            )
            # A phone (375 CSS px at 2x): the failure, summary and DAG, as a phone shows them.
            phone = browser.new_page(viewport={"width": 375, "height": 800}, device_scale_factor=2)
            phone.goto((site / "jobs" / JOB / "index.html").as_uri())
            height = phone.locator("#stages").bounding_box()["y"]
            phone.screenshot(
                path=str(Path(__file__).parent / "job-page-phone.png"),
                full_page=True,
                clip={"x": 0, "y": 0, "width": 375, "height": height},
            )
            _fleet_page(browser, site)
            _sql_page(browser, site)
            browser.close()


def _fleet_page(browser: Any, site: Path) -> None:
    """Photograph the Executors page's fleet view: the picture over time and the verdicts."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto((site / "executors" / "index.html").as_uri())
    box = page.locator("table.executors").bounding_box()
    page.screenshot(
        path=str(Path(__file__).parent / "fleet-page.png"),
        full_page=True,
        clip={"x": 0, "y": 0, "width": 1280, "height": box["y"] + box["height"] + 16},
    )


def _sql_page(browser: Any, site: Path) -> None:
    """Photograph the query page answering an example query (served: it needs HTTP)."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"http://127.0.0.1:{server.server_address[1]}/sql/")
        page.get_by_role("button", name=QUERY).click()
        page.locator("#sql-table tbody tr").first.wait_for(timeout=90_000)
        page.screenshot(path=str(Path(__file__).parent / "sql-page.png"), full_page=False)
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
