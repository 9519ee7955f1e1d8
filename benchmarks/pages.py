"""Measure task pages in headless Chromium: load event, first paint, blocking time, sorting.

Run:  python benchmarks/pages.py                  (5 loads at 375x800 and at 1400x1000)
      python benchmarks/pages.py --rows 100,250,1000 --runs 10 --chromium /usr/bin/chromium

For each page size (rows): builds one job whose stage has two full task pages and a bit,
with the site's page size set to that many rows, serves it with http.server and opens page
2 (a full page), each time in a fresh browser context. Prints the median of the runs: the
load event and the first contentful paint from navigation start (either may come first: the
first frame is drawn before or after the deferred script runs, whichever is ready first);
the longest frame and the blocking time up to the later of the two, so the first frame's
layout and paint count either way; and the time one click on a column header takes to sort
the rows (and to the next frame, layout and paint included), on the duration column
(numbers) and once on the executor column (text: the first text sort also builds the
script's collator). Last, the ratio of each figure to the shipped page size's
(sitegen.render.urls.TASKS_PER_PAGE), and the machine's load average: the figures swing
with it, so compare runs made at the same time.
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

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.examples.generator import JobSpec, write_log
from sitegen.render import urls

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
# Long animation frames (over 50 ms: the tasks before a frame and its style, layout and paint),
# not long tasks: Chromium's long tasks leave rendering out (they showed no long task on a page
# whose first frame took 200 ms). A frame's blocking duration is its longest task's part past
# 50 ms plus its rendering, as Lighthouse's total blocking time counts them.
OBSERVE = """
window.__frames = [];
new PerformanceObserver(list => {
  for (const e of list.getEntries()) window.__frames.push([e.startTime, e.duration, e.blockingDuration]);
}).observe({type: "long-animation-frame", buffered: true});
"""
# The first contentful paint may come after the load event: wait for it, then for a frame and
# a task, so the observer has been told of every long frame up to it.
PAINTED = """() => new Promise(done => {
  const wait = () => performance.getEntriesByName("first-contentful-paint").length
    ? requestAnimationFrame(() => setTimeout(done, 0)) : setTimeout(wait, 10);
  wait();
})"""
MEASURE_LOAD = """() => {
  const nav = performance.getEntriesByType("navigation")[0];
  const load = nav.loadEventStart;
  const fcp = performance.getEntriesByName("first-contentful-paint")[0].startTime;
  const frames = window.__frames.filter(([start]) => start < Math.max(load, fcp));
  return {
    load: load,
    fcp: fcp,
    longest: Math.max(0, ...frames.map(([, d]) => d)),
    tbt: frames.reduce((sum, [, , blocking]) => sum + blocking, 0),
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
EXECUTOR_COLUMN = 3


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
    loads, sorts, text_sorts = [], [], []
    for _ in range(runs):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        page.add_init_script(OBSERVE)
        page.goto(url, wait_until="load")
        page.evaluate(PAINTED)
        loads.append(page.evaluate(MEASURE_LOAD))
        sorts.append(page.evaluate(MEASURE_SORT, DURATION_COLUMN))
        sorts.append(page.evaluate(MEASURE_SORT, DURATION_COLUMN))  # and back, descending
        text_sorts.append(page.evaluate(MEASURE_SORT, EXECUTOR_COLUMN))
        context.close()
    assert all(r["rows"] == rows for r in loads), loads
    return {
        "load": statistics.median(r["load"] for r in loads),
        "fcp": statistics.median(r["fcp"] for r in loads),
        "longest": statistics.median(r["longest"] for r in loads),
        "tbt": statistics.median(r["tbt"] for r in loads),
        "sort": statistics.median(s["sort"] for s in sorts),
        "frame": statistics.median(s["frame"] for s in sorts),
        "text": statistics.median(s["sort"] for s in text_sorts),
    }


def _load_only(browser: Any, url: str) -> float:
    """Return one load event time of ``url`` at 375x800."""
    context = browser.new_context(viewport={"width": 375, "height": 800})
    page = context.new_page()
    page.goto(url, wait_until="load")
    load = float(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventStart"))
    context.close()
    return load


def _loadavg() -> list[str]:
    """The machine's load averages, as the figures depend on them."""
    try:
        return Path("/proc/loadavg").read_text().split()[:3]
    except OSError:
        return ["?", "?", "?"]


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
                    f"  {width}x{height}: load event {r['load']:6.0f} ms, first paint "
                    f"{r['fcp']:6.0f} ms, longest frame {r['longest']:4.0f} ms, blocking "
                    f"{r['tbt']:5.0f} ms, sort {r['sort']:4.0f} ms (to the next frame "
                    f"{r['frame']:5.0f} ms; first text sort {r['text']:4.0f} ms)"
                )
            # The floor: the site's smallest page (404) on this machine as loaded right now.
            floor = statistics.median(
                _load_only(browser, url.split("/jobs/")[0] + "/404.html") for _ in range(args.runs)
            )
            print(f"  floor: the 404 page's load event {floor:.0f} ms at 375x800")
            server.shutdown()
        browser.close()
    print("targets: load event < 300 ms, sort < 150 ms (and Lighthouse mobile >= 90)")
    print(f"runs: {args.runs} a figure; load average {' '.join(_loadavg())} (1, 5, 15 min)")
    shipped = urls.TASKS_PER_PAGE
    for rows in sizes:
        if rows != shipped and (shipped, 375) in results:
            ratios = ", ".join(
                f"{key} {results[rows, 375][key] / max(results[shipped, 375][key], 1):.1f}x"
                for key in ("load", "fcp", "frame")
            )
            print(f"{rows:,} rows vs {shipped:,} (375 px): {ratios}")


if __name__ == "__main__":
    main()
