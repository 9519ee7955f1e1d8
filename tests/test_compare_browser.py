"""The page comparing any two runs (``compare/?a=&b=``) in a real headless Chromium."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

import pytest

from tests import test_browser
from tests.test_browser import Watched

# The example site served over HTTP, and a Chromium page that fails on any error: its fixtures.
served = test_browser.served
watched = test_browser.watched

pytestmark = pytest.mark.slow

NEWEST, OLDEST = "v1w8ozD", "g7DfaPu"  # nightly-etl's newest and oldest bundled runs


def test_any_two_runs_over_http(served: tuple[str, Path], watched: Watched) -> None:
    url, _ = served
    page = watched.page
    page.goto(f"{url}compare/index.html?a={NEWEST}&b={OLDEST}")
    page.locator("#compare-result").wait_for(state="visible")
    rows = page.locator("#compare-stages tbody tr")
    assert rows.count() == 4
    first = rows.nth(0).locator("td")
    assert first.nth(0).inner_text() == "1.1 s"  # this run's stage 1, as compare.html says
    assert first.nth(2).inner_text().startswith("+")
    assert page.locator("#findings-appeared li").first.inner_text().startswith("warning regression")
    assert page.locator("#compare-runs a").nth(0).get_attribute("href") == (
        f"../jobs/{NEWEST}/index.html"
    )
    watched.clean()


def test_a_hostile_id_is_fetched_encoded_and_shown_as_text(
    served: tuple[str, Path],
    watched: Watched,
) -> None:
    url, _ = served
    page = watched.page
    hostile = "xss 100%#?"
    page.goto(f"{url}compare/index.html?a={quote(hostile, safe='')}&b={NEWEST}")
    page.locator("#compare-result").wait_for(state="visible")
    assert page.locator("#compare-runs a").nth(0).inner_text() == hostile
    assert page.locator("#compare-stages tbody tr").count() >= 2
    watched.clean()  # no dialog: nothing ran


def test_the_name_page_form_opens_the_comparison(
    served: tuple[str, Path],
    watched: Watched,
) -> None:
    url, site = served
    page = watched.page
    name_page = next(site.glob("names/nightly-etl-*/index.html")).relative_to(site)
    page.goto(url + name_page.as_posix())
    page.locator("#compare-two button").click()
    page.wait_for_load_state()
    page.locator("#compare-result").wait_for(state="visible")
    assert "a=" in page.url and "b=" in page.url
    watched.clean()


def test_from_a_file_it_says_it_needs_a_web_server(
    served: tuple[str, Path],
    watched: Watched,
) -> None:
    _, site = served
    page = watched.page
    page.goto(site.as_uri() + f"/compare/index.html?a={NEWEST}&b={OLDEST}")
    assert page.locator("#compare-file").is_visible()
    assert "needs a web server" in page.locator("#compare-file").inner_text()
    assert page.locator("#compare-result").is_hidden()
    watched.clean()


@pytest.mark.parametrize("scheme", ["http", "file"])
def test_the_job_page_links_its_built_comparison(
    served: tuple[str, Path],
    watched: Watched,
    scheme: str,
) -> None:
    url, site = served
    base = url if scheme == "http" else site.as_uri() + "/"
    page = watched.page
    page.goto(f"{base}jobs/{NEWEST}/index.html")
    page.locator("#compare-link").click()
    page.wait_for_load_state()
    assert page.locator("h1").inner_text() == "Two runs of nightly-etl"
    assert page.locator("#compare-stages tbody tr").count() == 4
    if scheme == "http":  # both runs' findings.json read: the regression appeared
        page.locator("#findings-paired").wait_for(state="visible")
        assert "regression" in page.locator("#findings-appeared").inner_text()
        assert page.locator("#compare-findings").is_hidden()
    else:  # a file may not read them: this run's list and the links stay
        assert "regression" in page.locator("#findings-now").inner_text()
        assert page.locator("#findings-paired").is_hidden()
    watched.clean()
