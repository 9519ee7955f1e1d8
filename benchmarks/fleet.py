"""Measure the fleet verdict both ways on seeded fleets, and what pooling costs.

    PYTHONPATH=$PWD python benchmarks/fleet.py [--fleets 100]

Prints how often a node 1.5x slow in 10 jobs is found with a window covering its slow
period, how often a healthy, busy or few-task executor is called slow or failing, what the
evidence costs a job in the map step, and what judging 1,000 executors' cells costs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sitegen.diagnose.diagnosis import diagnose
from sitegen.diagnose.executors import comparisons
from sitegen.diagnose.fleet import HEALTHY, SLOW, Cell, evidence, judge
from sitegen.diagnose.stage_findings import stage_times
from tests.helpers.noisy import fleet
from tests.test_fleet import judged


def main() -> None:
    """Run the measures."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--fleets", type=int, default=100)
    fleets = parser.parse_args().fleets
    found = covered = wrong = judged_count = 0
    for seed in range(fleets):
        jobs = fleet(1_000 + seed, jobs=24, slow=(8, 18), factor=1.5)
        verdicts = judged(jobs)
        node = verdicts.pop("node-00")
        found += node.verdict == SLOW
        w = node.window
        covered += w is not None and w[0] <= jobs[8].start_ms and jobs[17].start_ms < w[1]
        for e in verdicts.values():
            judged_count += 1
            wrong += e.verdict != HEALTHY
        for e in judged(fleet(5_000 + seed, jobs=30)).values():
            judged_count += 1
            wrong += e.verdict != HEALTHY
    print(f"slow node found: {found}/{fleets}, window covering its slow jobs: {covered}/{fleets}")
    print(f"healthy, busy, few-task executors called slow or failing: {wrong}/{judged_count}")
    jobs = fleet(7, jobs=200)
    began = time.perf_counter()
    for job in jobs:
        stages = job.facts.stages
        evidence(comparisons([stage_times(s, e) for s, e in stages]), stages)
    per_job = (time.perf_counter() - began) / len(jobs) * 1_000
    print(f"evidence of a job (comparisons made again, an upper bound): {per_job:.3f} ms")
    began = time.perf_counter()
    for job in jobs[:50]:
        diagnose(job.facts)
    print(f"(a whole diagnosis of such a job: {(time.perf_counter() - began) / 50 * 1_000:.2f} ms)")
    cells = [Cell(h * 3_600_000, 3, 60, 0, 24, 1.0, 0.1, 100.0, 0, 0) for h in range(24 * 30)]
    began = time.perf_counter()
    for n in range(1_000):
        judge(f"e{n}", 0, 1, cells)
    print(f"judging 1,000 executors of 720 hours each: {time.perf_counter() - began:.2f} s")


if __name__ == "__main__":
    main()
