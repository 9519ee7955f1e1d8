"""The watcher's memory over many publishes: RSS after every 100th, on a built site.

Runs ``sitegen build --watch`` on a corpus and site that ``benchmarks/build.py --scale-only``
left (``--scale-keep-site``), renames ``--publishes`` logs into place one at a time (each
waited for until its ``/api/job/<id>`` file is published), and prints the watcher's RSS (all
its processes) after the first publish and every 100th, and the growth per publish.

    python benchmarks/watch_rss.py --jobs 10000 --publishes 1000 --work-dir .bench
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build import _tree_rss, settle, wait_published

from sitegen.examples.generator import BASE_TIME_MS, JobSpec, write_log


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=10000)
    parser.add_argument("--publishes", type=int, default=1000)
    parser.add_argument("--work-dir", type=Path, default=Path(".bench"))
    args = parser.parse_args()
    logs = args.work_dir / f"corpus-{args.jobs}x2x10"
    site = args.work_dir / "out" / f"site-scale-{args.jobs}"
    if not (site / "index.html").is_file():
        raise SystemExit(f"no site at {site}: run build.py --scale-only first")
    settle()
    cmd = [sys.executable, "-m", "sitegen", "build", "--event-log-dir", str(logs)]
    cmd += ["--output", str(site), "--watch", "--format", "json", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    added: list[Path] = []
    samples: list[tuple[int, int]] = []
    began = time.perf_counter()
    try:
        time.sleep(3)  # the first build: nothing to do, but the watcher must be watching
        for n in range(args.publishes):
            job_id = f"bench-rss-{n}"
            start = BASE_TIME_MS + 2 * 10**9 + n * 60_000
            spec = JobSpec(job_id, f"rss-{n % 7}", stages=2, tasks_per_stage=10, start_ms=start)
            staging = logs.parent / f"{job_id}.tmp"
            staging.mkdir(exist_ok=True)
            final = write_log(staging, spec, seed=n + 1)
            os.rename(final, logs / final.name)
            staging.rmdir()
            added.append(logs / final.name)
            target = site / "api" / "job" / job_id / "index.json"
            wait_published(proc, target, job_id, time.perf_counter(), step=0.005)
            if n == 0 or (n + 1) % 100 == 0:
                samples.append((n + 1, _tree_rss(proc.pid)))
                print(f"after {n + 1} publishes: RSS {samples[-1][1] / 2**20:.1f} MB", flush=True)
    finally:
        proc.terminate()
        proc.wait(60)
        for path in added:
            path.unlink()
    (_, first), (last_n, last) = samples[0], samples[-1]
    # After the first hundred (caches filled): what each further publish adds.
    settled_n, settled = samples[1] if len(samples) > 2 else samples[0]
    per = (last - settled) / max(1, last_n - settled_n)
    print(
        f"watch RSS at {args.jobs:,} jobs over {last_n} publishes "
        f"({time.perf_counter() - began:.0f} s): {first / 2**20:.0f} MB after the first, "
        f"{settled / 2**20:.0f} MB after {settled_n}, {last / 2**20:.0f} MB after {last_n} "
        f"({per / 1024:+.1f} kB a publish since {settled_n})"
    )
    print("the logs it added are removed: a build of the site catches up")


if __name__ == "__main__":
    main()
