"""Measure task pages in headless Chromium: load event, blocking time, sorting, per page size.

Run:  python benchmarks/pages.py                  (5 loads at 375x800 and at 1400x1000)
      python benchmarks/pages.py --rows 100,250,1000 --runs 10 --chromium /usr/bin/chromium

For each page size (rows): builds one job whose stage has two full task pages and a bit,
with the site's page size set to that many rows, serves it with http.server and opens page
2 (a full page). Prints the median of the runs: the load event (from navigation start), the
longest main-thread task and the total blocking time (each long task's part past 50 ms, as
Lighthouse counts it) up to the load event, and the time one click on a column header takes
to sort the rows (and to the next frame, layout and paint included). Last, the ratio of
each figure to the shipped page size's (sitegen.render.urls.TASKS_PER_PAGE).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import tempfile
import threading
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from sitegen.builder.pipeline import BuildOptions, build
from sitegen.examples.generator import JobSpec, write_log
from sitegen.render import urls

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
# Long tasks are recorded from the start of the page (buffered), so the load is included.
OBSERVE = """
window.__long = [];
new PerformanceObserver(list => { for (const e of list.getEntries()) window.__long.push([e.startTime, e.duration]); })
  .observe({type: "longtask", buffered: true});
"""
MEASURE_LOAD = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const load = nav.loadEventStart;
  const tasks = window.__long.filter(([start]) => start < load);
  return {
    load: load,
    longest: Math.max(0, ...tasks.map(([, d]) => d)),
    tbt: tasks.reduce((sum, [, d]) => sum + Math.max(0, d - 50), 0),
    rows: document.querySelectorAll("table.tasks tbody tr").length,
  };
}"""
# A click sorts synchronously; the next frame shows the result (layout and paint included).
MEASURE_SORT = """(index) => new Promise(done => {
  const button = document.querySelectorAll("table.tasks thead th button")[index];
  const t0 = performance.now();
  button.click();
  const sorted = performance.now();
  requestAnimationFrame(() => setTimeout(() => done({sort: sorted - t0, frame: performance.now() - t0}), 0));
})"""
DURATION_COLUMN = 7


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def build_site(root: Path, rows: int) -> Path:
    """Build the benchmark site with task pages of ``rows`` rows; return its directory."""
    logs = root / "logs"
    logs.mkdir(parents=True)
    spec = JobSpec("big job", "tpch-q1", stages=1, tasks_per_stage=2 * rows + rows // 10)
    write_log(logs, spec, seed=3)
    shipped, urls.TASKS_PER_PAGE = urls.TASKS_PER_PAGE, rows
    try:
        build(BuildOptions(log_dirs=logs, output=root / "site", workers=1))
    finally:
        urls.TASKS_PER_PAGE = shipped
    return root / "site"


def measure(
    browser: Any, url: str, rows: int, width: int, height: int, runs: int
) -> dict[str, float]:
    """Load ``url`` ``runs`` times in a fresh context; return the median figures."""
    loads, sorts = [], []
    for _ in range(runs):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.add_init_script(OBSERVE)
        page.goto(url, wait_until="load")
        loads.append(page.evaluate(MEASURE_LOAD))
        sorts.append(page.evaluate(MEASURE_SORT, DURATION_COLUMN))
        sorts.append(page.evaluate(MEASURE_SORT, DURATION_COLUMN))  # and back, descending
        context.close()
    assert all(r["rows"] == rows for r in loads), loads
    return {
        "load": statistics.median(r["load"] for r in loads),
        "longest": statistics.median(r["longest"] for r in loads),
        "tbt": statistics.median(r["tbt"] for r in loads),
        "sort": statistics.median(s["sort"] for s in sorts),
        "frame": statistics.median(s["frame"] for s in sorts),
    }


def _load_only(browser: Any, url: str) -> float:
    """Return one load event time of ``url`` at 375x800."""
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.goto(url, wait_until="load")
    load = float(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventStart"))
    context.close()
    return load


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default=f"{urls.TASKS_PER_PAGE},1000",
                        help="comma-separated page sizes to compare")  # fmt: skip
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    sizes = [int(n) for n in args.rows.split(",")]
    results: dict[tuple[int, int], dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        for rows in sizes:
            site = build_site(Path(tmp) / str(rows), rows)
            handler = functools.partial(_Quiet, directory=str(site))
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            url = f"http://127.0.0.1:{server.server_address[1]}/jobs/big%20job/tasks-1/2.html"
            size = (site / "jobs/big job/tasks-1/2.html").stat().st_size
            print(f"{rows:,} rows a page: page 2 is {size:,} bytes")
            for width, height in ((375, 800), (1400, 1000)):
                r = results[rows, width] = measure(browser, url, rows, width, height, args.runs)
                print(
                    f"  {width}x{height}: load event {r['load']:6.0f} ms, longest task "
                    f"{r['longest']:4.0f} ms, TBT {r['tbt']:5.0f} ms, sort {r['sort']:4.0f} ms "
                    f"(to the next frame {r['frame']:5.0f} ms)"
                )
            # The floor: the site's smallest page (404) on this machine as loaded right now.
            floor = statistics.median(
                _load_only(browser, url.split("/jobs/")[0] + "/404.html") for _ in range(args.runs)
            )
            print(f"  floor: the 404 page's load event {floor:.0f} ms at 375x800")
            server.shutdown()
        browser.close()
    print("targets: load event < 300 ms, sort < 150 ms (and Lighthouse mobile >= 90)")
    shipped = urls.TASKS_PER_PAGE
    for rows in sizes:
        if rows != shipped and (shipped, 375) in results:
            ratios = ", ".join(
                f"{key} {results[rows, 375][key] / max(results[shipped, 375][key], 1):.1f}x"
                for key in ("load", "frame")
            )
            print(f"{rows:,} rows vs {shipped:,} (375 px): {ratios}")


if __name__ == "__main__":
    main()
