"""The fleet verdict, both ways, on seeded fleets of simulated jobs (diagnose/fleet.py)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.diagnose import gate
from sitegen.diagnose import thresholds as th
from sitegen.diagnose.diagnosis import diagnose
from sitegen.diagnose.executors import Comparison
from sitegen.diagnose.fleet import (
    _LOG_CLIP,
    FAILING,
    HEALTHY,
    SLOW,
    Cell,
    FleetExecutor,
    evidence,
    judge,
    pool,
)
from sitegen.examples.generator import BASE_TIME_MS, JobSpec, write_log
from sitegen.model import ExecutorEvidence, ExecutorStats, JobSummary, is_failed
from tests.helpers.logs import failed_task_end, job_lines, write
from tests.helpers.noisy import FleetJob, Plant, Shape, fleet, simulate
from tests.test_lifecycle import state_rows

EXAMPLES = Path(__file__).resolve().parent.parent / "sitegen" / "examples" / "logs"


def judged(jobs: list[FleetJob]) -> dict[str, FleetExecutor]:
    """Return each executor's verdict over a simulated fleet, as ``sitegen check`` pools it."""
    rows = []
    for job in jobs:
        stats: dict[str, ExecutorStats] = {}
        for end in job.facts.tasks:
            s = stats.setdefault(end.executor_id, ExecutorStats())
            s.tasks += 1
            s.failed += is_failed(end.status)
        rows.append((job.start_ms, stats, diagnose(job.facts).evidence))
    return {e.executor_id: e for e in pool(rows)}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_node_slow_in_ten_jobs_is_found_over_its_slow_period(seed: int) -> None:
    jobs = fleet(seed, jobs=24, slow=(8, 18), factor=1.5)
    verdicts = judged(jobs)
    node = verdicts["node-00"]
    assert node.verdict == SLOW, node
    assert node.window is not None
    # Its window covers the jobs it was slow in (the hours they started in).
    assert node.window[0] <= jobs[8].start_ms and jobs[17].start_ms < node.window[1]
    assert node.window_ratio >= 1.3
    others = {k: v.verdict for k, v in verdicts.items() if k != "node-00"}
    assert set(others.values()) == {HEALTHY}, others


@pytest.mark.parametrize("seed", [11, 12, 13, 14])
def test_healthy_busy_and_few_task_executors_are_healthy(seed: int) -> None:
    verdicts = judged(fleet(seed, jobs=30))
    assert {"busy", "few"} <= verdicts.keys()
    assert verdicts["busy"].attempts > verdicts["node-01"].attempts
    assert Counter(v.verdict for v in verdicts.values()) == {HEALTHY: len(verdicts)}


def cell(at: int, jobs: int = 1, tasks: int = 10, **sums: float) -> Cell:
    """Return an hour's cell with the given sums (zero otherwise)."""
    base = dict(failed=0, compared=0, z_sum=0.0, log_sum=0.0, excess_ms=0.0, own_failed=0)
    base.update(sums)
    failing = 1 if base["own_failed"] else 0
    return Cell(at, jobs, tasks, *(base[k] for k in base), failing)  # type: ignore[arg-type]


def test_own_failures_in_a_stretch_make_a_node_failing() -> None:
    hour = 3_600_000
    cells = [cell(n * hour, compared=10, z_sum=0.5, log_sum=0.1) for n in range(10)]
    cells[4:7] = [cell(n * hour, failed=3, own_failed=3) for n in range(4, 7)]
    verdict = judge("n", 0, 9 * hour, cells)
    assert verdict.verdict == FAILING
    assert verdict.window == (4 * hour, 7 * hour)


def test_failures_shared_with_others_are_the_querys() -> None:
    hour = 3_600_000
    # Failed attempts, none its own: every other executor of their stages failed too.
    cells = [cell(n * hour, failed=5, compared=10) for n in range(10)]
    assert judge("n", 0, 9 * hour, cells).verdict == HEALTHY


def test_a_build_writes_fleet_json_and_retention_removes_a_jobs_evidence(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    shutil.copytree(EXAMPLES, logs)
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    body = json.loads((site / "fleet.json").read_text())
    # One scheduler: the one log dir the bundled logs came from (they name none).
    assert [s["scheduler"] for s in body["schedulers"]] == ["logs"]
    executors = {e["executor_id"]: e for e in body["executors"]}
    assert executors, body
    for e in executors.values():
        assert e["verdict"] in (HEALTHY, SLOW, FAILING)
        assert e["first_seen"] <= e["last_seen"]
        assert (e["window"] is None) == (e["verdict"] == HEALTHY)
    page = (site / "executors" / "index.html").read_text()
    assert 'class="fleet"' in page and "fleet.json" in page
    # The evidence the state pools equals the executor rows' sums, and goes with a log.
    before = state_rows(site, "SELECT sum(jobs), sum(tasks) FROM executor_hour")
    assert before == state_rows(
        site, "SELECT count(*), sum(tasks) FROM executor WHERE published = 1"
    )
    ((key,),) = state_rows(site, "SELECT key FROM executor WHERE published = 1 LIMIT 1")
    gone = next(p for p in logs.iterdir() if str(key).endswith(p.name))
    gone.unlink()
    build(BuildOptions(logs, site))
    after = state_rows(site, "SELECT sum(jobs), sum(tasks) FROM executor_hour")
    assert after == state_rows(
        site, "SELECT count(*), sum(tasks) FROM executor WHERE published = 1"
    )
    assert after[0][0] < before[0][0]
    totals = {
        e["executor_id"]: e["attempts"]
        for e in json.loads((site / "fleet.json").read_text())["executors"]
    }
    assert sum(totals.values()) == after[0][1]
    # What the state's sums make after a job went is what a full build of the rest makes.
    build(BuildOptions(logs, tmp_path / "fresh"))
    assert (site / "fleet.json").read_bytes() == (tmp_path / "fresh" / "fleet.json").read_bytes()


def test_check_fail_on_fleet_names_the_slow_node_in_its_newest_job() -> None:
    jobs = fleet(2, jobs=24, slow=(8, 18), factor=1.5)
    summaries = []
    for n, job in enumerate(jobs):
        stats: dict[str, ExecutorStats] = {}
        for end in job.facts.tasks:
            stats.setdefault(end.executor_id, ExecutorStats()).tasks += 1
        summary = JobSummary(
            f"job-{n}", "q", "Successful", "Successful", job.start_ms, job.start_ms + 1,
            1, 1, 100, job.start_ms, job.start_ms, job.start_ms + 1, f"job-{n}.eventlog",
        )  # fmt: skip
        summary.executors = stats
        summary.evidence = diagnose(job.facts).evidence
        summaries.append(summary)
    assert gate.parse_kinds("fleet") == {gate.FLEET}
    reasons = [r for r in gate.reasons(summaries, frozenset({gate.FLEET})) if r.kind == gate.FLEET]
    assert [r.why.split(":")[0] for r in reasons] == ["executor node-00"]
    assert reasons[0].job.job_id == "job-17"
    assert gate.fleet_reasons(summaries[:8]) == []


def test_a_stages_failures_are_the_nodes_only_when_no_other_executor_failed() -> None:
    shape = Shape(
        sigma=0.3, executors=4, slots=1, tasks=[16, 16], medians=[400, 600], edges=[(1, 2)]
    )
    # Every task of stage 1 failed once, on whichever executor ran it: the query's.
    shared = simulate(shape, 5, Plant("failed-attempts", stage=1, count=16)).facts
    assert len({e.executor_id for e in shared.tasks if is_failed(e.status)}) > 1
    assert all(e.own_failed == 0 for e in diagnose(shared).evidence.values())
    # One failed attempt: only its executor failed in that stage, so it is its own.
    alone = simulate(shape, 5, Plant("failed-attempts", stage=1, count=1)).facts
    (failed,) = [e for e in alone.tasks if is_failed(e.status)]
    own = {k: v.own_failed for k, v in diagnose(alone).evidence.items() if v.own_failed}
    assert own == {failed.executor_id: 1}


def test_a_built_fleet_finds_the_node_that_went_bad_for_a_window(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    hour = 3_600_000
    for n in range(24):
        bad = 8 <= n < 18
        spec = JobSpec(
            f"fleet-{n:02d}",
            "fleet-q",
            stages=3,
            tasks_per_stage=12,
            executors=4,
            start_ms=BASE_TIME_MS + n * hour,
            stage1_straggler=False,
            slow_executor="executor-2" if bad else None,
        )
        write_log(logs, spec, seed=n)
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    found = {
        e["executor_id"]: e for e in json.loads((site / "fleet.json").read_text())["executors"]
    }
    node = found.pop("executor-2")
    assert node["verdict"] == SLOW, node
    window = node["window"]
    assert window["start"] <= BASE_TIME_MS + 8 * hour and BASE_TIME_MS + 18 * hour <= window["end"]
    assert {e["verdict"] for e in found.values()} == {HEALTHY}, found
    page = (site / "executors" / "index.html").read_text()
    assert "<code>executor-2</code></a>: slow from" in page


def test_an_executors_failed_attempts_show_their_errors_and_go_with_their_job(
    tmp_path: Path,
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    oom = "Out of memory allocating {} bytes <script>alert(1)</script>"

    def job(job_id: str, errors: list[str], day: int) -> None:
        start = BASE_TIME_MS + day * 86_400_000
        lines = job_lines(job_id, "etl", start_ms=start, tasks_per_stage=3)
        failed = [
            failed_task_end(1, n, "executor-9", text, (start + 10, start + 11, start + 12))
            for n, text in enumerate(errors)
        ]
        write(logs / f"{job_id}.eventlog", [*lines[:-1], *failed, lines[-1]])

    job("first", [oom.format(1024), oom.format(77), oom.format(5)], 0)
    job("second", [oom.format(9), oom.format(12), "Shuffle fetch failed from 10.0.0.5"], 1)
    site = tmp_path / "site"
    build(BuildOptions(logs, site))

    def errors() -> list[tuple[str, int, int]]:
        body = json.loads((site / "fleet.json").read_text())
        (bad,) = [e for e in body["executors"] if e["executor_id"] == "executor-9"]
        return [(x["example"], x["attempts"], x["jobs"]) for x in bad["errors"]]

    found = errors()
    # Masked, the texts of both jobs' memory errors are one: 5 attempts in 2 jobs, first.
    assert [(n, j) for _, n, j in found] == [(5, 2), (1, 1)]
    assert found[0][0] in (oom.format(1024), oom.format(9))
    assert found[1][0] == "Shuffle fetch failed from 10.0.0.5"
    page = (site / "executors" / "index.html").read_text()
    assert "What its failed attempts ended with" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert" not in page
    # A job gone takes its attempts with it; the sums kept equal a full build of the rest.
    (logs / "second.eventlog").unlink()
    build(BuildOptions(logs, site))
    assert [(n, j) for _, n, j in errors()] == [(3, 1)]
    build(BuildOptions(logs, tmp_path / "fresh"))
    assert (site / "fleet.json").read_bytes() == (tmp_path / "fresh" / "fleet.json").read_bytes()


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.integers(min_value=0, max_value=10**7), min_size=0, max_size=12),
        min_size=1,
        max_size=6,
    ),
    st.floats(min_value=1.0, max_value=1e6),
    st.floats(min_value=1e-3, max_value=5.0),
)
def test_evidence_sums_each_comparison_clipped_and_weighed(
    tooks: list[list[int]], theirs: float, sigma: float
) -> None:
    # The sums as the docstring states them, comparison by comparison: each attempt's score
    # clipped, a stage's attempts weighing FLEET_STAGE_ATTEMPTS at most (the one-attempt
    # case is summed without calls: the same floats, bit for bit).
    seen = {"e": [Comparison("1", 1, theirs, sigma, took) for took in tooks]}
    found = evidence(seen, [])["e"]
    compared, z_sum, log_sum, excess = 0, 0.0, 0.0, 0.0
    cap, clip = th.FLEET_STAGE_ATTEMPTS, th.FLEET_CLIP_Z
    for c in seen["e"]:
        ratios, units, extra = c.scores
        if ratios:
            weight = min(len(ratios), cap) / len(ratios)
            compared += min(len(ratios), cap)
            z_sum += weight * sum(min(clip, max(-clip, u)) for u in units)
            log_sum += weight * sum(min(_LOG_CLIP, max(-_LOG_CLIP, r)) for r in ratios)
            excess += sum(extra)
    assert found == ExecutorEvidence(compared, z_sum, log_sum, round(excess), 0)
