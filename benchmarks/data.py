"""Benchmark the SQL tables (data/): what writing them costs a build, their size, and what one
new log rewrites as the history grows.

Run:  python benchmarks/data.py --work-dir /dev/shm/sitegen-bench
      python benchmarks/data.py --scale-jobs 1000,10000,100000    (line 3 at those sizes)

Every figure comes from this one run. Line 1 alternates builds with and without data/
(``--no-data``, the baseline) and compares their CPU, median of ``--runs``; line 2 compares
the bytes of data/ with those of the logs; line 3 builds each history once, adds one log and
counts the data files the incremental build wrote.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from build import corpus, settle

from sitegen.examples.generator import write_corpus


def build(logs: Path, out: Path, *extra: str) -> tuple[float, float, dict[str, object]]:
    """Run `sitegen build`; return its wall seconds, its CPU (children too) and its summary."""
    settle()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "sitegen",
            "build",
            "--event-log-dir",
            str(logs),
            "--output",
            str(out),
            "--format",
            "json",
            *extra,
        ],
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"sitegen build failed:\n{done.stdout}{done.stderr}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu, json.loads(done.stdout)


def cpu_cost(work: Path, runs: int) -> None:
    """Line 1: the CPU of a full build with data/ against one without, alternated."""
    for name, logs in (
        ("1,000 jobs x 800 tasks", corpus(work / "corpus-1000x1x800", 1000, 1, 800)),
        ("2,000 small jobs (2 x 10)", corpus(work / "corpus-2000x2x10", 2000, 2, 10)),
    ):
        with_data, without, pairs, data_phase = [], [], [], []
        for _ in range(runs):
            out = work / "out-data"
            shutil.rmtree(out, ignore_errors=True)
            _, cpu, summary = build(logs, out, "--no-data", "--workers", "2")
            without.append(cpu)
            reduce_without = summary["phases"]["reduce"]  # type: ignore[index]
            shutil.rmtree(out, ignore_errors=True)
            _, cpu, summary = build(logs, out, "--data", "--workers", "2")
            with_data.append(cpu)
            # Each pair ran back to back: its ratio is blind to the machine's drift between pairs
            # (the same build's CPU spread 42-58 s over one run of this line).
            pairs.append(cpu / without[-1])
            data_phase.append(summary["phases"]["reduce"] - reduce_without)  # type: ignore[index]
        a, b = statistics.median(with_data), statistics.median(without)
        print(
            f"1 {name}: CPU with data/ {a:.1f} s, with --no-data {b:.1f} s: +{(a / b - 1) * 100:.1f}%"
            f"; median of the {runs} back-to-back pairs' ratios "
            f"+{(statistics.median(pairs) - 1) * 100:.1f}% (target <= 10%; pairs: "
            + ", ".join(f"{w:.1f}/{o:.1f}" for w, o in zip(with_data, without, strict=True))
            + f"; the reduce takes {statistics.median(data_phase):.2f} s more wall with data/)"
        )


def size(work: Path) -> None:
    """Line 2: the bytes of data/ against the logs' (uncompressed)."""
    logs = corpus(work / "corpus-1000x1x800", 1000, 1, 800)
    out = work / "out-data"
    shutil.rmtree(out, ignore_errors=True)
    build(logs, out, "--workers", "2")
    log_bytes = sum(p.stat().st_size for p in logs.glob("*.eventlog"))
    data = [p for p in (out / "data").rglob("*") if p.is_file()]
    data_bytes = sum(p.stat().st_size for p in data)
    by_table = {
        t.name: sum(p.stat().st_size for p in t.glob("*.parquet"))
        for t in sorted((out / "data").iterdir())
        if t.is_dir()
    }
    print(
        f"2 1,000 jobs x 800 tasks: data/ {data_bytes / 1e6:.1f} MB in {len(data)} files, the logs "
        f"{log_bytes / 1e6:.1f} MB: {data_bytes / log_bytes:.3f}x (target <= 0.5); by table "
        + ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in by_table.items())
    )


def one_new_log(work: Path, sizes: list[int]) -> None:
    """Line 3: the data files and bytes one new log makes an incremental build write."""
    for jobs in sizes:
        logs = corpus(work / f"corpus-{jobs}x2x10", jobs, 2, 10)
        out = work / f"out-scale-{jobs}"
        shutil.rmtree(out, ignore_errors=True)
        build(logs, out, "--workers", "2")
        extra = work / "extra"
        shutil.rmtree(extra, ignore_errors=True)
        write_corpus(extra, jobs=1, stages=2, tasks_per_stage=10, seed=jobs)
        new = next(extra.glob("*.eventlog"))
        added = logs / f"zz-new-{new.name}"
        before = _data_files(out)
        shutil.copy(new, added)
        try:
            seconds, _, _ = build(logs, out, "--workers", "2")
        finally:
            added.unlink()
        after = _data_files(out)
        written = [k for k, v in after.items() if before.get(k) != v]
        total = sum(len(v) for v in after.values())
        print(
            f"3 one new log at {jobs:,} small jobs: {len(written)} data files written, "
            f"{sum(len(after[k]) for k in written) / 1e3:.0f} kB, of {len(after)} files, "
            f"{total / 1e6:.1f} MB (the incremental build {seconds:.2f} s)"
        )


def _data_files(site: Path) -> dict[str, bytes]:
    """Return every file of data/ with its bytes."""
    return {
        str(p.relative_to(site)): p.read_bytes() for p in (site / "data").rglob("*") if p.is_file()
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work-dir", type=Path, default=Path(".bench"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scale-jobs", default="1000,10000", help="a comma list for line 3")
    parser.add_argument("--only", choices=["1", "2", "3"], help="run one line")
    args = parser.parse_args()
    work = args.work_dir
    work.mkdir(parents=True, exist_ok=True)
    if args.only in (None, "1"):
        cpu_cost(work, args.runs)
    if args.only in (None, "2"):
        size(work)
    if args.only in (None, "3"):
        one_new_log(work, [int(n) for n in args.scale_jobs.split(",")])


if __name__ == "__main__":
    main()
