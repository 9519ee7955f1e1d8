"""Measure a 1,000-row task page in headless Chromium: load event, blocking time, sorting.

Run:  python benchmarks/pages.py                  (5 loads at 375x800 and at 1400x1000)
      python benchmarks/pages.py --runs 10 --chromium /usr/bin/chromium

Builds one job with a 2,100-task stage (its task table has pages of 1,000, 1,000 and 100
rows), serves it with http.server and opens page 2 (1,000 rows). Prints the median of the
runs: the load event (from navigation start), the longest main-thread task and the total
blocking time (the part of each long task past 50 ms, as Lighthouse counts it) up to the
load event, and the time one click on a column header takes to sort the rows.
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


def build_site(root: Path) -> Path:
    """Build the benchmark site; return its directory."""
    logs = root / "logs"
    logs.mkdir()
    write_log(logs, JobSpec("big job", "tpch-q1", stages=1, tasks_per_stage=2_100), seed=3)
    build(BuildOptions(log_dirs=logs, output=root / "site", workers=1))
    return root / "site"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        site = build_site(Path(tmp))
        handler = functools.partial(_Quiet, directory=str(site))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        url = f"http://127.0.0.1:{server.server_address[1]}/jobs/big%20job/tasks-1/2.html"
        size = (site / "jobs/big job/tasks-1/2.html").stat().st_size
        print(f"page: {url} ({size:,} bytes)")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
            for width, height in ((375, 800), (1400, 1000)):
                loads, sorts = [], []
                for _ in range(args.runs):
                    context = browser.new_context(viewport={"width": width, "height": height})
                    page = context.new_page()
                    page.add_init_script(OBSERVE)
                    page.goto(url, wait_until="load")
                    loads.append(page.evaluate(MEASURE_LOAD))
                    sorts.append(page.evaluate(MEASURE_SORT, DURATION_COLUMN))
                    sorts.append(page.evaluate(MEASURE_SORT, DURATION_COLUMN))  # descending
                    context.close()
                assert all(r["rows"] == 1_000 for r in loads)

                def med(values: list[float]) -> str:
                    return f"{statistics.median(values):6.0f} ms"

                print(
                    f"{width}x{height}: load event {med([r['load'] for r in loads])}, "
                    f"longest task {med([r['longest'] for r in loads])}, "
                    f"TBT {med([r['tbt'] for r in loads])}, "
                    f"sort {med([s['sort'] for s in sorts])} "
                    f"(to next frame {med([s['frame'] for s in sorts])})"
                )
            browser.close()
        server.shutdown()
        print("targets: load event < 300 ms, sort < 150 ms")


if __name__ == "__main__":
    main()
