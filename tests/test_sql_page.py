"""The query page (sql/) in a real headless Chromium, served by nginx with sitegen's config.

The engine is the bundled local copy (``npm ci && npm run engine``, then ``--sql-engine``),
and every request outside the site is refused: the page must answer with no network. Its
answers are checked against pyarrow's reading of the same Parquet files.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.render import sqlpage, urls
from tests.conftest import IN_CI, require, require_module
from tests.helpers import sqldata
from tests.helpers.servers import get, http_server, nginx
from tests.helpers.sitecheck import html_pages

ROOT = Path(__file__).resolve().parent.parent
ENGINE = Path(os.environ.get("SITEGEN_SQL_ENGINE", ROOT / "sql-engine"))
AXE = Path(__file__).parent / "vendor" / "axe.min.js"
# A query's end on the page: its row count and time, or the failure.
DONE = re.compile(r"( in [0-9.]+ s)|(^The query failed)")
WAIT_MS = 90_000
EXECUTORS = "Executors that failed the most task attempts"
P95 = "The 95th percentile task duration per stage of one job name"

# A real Chromium loading an 18 MB engine a few times: about 30 s for the module.
pytestmark = pytest.mark.slow


def engine_dir() -> Path:
    """Return the engine made by ``npm run engine``; skip without it locally, fail in CI."""
    missing = [name for name in sqlpage.ENGINE_FILES if not (ENGINE / name).is_file()]
    if missing:
        message = f"{ENGINE} has no {missing[0]}: run `{sqlpage.MAKE_ENGINE}` (CI does)"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    return ENGINE


def built(root: Path, name: str, **options: Any) -> Path:
    """Build the example logs into ``root/name``, with SQL tables unless told otherwise."""
    site = root / name / "site"
    build(BuildOptions(log_dirs=EXAMPLE_LOG_DIR, output=site, workers=1, **options))
    # The page's answers are checked against the tables this build wrote (tests/helpers/sqldata.py).
    assert (site / urls.DATA_MANIFEST).is_file() == options.get("data", True)
    return site


@dataclass
class Sites:
    local: Path  # the engine copied in (--sql-engine), tables published
    cdn: Path  # the engine from the CDN
    none: Path  # no tables (--no-data)


@pytest.fixture(scope="module")
def sites(tmp_path_factory: pytest.TempPathFactory) -> Sites:
    require_module("pyarrow", "sql")
    engine = engine_dir()
    root = tmp_path_factory.mktemp("sql")
    return Sites(
        local=built(root, "local", sql_engine=engine, data=True),
        cdn=built(root, "cdn", data=True),
        none=built(root, "none", sql_engine=engine, data=False),
    )


@pytest.fixture(scope="module")
def served(sites: Sites, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The site with the local engine, at the root of a real nginx with sitegen's config."""
    with nginx(require("nginx"), sites.local, tmp_path_factory.mktemp("nginx")) as port:
        yield f"http://127.0.0.1:{port}/"


@dataclass
class Tab:
    """A page whose every request outside its site is refused, and what went wrong on it."""

    page: Any
    context: Any
    blocked: list[str] = field(default_factory=list)
    requested: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def clean(self) -> None:
        assert self.blocked == []
        assert self.problems == []


@contextlib.contextmanager
def tab(
    browser: Any, site: str, allowed: re.Pattern[str] | None = None, **context_options: Any
) -> Iterator[Tab]:
    """Open a tab that may reach ``site`` (a URL prefix) and nothing else.

    ``allowed``: console messages that are expected (python -m http.server's full reads).
    """
    context = browser.new_context(viewport={"width": 1280, "height": 900}, **context_options)
    t = Tab(context.new_page(), context)

    def route(r: Any) -> None:
        url = r.request.url
        t.requested.append(url)
        if url.startswith(site):
            r.continue_()
        else:
            t.blocked.append(url)
            r.abort()

    context.route("**/*", route)

    def console(m: Any) -> None:
        if m.type in ("error", "warning") and not (allowed and allowed.search(m.text)):
            t.problems.append(f"console {m.type}: {m.text}")

    t.page.on("console", console)
    t.page.on("pageerror", lambda e: t.problems.append(f"page error: {e}"))
    t.page.on(
        "response",
        lambda r: t.problems.append(f"HTTP {r.status}: {r.url}") if r.status >= 400 else None,
    )
    try:
        yield t
    finally:
        context.close()


def run(page: Any, sql: str | None = None, example: str | None = None) -> None:
    """Run a query (typed, or an example's button) and wait for its rows or its failure."""
    from playwright.sync_api import expect

    if example is not None:
        page.get_by_role("button", name=example).click()
    else:
        page.locator("#sql-text").fill(sql or "")
        page.locator("#sql-run").click()
    expect(page.locator("#sql-status")).to_have_text(DONE, timeout=WAIT_MS)


def result(page: Any) -> tuple[list[str], list[list[str]]]:
    """Return the results table's header and rows, as the page shows them."""
    head = page.locator("#sql-table thead th").all_inner_texts()
    rows = page.locator("#sql-table tbody tr").evaluate_all(
        "rows => rows.map(r => Array.from(r.cells, c => c.textContent))"
    )
    return head, rows


def same(shown: list[list[str]], expected: list[list[Any]]) -> None:
    """Compare the page's rows with pyarrow's: numbers as numbers, null as the page says."""
    assert len(shown) == len(expected), (shown, expected)
    for got, want in zip(shown, expected, strict=True):
        assert len(got) == len(want)
        for text, value in zip(got, want, strict=True):
            if value is None:
                assert text == "null"
            elif isinstance(value, float):
                assert float(text) == pytest.approx(value, rel=1e-12), (got, want)
            else:
                assert text == str(value), (got, want)


def quantile_cont(values: list[int], q: float) -> float | None:
    """Return DuckDB's quantile_cont: linear between the two nearest ranks, nulls left out."""
    known = sorted(v for v in values if v is not None)
    if not known:
        return None
    position = (len(known) - 1) * q
    low = int(position)
    high = min(low + 1, len(known) - 1)
    return known[low] + (known[high] - known[low]) * (position - low)


def expected_executors(site: Path) -> list[list[Any]]:
    """The example "executors that failed the most task attempts", by pyarrow."""
    sums: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for row in sqldata.rows(site, "executors"):
        s = sums[row["executor_id"]]
        s[0] += row["failed_attempts"] or 0
        s[1] += row["task_attempts"] or 0
        s[2] += 1
    rows = [[e, *s] for e, s in sums.items() if s[0] > 0]
    return sorted(rows, key=lambda r: (-r[1], r[0]))[:20]


def expected_p95(site: Path) -> list[list[Any]]:
    """The example "95th percentile task duration per stage of one job name", by pyarrow."""
    jobs = sqldata.rows(site, "jobs")
    counts = Counter(j["job_name"] for j in jobs)
    chosen = min(counts, key=lambda name: (-counts[name], name))
    ids = {j["job_id"] for j in jobs if j["job_name"] == chosen}
    by_stage: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for task in sqldata.rows(site, "tasks"):
        if task["job_id"] in ids:
            by_stage[task["stage_id"]].append(task)
    return [
        [
            stage,
            len({t["job_id"] for t in tasks}),
            len(tasks),
            quantile_cont([t["duration_ms"] for t in tasks], 0.95),
        ]
        for stage, tasks in sorted(by_stage.items())
    ]


def test_examples_answer_what_pyarrow_reads_with_no_network(
    sites: Sites, served: str, browser: Any
) -> None:
    with tab(browser, served) as t:
        t.page.goto(served + "sql/index.html")
        run(t.page, example=EXECUTORS)
        head, rows = result(t.page)
        assert head == ["executor_id", "failed_attempts", "task_attempts", "jobs"]
        same(rows, expected_executors(sites.local))
        run(t.page, example=P95)
        head, rows = result(t.page)
        assert head == ["stage_id", "runs", "task_attempts", "p95_duration_ms"]
        same(rows, expected_p95(sites.local))
        assert t.page.locator("#sql-error").is_hidden()
        t.clean()
    # The engine came from the site, and nothing was asked of any other host.
    engine = [u for u in t.requested if "/sql/engine/" in u]
    assert {u.rsplit("/", 1)[1] for u in engine} >= set(sqlpage.ENGINE_FILES)


def test_every_example_runs(served: str, browser: Any) -> None:
    with tab(browser, served) as t:
        t.page.goto(served + "sql/index.html")
        for example in sqlpage.EXAMPLES:
            run(t.page, example=example.title)
            assert t.page.locator("#sql-error").is_hidden(), example.title
            assert t.page.locator("#sql-text").input_value() == example.sql
        t.clean()


def test_a_header_sorts_and_the_result_copies_as_csv(served: str, browser: Any) -> None:
    with tab(browser, served) as t:
        t.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=served)
        t.page.goto(served + "sql/index.html")
        run(t.page, "SELECT executor_id, sum(task_attempts) AS n FROM executors GROUP BY 1")
        header = t.page.locator("#sql-table thead th").nth(1)
        header.get_by_role("button").click()
        assert header.get_attribute("aria-sort") == "ascending"
        numbers = [int(r[1]) for r in result(t.page)[1]]
        assert numbers == sorted(numbers)
        header.get_by_role("button").click()
        assert header.get_attribute("aria-sort") == "descending"
        _, rows = result(t.page)
        assert [int(r[1]) for r in rows] == sorted(numbers, reverse=True)
        t.page.get_by_role("button", name="Copy as CSV").click()
        from playwright.sync_api import expect

        expect(t.page.locator("#sql-status")).to_have_text(re.compile("^Copied"))
        copied = t.page.evaluate("navigator.clipboard.readText()")
        assert copied == "executor_id,n\r\n" + "".join(f"{a},{b}\r\n" for a, b in rows)
        t.clean()


def test_values_show_as_text_and_sort_by_their_type(served: str, browser: Any) -> None:
    with tab(browser, served) as t:
        t.page.goto(served + "sql/index.html")
        run(
            t.page,
            "SELECT * FROM (VALUES (1, 2.50::DECIMAL(10,2), NULL, TIMESTAMP '2026-01-02 03:04:05.678'),"
            " (2, -1.25, 'b', NULL), (3, 10.00, 'a', TIMESTAMP '2026-01-01 00:00:00')) t(n, d, s, ts)",
        )
        assert result(t.page) == (
            ["n", "d", "s", "ts"],
            [
                ["1", "2.50", "null", "2026-01-02 03:04:05.678"],
                ["2", "-1.25", "b", "null"],
                ["3", "10.00", "a", "2026-01-01 00:00:00"],
            ],
        )
        heads = t.page.locator("#sql-table thead th button")
        heads.nth(1).click()  # decimals by value, not as text
        assert [r[0] for r in result(t.page)[1]] == ["2", "1", "3"]
        heads.nth(2).click()  # text; null last
        assert [r[0] for r in result(t.page)[1]] == ["3", "2", "1"]
        heads.nth(2).click()  # the other way; null last still
        assert [r[0] for r in result(t.page)[1]] == ["2", "3", "1"]
        heads.nth(3).click()
        assert [r[0] for r in result(t.page)[1]] == ["3", "1", "2"]
        t.clean()


def test_a_malformed_query_shows_the_engines_message(served: str, browser: Any) -> None:
    with tab(browser, served) as t:
        t.page.goto(served + "sql/index.html")
        run(t.page, "SELEC job_id FROM jobs")
        error = t.page.locator("#sql-error")
        assert error.is_visible()
        assert 'syntax error at or near "SELEC"' in error.inner_text()
        run(t.page, "SELECT no_such_column FROM jobs")
        assert "no_such_column" in error.inner_text()
        # The page goes on: the next query answers, and the message goes away.
        run(t.page, "SELECT count(*) AS jobs FROM jobs")
        assert error.is_hidden()
        assert result(t.page)[0] == ["jobs"]
        t.clean()


def test_from_a_file_the_page_says_it_needs_a_web_server(sites: Sites, browser: Any) -> None:
    site = sites.local.as_uri() + "/"
    with tab(browser, site) as t:
        t.page.goto(site + "sql/index.html")
        notice = t.page.locator("#sql-file")
        assert notice.is_visible()
        assert "python -m http.server -d site" in notice.inner_text()
        assert t.page.locator("#sql-app").is_hidden()
        t.clean()
    assert not [u for u in t.requested if "/sql/engine/" in u or "/data/" in u]


def test_without_tables_the_page_says_how_to_publish_them(
    sites: Sites, browser: Any, tmp_path: Path
) -> None:
    with nginx(require("nginx"), sites.none, tmp_path / "nginx") as port:
        origin = f"http://127.0.0.1:{port}/"
        with tab(browser, origin) as t:
            t.page.goto(origin + "sql/index.html")
            notice = t.page.locator("#sql-off")
            assert notice.is_visible()
            assert "pip install 'sitegen[sql]'" in notice.inner_text()
            assert t.page.locator("#sql-app").is_hidden()
            t.clean()
    assert not (sites.none / "data").exists()
    assert not [u for u in t.requested if "/sql/engine/" in u or "/data/" in u]


def test_a_missing_manifest_says_how_to_publish_the_tables(served: str, browser: Any) -> None:
    # A site whose page was told of tables that are not there (data/ deleted, say).
    with tab(browser, served) as t:
        t.page.route("**/data/manifest.json", lambda r: r.fulfill(status=404, body="gone"))
        t.page.goto(served + "sql/index.html")
        from playwright.sync_api import expect

        expect(t.page.locator("#sql-off")).to_be_visible(timeout=WAIT_MS)
        assert t.page.locator("#sql-app").is_hidden()
        assert f"HTTP 404: {served}data/manifest.json" in t.problems
        assert all("404" in p for p in t.problems), t.problems


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_finds_no_violations(served: str, browser: Any, scheme: str) -> None:
    # Axe is injected: the page's own policy refuses any script but the site's.
    with tab(browser, served, color_scheme=scheme, bypass_csp=True) as t:
        t.page.goto(served + "sql/index.html")
        run(t.page, example=EXECUTORS)
        run(t.page, "SELEC 1")  # the error box too
        t.page.locator("#sql-tables summary").first.click()
        t.page.add_script_tag(path=str(AXE))
        found = t.page.evaluate("axe.run(document, {resultTypes: ['violations']})")
        violations = [(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in found["violations"]]
        assert violations == [], json.dumps(violations, indent=1)


def test_python_http_server_without_ranges_still_answers(
    sites: Sites, browser: Any, tmp_path: Path
) -> None:
    # python -m http.server answers a range request with the whole file and no Accept-Ranges:
    # DuckDB-Wasm then reads each file whole (and says so on the console).
    site = tmp_path / "site"
    shutil.copytree(sites.local, site)
    with http_server(site) as port:
        origin = f"http://127.0.0.1:{port}/"
        manifest = json.loads((site / urls.DATA_MANIFEST).read_text())
        first = manifest["tables"]["tasks"]["files"][0]["path"]
        assert "accept-ranges" not in get(port, f"/data/{first}").headers
        with tab(browser, origin, allowed=re.compile("fall back to full HTTP read")) as t:
            t.page.goto(origin + "sql/index.html")
            run(t.page, example=P95)
            same(result(t.page)[1], expected_p95(site))
            t.clean()


def answer(path: Path, kind: str) -> Any:
    """Return a route handler answering with a file, as a CDN would (CORS allowed)."""

    def handle(r: Any) -> None:
        r.fulfill(path=str(path), content_type=kind, headers={"Access-Control-Allow-Origin": "*"})

    return handle


def test_the_cdn_engine_loads_through_the_pages_policy(
    sites: Sites, browser: Any, tmp_path: Path
) -> None:
    # No CDN is reachable here: its URLs answer with the same files the local copy has, so
    # the page's policy (the CDN's scripts, a blob worker, wasm) and worker are what is tested.
    engine = engine_dir()
    files = {
        f"{sqlpage.CDN}/+esm": (engine / sqlpage.MODULE, "text/javascript"),
        f"{sqlpage.CDN}/dist/{sqlpage.WORKER}": (engine / sqlpage.WORKER, "text/javascript"),
        f"{sqlpage.CDN}/dist/{sqlpage.WASM}": (engine / sqlpage.WASM, "application/wasm"),
    }
    html = (sites.cdn / urls.SQL).read_text()
    assert all(url in html for url in files)
    assert not (sites.cdn / urls.SQL_ENGINE_DIR).exists()
    with nginx(require("nginx"), sites.cdn, tmp_path / "nginx") as port:
        origin = f"http://127.0.0.1:{port}/"
        with tab(browser, origin) as t:
            for url, (path, kind) in files.items():
                t.context.route(url, answer(path, kind))
            t.page.goto(origin + "sql/index.html")
            run(t.page, example=EXECUTORS)
            same(result(t.page)[1], expected_executors(sites.cdn))
            assert t.problems == []
        # Playwright's handlers answered the CDN's URLs before the catch-all refused them.
        assert t.blocked == []


def test_only_the_query_page_names_the_engine(sites: Sites) -> None:
    for page in html_pages(sites.local):
        text = page.read_text(encoding="utf-8")
        rel = page.relative_to(sites.local).as_posix()
        if rel == str(urls.SQL):
            assert "static/sql.js" in text
            continue
        assert "sql.js" not in text and "duckdb" not in text.lower(), rel
        assert "sql/index.html" in text, rel  # the navigation's link
