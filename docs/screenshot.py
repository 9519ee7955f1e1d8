"""Retake the README's screenshots of a job page with headless Chromium.

Run ``python docs/screenshot.py``: it builds the examples into a temporary directory and
writes ``docs/job-page.png`` (a desktop) and ``docs/job-page-phone.png`` (a phone, 375 px).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from sitegen.builder.pipeline import BuildOptions, build
from sitegen.examples import EXAMPLE_LOG_DIR

JOB = "Ca05RFR"  # the failed example job: shows the failure box, DAG, stages and timeline
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def main() -> None:
    """Build the example site and photograph one job page."""
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        build(BuildOptions(log_dirs=EXAMPLE_LOG_DIR, output=site, workers=1))
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
            browser.close()


if __name__ == "__main__":
    main()
