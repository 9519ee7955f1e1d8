"""What a full build costs in CPU: against the naive build, per small job, and by step.

Run:  python benchmarks/cpu.py                       (3 runs of each; about 6 minutes)
      python benchmarks/cpu.py --runs 1 --jobs 100 --small-jobs 200   (a quick smoke run)

Prints, each figure the median of ``--runs`` runs in this one process's run:
- A: a full build of ``--jobs`` jobs x 4 stages x 200 tasks against the naive stdlib build of
  the same logs (``build.py``'s line 1), the two alternated so that a drift of the machine's
  speed hits both;
- B: a full build of ``--small-jobs`` small jobs (2 stages x 10 tasks): CPU per job, user and
  kernel of every process (the build's workers too), and the wall time;
- C: the map step of a small job in one process, each log peeked at first as a build does
  (the peek passes its bytes and digest on to the map step, where the code does), its CPU
  split by step (user and kernel, each step timed around its calls; nested steps are counted
  once, in the innermost).

Run it on an otherwise idle machine: a 2-process build suffers more from other load than the
1-process naive one. ``PYTHONPATH=<another checkout>`` measures that checkout's sitegen with
the same script (how the "before" figures of docs/performance.md were made).

``--against <another checkout>`` prints instead, for the same two corpora:
- D: this checkout's build against that one's, alternated pair by pair (``--pairs``, which
  of the two runs first alternating too), each build's CPU (every process of it, user and
  kernel) and their ratio, the median of the pairs':
  the pipeline issue's "no more CPU a job than the code before". ``--work-dir /dev/shm/cpu``
  keeps a loaded disk's kernel time out of it.
"""

from __future__ import annotations

import argparse
import collections
import compileall
import resource
import shutil
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import build  # this directory's benchmark: corpora, the naive build, run_build

import sitegen
import sitegen.builder.contexts.peek as peek_module
import sitegen.builder.map.jobs as mapstep
import sitegen.diagnose.analysis as analysis_module
import sitegen.publish.writer as writer_module
import sitegen.render.pages as pages_module
from sitegen.builder.map.jobs import process_log, root_parents
from sitegen.eventlog.discover import discover
from sitegen.layout import PARTS_DIR
from sitegen.render.pages import PageRenderer

# The map step's steps, by the module attribute each is called through.
STEPS: list[tuple[Any, str, str]] = [
    (peek_module, "peek", "peek (its bytes, digest, JobEnd: before the map)"),
    (mapstep, "hold_log", "read the log's bytes (none: the peek's)"),
    (mapstep, "hold", "read the log's bytes (none: the peek's)"),
    (mapstep, "read_log", "read the log"),
    (mapstep, "judge", "classify it"),
    (mapstep, "log_digest", "hash it"),
    (mapstep, "analyse", "analyse (summary, DAG, stages)"),
    (analysis_module, "diagnose", "findings, their costs, the what-if"),
    (mapstep, "claim", "claim the job's directories"),
    (pages_module, "job_page", "job page's view (DAG, timeline)"),
    (pages_module, "trace", "trace.json"),
    (pages_module, "findings_json", "findings.json"),
    (pages_module, "stage_pictures", "stage pictures"),
    (pages_module.TaskTable, "rows", "task rows"),
    (pages_module.PageRenderer, "render", "render pages (Jinja)"),
    (mapstep.api, "job_files", "/api files"),
    (writer_module.SiteWriter, "write_chunks", "write files (gzip of the raw log too)"),
]


def cpu_seconds() -> float:
    """Return this process's user plus kernel CPU seconds so far."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


class StepClock:
    """Time the steps of the map step around their calls, each call's nested steps apart."""

    def __init__(self) -> None:
        self.spent: collections.Counter[str] = collections.Counter()
        self._inner: list[float] = []

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Return ``fn`` timed as step ``name``."""

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = cpu_seconds()
            self._inner.append(0.0)
            try:
                return fn(*args, **kwargs)
            finally:
                inner = self._inner.pop()
                took = cpu_seconds() - started
                self.spent[name] += took - inner
                if self._inner:
                    self._inner[-1] += took

        return timed


def step_split(log_dir: Path, out: Path, count: int, runs: int) -> tuple[float, dict[str, float]]:
    """Return a small job's map-step CPU (ms) in one process and its split by step (ms)."""
    logs = discover(log_dir)[:count]
    pages = PageRenderer()
    pages.warm()
    step = build.map_context(pages)
    clock = StepClock()
    # An older checkout (PYTHONPATH) names the claim step with an underscore, and holds a
    # log with ``hold``, not ``hold_log``.
    steps = [(o, a if hasattr(o, a) else f"_{a}", label) for o, a, label in STEPS]
    steps = [(o, a, label) for o, a, label in steps if hasattr(o, a)]
    keep_here = getattr(peek_module, "keep_here", None)
    if keep_here is not None:
        keep_here()
    originals = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in steps]
    for (owner, attr, label), (_, _, fn) in zip(steps, originals, strict=True):
        setattr(owner, attr, clock.wrap(label, fn))
    results = []
    try:
        for _ in range(runs):
            shutil.rmtree(out, ignore_errors=True)
            for parent in root_parents(pages):
                (out / parent).mkdir(parents=True)
            clock.spent.clear()
            started = cpu_seconds()
            for log in logs:
                peek_module.peek(step.limits, log)  # every log is peeked before any is mapped
            for n, log in enumerate(logs):
                process_log(log, out, out / PARTS_DIR / str(n), step)
            total = cpu_seconds() - started
            results.append((total, dict(clock.spent)))
    finally:
        for owner, attr, fn in originals:
            setattr(owner, attr, fn)
        shutil.rmtree(out, ignore_errors=True)
    total, spent = sorted(results, key=lambda r: r[0])[len(results) // 2]
    scale = 1000 / len(logs)
    split = {label: spent.get(label, 0.0) * scale for _, _, label in steps}
    split["the rest (process_log's own work, outcome, notes)"] = total * scale - sum(split.values())
    return total * scale, split


def build_cpu(line: str) -> float:
    """Return the CPU seconds (user plus kernel) in ``run_build``'s line."""
    return float(line.split()[1])


def against(other: Path, corpora: list[tuple[str, Path, int]], out: Path, pairs: int) -> None:
    """Print line D: this checkout's full builds against ``other``'s, alternated."""
    this = Path(sitegen.__file__).parent.parent
    print(f"D this checkout ({this}) against {other}, {pairs} pairs, alternated:")
    for label, logs, jobs in corpora:
        build.floor(logs)
        mine, theirs = [], []
        for k in range(pairs):
            # Which runs first alternates too: the first build of a pair cost about 1 % more
            # CPU than the second here (2026-12-05), which had put this checkout behind.
            order = [(this, mine), (other, theirs)]
            for checkout, found in order if k % 2 == 0 else order[::-1]:
                shutil.rmtree(out, ignore_errors=True)
                _, _, line = build.run_build(logs, out, checkout=checkout)
                found.append(build_cpu(line))
        ratios = [a / b for a, b in zip(mine, theirs, strict=True)]
        print(
            f"  {label}: CPU a job {statistics.median(mine) * 1000 / jobs:.2f} ms against "
            f"{statistics.median(theirs) * 1000 / jobs:.2f} ms: {statistics.median(ratios):.3f}x "
            f"(pairs: {', '.join(f'{r:.3f}' for r in ratios)}; target <= 1.0)"
        )
    shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=1000, help="big jobs (4 x 200 tasks)")
    parser.add_argument("--small-jobs", type=int, default=2000, help="small jobs (2 x 10)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each figure (the median)")
    parser.add_argument("--split-jobs", type=int, default=400, help="small jobs in the split")
    parser.add_argument("--work-dir", type=Path, default=Path(".bench"))
    parser.add_argument("--against", type=Path, help="another checkout: print line D only")
    parser.add_argument("--pairs", type=int, default=5, help="alternated pairs of line D")
    args = parser.parse_args()
    work, runs = args.work_dir, args.runs
    compileall.compile_dir(Path(sitegen.__file__).parent, quiet=1)
    print(f"sitegen from {Path(sitegen.__file__).parent}")
    if args.against is not None:
        other = args.against.resolve()
        compileall.compile_dir(other / "sitegen", quiet=1)
        small = build.corpus(work / f"corpus-{args.small_jobs}x2x10", args.small_jobs, 2, 10)
        big = build.corpus(work / f"corpus-{args.jobs}x4x200", args.jobs, 4, 200)
        corpora = [
            (f"{args.small_jobs:,} small jobs", small, args.small_jobs),
            (f"{args.jobs:,} jobs x 800 tasks", big, args.jobs),
        ]
        against(other, corpora, work / "out" / "against", args.pairs)
        return

    big = build.corpus(work / f"corpus-{args.jobs}x4x200", args.jobs, 4, 200)
    build.floor(big)  # the page cache holds the logs for every contestant
    naive, full, cpu_big = [], [], []
    for _ in range(runs):
        shutil.rmtree(work / "out" / "naive", ignore_errors=True)
        naive.append(build.timed(build.naive, big, work / "out" / "naive"))
        shutil.rmtree(work / "out" / "site", ignore_errors=True)
        seconds, _, line = build.run_build(big, work / "out" / "site")
        full.append(seconds)
        cpu_big.append(float(line.split()[1]))
    t_naive, t_full = statistics.median(naive), statistics.median(full)
    ratios = ", ".join(f"{f / n:.2f}" for f, n in zip(full, naive, strict=True))
    print(
        f"A {args.jobs:,} jobs x 800 tasks, median of {runs}: naive {t_naive:.2f} s, "
        f"sitegen {t_full:.2f} s (CPU {statistics.median(cpu_big):.1f} s): "
        f"{t_full / t_naive:.3f}x naive (runs: {ratios}; target <= 1.1, goal 1.0)"
    )

    small = build.corpus(work / f"corpus-{args.small_jobs}x2x10", args.small_jobs, 2, 10)
    build.floor(small)
    walls, users, kernels = [], [], []
    for _ in range(runs):
        shutil.rmtree(work / "out" / "site-small", ignore_errors=True)
        seconds, _, line = build.run_build(small, work / "out" / "site-small")
        words = line.replace("(", " ").split()
        walls.append(seconds)
        users.append(float(words[words.index("user,") - 1]))
        kernels.append(float(words[words.index("kernel);") - 1]))
    per = [(u + k) * 1000 / args.small_jobs for u, k in zip(users, kernels, strict=True)]
    print(
        f"B {args.small_jobs:,} small jobs, median of {runs}: {statistics.median(per):.2f} ms of "
        f"CPU a job (user {statistics.median(users) * 1000 / args.small_jobs:.2f}, kernel "
        f"{statistics.median(kernels) * 1000 / args.small_jobs:.2f}; runs: "
        f"{', '.join(f'{p:.2f}' for p in per)}; target <= 5), wall "
        f"{statistics.median(walls):.2f} s"
    )

    total, split = step_split(small, work / "out" / "split", args.split_jobs, runs)
    print(
        f"C a small job's map step in 1 process ({args.split_jobs} logs): {total:.2f} ms, "
        "its peek included"
    )
    for label, ms in sorted(split.items(), key=lambda kv: -kv[1]):
        print(f"  {ms:6.3f} ms {ms / total:6.1%}  {label}")


if __name__ == "__main__":
    sys.exit(main())
