"""What one new log costs the schedulers' pages, as the history grows.

Run:  python benchmarks/schedulers.py                    (1,000 and 10,000 small jobs)
      python benchmarks/schedulers.py --jobs 1000,10000,100000   (adds 100,000: about 15 min)

Each size's small-job corpus (``build.py``'s, 2 stages x 10 tasks) is split over four log
dirs, one per scheduler (hard links, so no log is copied); the site is built, then one new log
is added to the first dir and the site built in place. Prints, per size, the time the reduce
spent on the schedulers' pages for that one log (``reduce_schedulers``, median of ``--runs``
logs added one after another), the jobs list rows it read (the spans it cut again), and the
files the build wrote; then how each grows between sizes. The naive baseline is the cut of the
changed scheduler's whole list (what the reduce did before it kept each scheduler's days):
its rows read and the time to read and cut them are printed beside it.
"""

from __future__ import annotations

import argparse
import itertools
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import build  # this directory's benchmark: corpora, run_build

import sitegen.builder.reduce.site as site_module
from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build as sitegen_build
from sitegen.builder.reduce.days import SchedulerScope
from sitegen.builder.state.store import open_published
from sitegen.examples.generator import BASE_TIME_MS, JobSpec, write_log
from sitegen.render.listing import archive_pages

SCHEDULERS = 4


def split(corpus: Path, dirs: Path) -> list[Path]:
    """Return four log dirs holding the corpus's logs between them (made once, hard links)."""
    parts = [dirs / f"scheduler-{k}" for k in range(SCHEDULERS)]
    marker = dirs / ".complete"
    if not marker.exists():
        shutil.rmtree(dirs, ignore_errors=True)
        for part in parts:
            part.mkdir(parents=True)
        for n, log in enumerate(sorted(corpus.glob("*.eventlog"))):
            os.link(log, parts[n % SCHEDULERS] / log.name)
        marker.touch()
    return parts


def one_size(work: Path, jobs: int, runs: int) -> dict[str, Any]:
    """Build ``jobs`` small jobs of four schedulers, then add ``runs`` logs one at a time."""
    corpus = build.corpus(work / f"corpus-{jobs}x2x10", jobs, 2, 10)
    dirs = split(corpus, work / f"schedulers-{jobs}")
    site = work / "out" / f"site-schedulers-{jobs}"
    shutil.rmtree(site, ignore_errors=True)
    options = BuildOptions(tuple(dirs), site)
    began = time.perf_counter()
    sitegen_build(options)
    full = time.perf_counter() - began
    spent: list[float] = []
    rows: list[int] = []
    files: list[int] = []
    reduce_schedulers, listed = site_module.reduce_schedulers, SchedulerScope.listed
    read = [0]

    def timed(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        try:
            return reduce_schedulers(*args, **kwargs)
        finally:
            spent.append(time.perf_counter() - started)

    def counted(self: SchedulerScope, begin: int, end: int) -> list[tuple[str, int, str]]:
        found = listed(self, begin, end)
        read[0] += len(found)
        return found

    added = []
    newest = BASE_TIME_MS + (jobs // 16 + 1) * 60_000
    site_module.reduce_schedulers = timed  # type: ignore[assignment]
    SchedulerScope.listed = counted  # type: ignore[method-assign]
    try:
        for n in range(runs):
            spec = JobSpec(f"sched-new-{n}", "tpch-q97", 2, 10, start_ms=newest + n * 60_000)
            added.append(write_log(dirs[0], spec, seed=n + 1))
            read[0] = 0
            report = sitegen_build(options)
            rows.append(read[0])
            files.append(report.files_written)
    finally:
        site_module.reduce_schedulers = reduce_schedulers  # type: ignore[assignment]
        SchedulerScope.listed = listed  # type: ignore[method-assign]
        for path in added:
            path.unlink()
    whole_rows, whole_ms = whole_cut(site, dirs[0].name)
    line = {
        "jobs": jobs,
        "full": full,
        "ms": statistics.median(spent[-runs:]) * 1000,
        "rows": statistics.median(rows),
        "files": statistics.median(files),
        "whole_rows": whole_rows,
        "whole_ms": whole_ms,
    }
    print(
        f"{jobs:,} small jobs in {SCHEDULERS} schedulers (built in {full:.1f} s): one new log, "
        f"median of {runs}: the schedulers' pages {line['ms']:.1f} ms of the reduce, "
        f"{line['rows']:.0f} rows of the changed scheduler's list read, {line['files']:.0f} "
        f"files written by the build; naive (its whole list cut again): {whole_rows:,} rows, "
        f"{whole_ms:.1f} ms to read and cut them"
    )
    sys.stdout.flush()
    return line


def whole_cut(site: Path, scheduler: str) -> tuple[int, float]:
    """Return the rows of a scheduler's whole list and the ms to read and cut them."""
    state = open_published(site)
    assert state is not None
    try:
        began = time.perf_counter()
        listed = state.scheduler_newest(scheduler, 1 << 62)
        archive_pages(listed)
        took = time.perf_counter() - began
    finally:
        state.close()
    return len(listed), took * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", default="1000,10000", help="sizes, a comma list")
    parser.add_argument("--runs", type=int, default=5, help="logs added one at a time, each size")
    parser.add_argument("--work-dir", type=Path, default=Path(".bench"))
    args = parser.parse_args()
    sizes = [int(n) for n in args.jobs.split(",")]
    lines = [one_size(args.work_dir, jobs, args.runs) for jobs in sizes]
    for small, big in itertools.pairwise(lines):
        print(
            f"growth {small['jobs']:,} -> {big['jobs']:,} jobs: the schedulers' pages "
            f"{big['ms'] / small['ms']:.2f}x, rows read {small['rows']:.0f} -> {big['rows']:.0f}, "
            f"files {small['files']:.0f} -> {big['files']:.0f}; naive rows "
            f"{big['whole_rows'] / small['whole_rows']:.1f}x, its time "
            f"{big['whole_ms'] / small['whole_ms']:.1f}x"
        )


if __name__ == "__main__":
    main()
