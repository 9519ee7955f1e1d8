"""Measure the query page (sql/) in headless Chromium: time to the first answer, and the bytes.

Run:  python benchmarks/sql_page.py SITE                (3 runs)
      python benchmarks/sql_page.py SITE --runs 5 --chromium /usr/bin/chromium --nginx nginx

SITE is a built site with its tables (data/) and, for figures that do not depend on a CDN,
its own engine (sitegen build --sql-engine sql-engine). It is served by nginx with the config
`sitegen host-config nginx` prints (gzip on, so the wasm travels compressed), and no other
host resolves (a request to one fails the run). Each run opens sql/ in a fresh browser context (an empty
cache), clicks the example "The 95th percentile task duration per stage of one job name" at
once (it waits for the engine) and times its answer from the navigation's start; then the
example "Executors that failed the most task attempts" (a second query: the engine is up,
the tasks view made); then the page again in the same context (the cache warm: the engine's
files revalidated, 304) and the first query once more. For each step: the time, the requests
and bytes nginx sent (the engine's files, data/, the rest), and how many data requests were
range requests. Prints each run and the medians, and the machine's load average.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from playwright.sync_api import expect, sync_playwright

from sitegen.publish import hosting
from sitegen.render import sqlpage, urls

# Every host but the site's fails to resolve: the engine must answer with no network. (Not
# Playwright's request routing, which would turn the browser's HTTP cache off.)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-quic",
    "--disable-background-networking",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
]
P95 = sqlpage.EXAMPLES[2].title
SECOND = sqlpage.EXAMPLES[1].title
DONE = re.compile(r"( in [0-9.]+ s)|(^The query failed)")
LOG_FORMAT = '$request_method "$uri" "$http_range" $status $body_bytes_sent'
LINE = re.compile(r'^(\S+) "([^"]*)" "([^"]*)" (\d+) (\d+)$')


@dataclass
class Traffic:
    """What nginx sent during one step."""

    requests: int = 0
    engine_bytes: int = 0
    data_bytes: int = 0
    other_bytes: int = 0
    data_requests: int = 0
    range_requests: int = 0
    statuses: dict[int, int] = field(default_factory=dict)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def served(site: Path, nginx_bin: str, workdir: Path) -> Iterator[tuple[str, Path]]:
    """Serve ``site`` with sitegen's nginx config and an access log; yield its URL and log."""
    port = free_port()
    log = workdir / "access.log"
    temp = "".join(
        f"    {n}_temp_path {workdir}/{n};\n"
        for n in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    conf = workdir / "nginx.conf"
    conf.write_text(
        ("user root;\n" if os.geteuid() == 0 else "")
        + f"daemon off;\npid {workdir}/nginx.pid;\nerror_log {workdir}/error.log;\n"
        + "events { worker_connections 64; }\n"
        + f"http {{\n    log_format bench '{LOG_FORMAT}';\n    access_log {log} bench;\n{temp}"
        + hosting.nginx(site.resolve(), f"127.0.0.1:{port}")
        + "}\n"
    )
    proc = subprocess.Popen([nginx_bin, "-p", str(workdir), "-c", str(conf)])
    try:
        deadline = time.monotonic() + 10
        while True:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if time.monotonic() > deadline or proc.poll() is not None:
                raise RuntimeError("nginx did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/", log
    finally:
        proc.terminate()
        proc.wait(10)


def traffic(log: Path, start: int) -> tuple[Traffic, int]:
    """Return what the log says nginx sent from byte ``start`` on, and where it ends now."""
    time.sleep(0.05)  # nginx writes a request's line once it is sent
    text = log.read_bytes()
    t = Traffic()
    for line in text[start:].decode().splitlines():
        m = LINE.match(line)
        if not m:
            continue
        _, uri, range_header, status, sent = m.groups()
        t.requests += 1
        t.statuses[int(status)] = t.statuses.get(int(status), 0) + 1
        if uri.startswith(f"/{urls.SQL_ENGINE_DIR}/"):
            t.engine_bytes += int(sent)
        elif uri.startswith("/data/"):
            t.data_bytes += int(sent)
            t.data_requests += 1
            t.range_requests += range_header != "-"
        else:
            t.other_bytes += int(sent)
    return t, len(text)


def click(page: Any, example: str) -> float:
    """Run an example; return the seconds the page says the query took."""
    page.get_by_role("button", name=example).click()
    status = page.locator("#sql-status")
    expect(status).to_have_text(DONE, timeout=180_000)
    text = status.inner_text()
    if text.startswith("The query failed"):
        raise RuntimeError(page.locator("#sql-error").inner_text())
    return float(re.search(r" in ([0-9.]+) s", text).group(1))  # type: ignore[union-attr]


def one_run(browser: Any, url: str, log: Path) -> dict[str, tuple[float, Traffic]]:
    """Open the page cold, run two queries, open it again warm; time and count each step."""
    context = browser.new_context()
    page = context.new_page()
    outside: list[str] = []
    page.on("request", lambda r: None if r.url.startswith(url) else outside.append(r.url))
    steps: dict[str, tuple[float, Traffic]] = {}
    mark = log.stat().st_size
    t0 = time.monotonic()
    page.goto(url + "sql/index.html", wait_until="domcontentloaded")
    click(page, P95)
    first = time.monotonic() - t0
    t, mark = traffic(log, mark)
    steps["cold: open, first answer"] = (first, t)
    steps["second query"] = (click(page, SECOND), traffic(log, mark)[0])
    mark = log.stat().st_size
    t0 = time.monotonic()
    page.goto(url + "sql/index.html", wait_until="domcontentloaded")
    click(page, P95)
    steps["warm: open, first answer"] = (time.monotonic() - t0, traffic(log, mark)[0])
    context.close()
    if outside:
        raise RuntimeError(f"requests outside the site: {outside}")
    return steps


def describe(t: Traffic) -> str:
    mb = 1e6
    return (
        f"{t.requests} requests ({', '.join(f'{n}x{s}' for s, n in sorted(t.statuses.items()))}); "
        f"engine {t.engine_bytes / mb:.2f} MB, data {t.data_bytes / mb:.3f} MB in "
        f"{t.data_requests} requests ({t.range_requests} ranged), rest {t.other_bytes / mb:.3f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    args = parser.parse_args()
    if not (args.site / urls.DATA_MANIFEST).is_file():
        parser.error(f"{args.site} has no {urls.DATA_MANIFEST}: build it with its tables")
    if not (args.site / urls.sql_engine_file(sqlpage.WASM)).is_file():
        print("note: the site loads its engine from the CDN (no --sql-engine): refused here")
    results: list[dict[str, tuple[float, Traffic]]] = []
    with (
        tempfile.TemporaryDirectory() as work,
        served(args.site, args.nginx, Path(work)) as (
            url,
            log,
        ),
        sync_playwright() as p,
    ):
        browser = p.chromium.launch(executable_path=args.chromium, args=ARGS)
        for n in range(args.runs):
            steps = one_run(browser, url, log)
            results.append(steps)
            print(f"run {n + 1}:")
            for name, (seconds, t) in steps.items():
                print(f"  {name}: {seconds:.2f} s; {describe(t)}")
        browser.close()
    print(f"median of {args.runs}:")
    for name in results[0]:
        print(f"  {name}: {statistics.median(r[name][0] for r in results):.2f} s")
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
