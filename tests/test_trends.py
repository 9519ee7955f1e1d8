"""Recurring jobs, regressions, failure groups, insights and check --fail-on (issue 13, reduce)."""

from __future__ import annotations

import json
import random
import re
import statistics
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.builder.state.store import open_published
from sitegen.cli import cli
from sitegen.diagnose import failures, gate, insights, masking, recurring
from sitegen.diagnose.masking import mask
from sitegen.examples import generator
from sitegen.finding import Finding, FindingKind, FindingSeverity
from sitegen.model import ErrorPattern, JobSummary
from sitegen.render import urls
from tests.helpers.logs import job_lines, write
from tests.helpers.planted import Job, T, lines, uniform

DAY = 86_400_000
T0 = 1_767_225_600_000


def run(
    job_id: str,
    took: int,
    start: int,
    name: str = "q1",
    status: str = "Completed",
    failure: str | None = None,
    **kw: object,
) -> JobSummary:
    """Return a summary of one run, as the map step would make it."""
    return JobSummary(
        job_id=job_id,
        job_name=name,
        status=status,
        job_status="",
        start_time=start,
        end_time=start + took,
        num_stages=1,
        completed_stages=1,
        percent_complete=100,
        queued_at=start,
        started_at=start,
        completed_at=start + took,
        file=f"{job_id}.eventlog",
        failure=failure,
        **kw,  # type: ignore[arg-type]
    )


def runs(durations: list[int], name: str = "q1") -> list[JobSummary]:
    """Return daily runs of one name with these durations (ms), oldest first."""
    return [run(f"{name}-{n}", d, T0 + n * DAY, name) for n, d in enumerate(durations)]


# Regression -------------------------------------------------------------------------------


def test_a_run_far_slower_than_the_recent_median_regresses() -> None:
    found = recurring.regressions(runs([10_000] * 5 + [16_000]))
    assert list(found) == ["q1-5"]
    finding = found["q1-5"]
    assert (finding.kind, finding.severity, finding.value) == (
        FindingKind.REGRESSION,
        FindingSeverity.WARNING,
        1.6,
    )
    assert finding.message == (
        "This run took 16.0 s, 1.6x the median of 10.0 s over the previous 5 successful runs"
        " of “q1”; the run before it was not slower."
    )
    assert finding.impact_ms is None  # a regression has its own figures


def test_a_run_within_its_jobs_usual_spread_does_not_regress() -> None:
    # Runs that vary by ±30%: 1.5x the median is no regression for this job...
    noisy = [10_000, 13_000, 7_000, 12_500, 7_500, 10_500, 13_500, 8_000]
    assert recurring.regressions(runs([*noisy, 15_000])) == {}
    # ... but it is for a steady one, as is 4x for the noisy one.
    assert list(recurring.regressions(runs([10_000] * 8 + [15_000]))) == ["q1-8"]
    assert list(recurring.regressions(runs([*noisy, 40_000]))) == ["q1-8"]
    # Under the minimum ratio, however steady the job: 1.25x never regresses.
    assert recurring.regressions(runs([100_000] * 8 + [125_000])) == {}


def test_a_sustained_shift_is_told_from_a_spike() -> None:
    noisy = [10_000, 13_000, 7_000, 12_500, 7_500, 10_500, 13_500, 8_000]
    # Two runs in a row past 1.3x and longer than every run before: slower since the first.
    found = recurring.regressions(runs([*noisy, 18_500, 19_000]))
    assert list(found) == ["q1-9"]
    assert found["q1-9"].message.endswith(": slower since run q1-8, the last 2 runs.")
    # One spike, then back to normal: flagged as a one-off, the next run is not.
    found = recurring.regressions(runs([10_000] * 8 + [20_000, 10_000]))
    assert list(found) == ["q1-8"]
    assert found["q1-8"].message.endswith("; the run before it was not slower.")


def test_a_run_that_read_more_rows_is_more_data_not_a_slower_job() -> None:
    history = runs([10_000] * 6 + [21_000])
    for job in history:
        job.input_rows = 1_000_000
    history[-1].input_rows = 2_100_000
    finding = recurring.regressions(history)["q1-6"]
    assert finding.severity is FindingSeverity.INFO
    assert finding.message.endswith(
        " It read 2.1x the rows of the median run: more data, not a slower job."
    )
    # Rows that do not explain the time: a regression as ever.
    history[-1].input_rows = 1_100_000
    assert recurring.regressions(history)["q1-6"].severity is FindingSeverity.WARNING


def test_steady_runs_with_25_percent_noise_rarely_regress() -> None:
    """Runs within ±25% of a job's usual time: at most 1 false regression per 100 runs."""
    rng = random.Random(25)
    false = judged = 0
    for n in range(40):
        base = rng.randint(5_000, 10_000_000)
        durations = [round(base * rng.uniform(0.75, 1.25)) for _ in range(50)]
        false += len(recurring.regressions(runs(durations, name=f"q{n}")))
        judged += len(durations) - recurring.MIN_EARLIER_RUNS
    assert false <= judged / 100


@given(st.lists(st.floats(min_value=0.0, max_value=25.0, allow_nan=False), min_size=2, max_size=30))
def test_the_float_spread_is_the_exact_one_to_a_rounding(values: list[float]) -> None:
    """The judge's standard deviation in floats is ``statistics.stdev``'s, to 1e-12."""
    exact = statistics.stdev(values)
    assert abs(recurring.sample_stdev(values) - exact) <= 1e-12 * max(exact, 1e-3)


def test_trend_figures() -> None:
    history = runs([1_000, 2_000, 3_000, 4_000, 100_000])
    history.append(run("q1-f", 5, T0 + 9 * DAY, failure="x", status="Failed"))
    (trend,) = recurring.trends(history)
    assert (trend.median_ms, trend.p90_ms, trend.failures) == (3_000, 100_000, 1)
    assert trend.failure_rate == pytest.approx(1 / 6)
    assert trend.latest.job_id == "q1-f" and not trend.latest_regressed


def test_run_contexts_link_the_previous_run_and_the_previous_success() -> None:
    history = runs([1_000, 1_000, 1_000])
    history[1] = run("q1-1", 1_000, T0 + DAY, failure="x", status="Failed")
    found = recurring.trends(history + runs([5], "alone"))
    contexts = recurring.run_contexts(found, {j.job_id: j for j in history})
    # Only the runs before a run make its context: the first run (and a name's only one)
    # has none, and no run names the one after it.
    assert set(contexts) == {"q1-1", "q1-2"}
    last = contexts["q1-2"]
    assert (last.previous, last.baseline, last.baseline_ms) == ("q1-1", "q1-0", 1_000)
    assert (contexts["q1-1"].previous, contexts["q1-1"].baseline) == ("q1-0", "q1-0")


def test_name_pages_are_safe_and_distinct() -> None:
    names = ["tpch-q1", "TPCH-Q1", "../../etc", "a/b", "", "日本語", "x" * 500, "a b", "a-b"]
    pages = [urls.name_page(n) for n in names]
    assert len({str(p).lower() for p in pages}) == len(names)
    for page in pages:
        assert page.parts[0] == "names" and page.name == "index.html" and len(page.parts) == 3
        assert re.fullmatch(r"[a-z0-9-]+-[0-9a-f]{32}", page.parts[1]), page


# Failure groups ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (
            "Failed to fetch partition 3 from executor-1 at 10.0.0.5:50051",
            "Failed to fetch partition 17 from executor-12 at 192.168.1.20:7077",
        ),
        (
            "IO error: No such file: /data/spill/job-1/part-00017.arrow",
            "IO error: No such file: /mnt/disk2/spill/job-99/part-3.arrow",
        ),
        ("allocate additional 512.0 MB", "allocate additional 64 KiB"),
        ("object 0x7ffde3a1 freed", "object 0xdeadbeef freed"),
        (
            "task 3f2a9c1e-1b2c-4d5e-8f90-a1b2c3d4e5f6 lost",
            "task 00000000-0000-4000-8000-000000000000 lost",
        ),
        ("column 'l_quantity' not found", 'column "o_orderkey" not found'),
        ("job Ca05RFR failed", "job 1UXXFWX failed"),
        # Ballista job ids without a digit (about 29% of seven-character ids).
        ("job GZWmFqx failed", "job Ca05RFR failed"),
        ("shuffle of NeOQvte lost", "shuffle of aBcDeFg lost"),
        (
            "fetch from executor-3 for stage 4 task 17 partition 9",
            "fetch from executor-12 for stage 1 task 0 partition 31",
        ),
        ("read s3://bucket/a/1.parquet", "read s3://other/b.parquet"),
        ("checksum 3e9a1f0c77 mismatch", "checksum 9b8a7f6e5d mismatch"),
    ],
)
def test_masking_groups_what_varies(one: str, other: str) -> None:
    assert mask(one) == mask(other)


def test_masking_masks_the_jobs_own_id_of_any_shape() -> None:
    assert mask("output of qwertyu lost", "qwertyu") == mask("output of zxcvbnm lost", "zxcvbnm")
    assert mask("output of qwertyu lost", "qwertyu") == "output of <id> lost"
    # Words of error texts stay as they are, seven letters or not.
    assert mask("Failure: Timeout in shuffle Reading", "") == "Failure: Timeout in shuffle Reading"


def test_a_job_failure_joins_the_group_of_the_task_error_it_wraps() -> None:
    error = "IO error: disk full writing /spill/7/part-3.arrow"
    jobs = [
        run("a", 10, T0, "etl", "Failed", f"Job failed due to stage 3 failed: {error}"),
        run("b", 10, T0 + DAY, "etl", task_errors=[ErrorPattern(mask(error), 2, error)]),
    ]
    (group,) = failures.failure_groups(jobs)
    assert group.group.pattern == "IO error: disk full writing <path>"
    assert (group.group.jobs, group.failed_jobs, group.group.tasks) == (["a", "b"], 1, 2)
    assert group.group.example == f"Job failed due to stage 3 failed: {error}"


def test_masking_keeps_what_differs() -> None:
    errors = [
        "Arrow error: Divide by zero error",
        "Resources exhausted: Failed to allocate additional 1 MB for HashJoinInput",
        "Execution error: connection reset by peer",
    ]
    assert len({mask(e) for e in errors}) == 3


def test_task_error_patterns_are_bounded_and_counted() -> None:
    failed = [
        {"Failed": {"reason": "x", "error": f"error kind {'ab'[n % 2]} at {n}"}} for n in range(9)
    ]
    patterns = failures.task_error_patterns(["Successful", *failed])
    assert patterns == [
        ErrorPattern("error kind a at <n>", 5, "error kind a at 0"),
        ErrorPattern("error kind b at <n>", 4, "error kind b at 1"),
    ]
    many = [{"Failed": {"error": f"kind {chr(65 + n // 2)}{chr(65 + n % 2)} x"}} for n in range(60)]
    capped = failures.task_error_patterns(many)
    assert len(capped) == failures.MAX_TASK_PATTERNS
    assert sum(p.count for p in capped) == 60


def test_failure_groups_hold_failed_jobs_and_task_errors() -> None:
    spill = "IO error: disk full writing /spill/{}/part-{}.arrow"
    jobs = [
        run("a", 10, T0, "etl", "Failed", spill.format(1, 7)),
        run("b", 10, T0 + DAY, "etl", "Failed", spill.format(22, 3)),
        run(
            "c",
            10,
            T0 + 2 * DAY,
            "report",
            task_errors=[ErrorPattern(mask(spill.format(5, 5)), 3, spill.format(5, 5))],
        ),
        run("d", 10, T0 + 3 * DAY, "etl", "Failed", "Arrow error: Divide by zero error"),
    ]
    groups = failures.failure_groups(reversed(jobs))
    encoded = json.loads(failures.failures_json(groups))
    assert encoded == {
        "groups": [
            {
                "pattern": "IO error: disk full writing <path>",
                "example": spill.format(1, 7),
                "jobs": ["a", "b", "c"],
                "jobs_total": 3,
                "tasks": 3,
                "first_seen": T0,
                "last_seen": T0 + 2 * DAY,
            },
            {
                "pattern": "Arrow error: Divide by zero error",
                "example": "Arrow error: Divide by zero error",
                "jobs": ["d"],
                "jobs_total": 1,
                "tasks": 0,
                "first_seen": T0 + 3 * DAY,
                "last_seen": T0 + 3 * DAY,
            },
        ]
    }
    assert (groups[0].names, groups[0].failed_jobs) == (["etl", "report"], 2)


# Insights ---------------------------------------------------------------------------------


def finding(kind: FindingKind, severity: FindingSeverity, executor: str | None = None) -> Finding:
    return Finding(kind, severity, 1, 2, executor, 3.0, f"{kind} on {executor}")


def test_insights_rank_jobs_and_flag_nodes_seen_in_several_jobs() -> None:
    bad_node = finding(FindingKind.SLOW_EXECUTOR, FindingSeverity.WARNING, "exec-7")
    jobs = [
        run("calm", 10, T0),
        run("meh", 10, T0 + 1, findings=[finding(FindingKind.IDLE, FindingSeverity.INFO)]),
        run("slow1", 10, T0 + 2, findings=[bad_node]),
        run(
            "slow2",
            10,
            T0 + 3,
            findings=[bad_node, finding(FindingKind.QUEUED, FindingSeverity.INFO)],
        ),
        run(
            "once",
            10,
            T0 + 4,
            findings=[finding(FindingKind.STRAGGLER, FindingSeverity.INFO, "e1")],
        ),
    ]
    regression = finding(FindingKind.REGRESSION, FindingSeverity.CRITICAL)
    worst = insights.worst_jobs(jobs, {"meh": regression})
    assert [i.job.job_id for i in worst] == ["meh", "slow2", "slow1", "once"]
    assert worst[0].findings[0] is regression
    nodes = insights.flagged_executors(jobs)
    assert [(n.executor_id, [i.job.job_id for i in n.jobs]) for n in nodes] == [
        ("exec-7", ["slow2", "slow1"])
    ]


SEVERITIES = list(FindingSeverity)
COSTS = [None, 0, 500, 2_000]


@pytest.mark.slow  # 200 generated sets of jobs
@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            # its own findings: severity and cost
            st.lists(st.tuples(st.sampled_from(SEVERITIES), st.sampled_from(COSTS)), max_size=3),
            st.none() | st.sampled_from(SEVERITIES),  # a regression, or none
            st.integers(0, 5),  # start: ties are broken by id
            st.sampled_from(["a", "ab", "b", "é", "j1", "j10"]),  # ids: prefixes, non-ASCII
        ),
        max_size=30,
        unique_by=lambda job: job[3],
    ),
    st.integers(1, 8),
)
def test_the_worst_jobs_rank_by_severity_cost_count_then_newest(
    jobs: list[tuple[list[tuple[FindingSeverity, int | None]], FindingSeverity | None, int, str]],
    limit: int,
) -> None:
    summaries, extra = [], {}
    for own, regression, start, job_id in jobs:
        found = [
            msgspec.structs.replace(finding(FindingKind.IDLE, severity), impact_ms=cost)
            for severity, cost in own
        ]
        summaries.append(run(job_id, 10, T0 + start, findings=found))
        if regression is not None:
            extra[job_id] = finding(FindingKind.REGRESSION, regression)

    # The rule in one key: worst severity, then the costliest own finding, then how many,
    # then newest, then the larger id.
    def key(job: JobSummary) -> tuple[int, int, int, int, list[int]]:
        severities = [f.severity.rank for f in insights.all_findings(job, extra)]
        return (
            -max(severities),
            -max((f.impact_ms or 0 for f in job.findings), default=0),
            -len(severities),
            -job.start_time,
            [-ord(c) for c in job.job_id] + [1],
        )

    flagged = [job for job in summaries if insights.all_findings(job, extra)]
    expected = [job.job_id for job in sorted(flagged, key=key)[:limit]]
    assert [i.job.job_id for i in insights.worst_jobs(summaries, extra, limit)] == expected
    # As the reduce ranks them, from the figures the state keeps.
    figures = [insights.ranked(job) for job in summaries]
    assert insights.worst_ids(figures, extra, limit) == expected


# The built site ---------------------------------------------------------------------------


@pytest.fixture
def site(example_site: tuple[Path, BuildReport]) -> Path:
    """The bundled examples, built once per session (read-only)."""
    return example_site[0]


def test_names_json_describes_every_name(site: Path) -> None:
    names = {n["name"]: n for n in json.loads((site / "names.json").read_text())["names"]}
    etl = names[generator.RECURRING_NAME]
    assert etl["runs"] == generator.RECURRING_RUNS
    assert etl["failure_rate"] == round(1 / generator.RECURRING_RUNS, 4)
    assert etl["latest_regressed"] is True
    assert etl["page"] == str(urls.name_page(generator.RECURRING_NAME))
    assert (site / etl["page"]).is_file()
    assert etl["median_ms"] < etl["p90_ms"]
    assert names["tpch-q9"]["runs"] == 1 and names["tpch-q9"]["latest_regressed"] is False
    assert all((site / n["page"]).is_file() for n in names.values())


def test_failures_json_groups_the_examples(site: Path) -> None:
    groups = json.loads((site / "failures.json").read_text())["groups"]
    patterns = {g["pattern"]: g for g in groups}
    spill = patterns["IO error: could not write spill file <path>: <size> left on device"]
    # The failed run of nightly-etl is in the group of its task errors, and so is its own
    # failure ("Job failed due to stage 4 failed: " and the task error).
    assert not [p for p in patterns if p.startswith("Job failed due to stage")]
    assert len(spill["jobs"]) == 1
    fetch = patterns[
        "Execution error: Failed to fetch partition <n> of stage <n> from executor-<n> at <ip>:"
        " connection reset by peer"
    ]
    assert fetch["jobs"] == ["planted-failed-attempts"] and fetch["tasks"] > 3
    assert "Ca05RFR" in patterns["Arrow error: Divide by zero error"]["jobs"]


def test_pages_link_each_other(site: Path) -> None:
    names = json.loads((site / "names.json").read_text())["names"]
    etl = next(n for n in names if n["name"] == generator.RECURRING_NAME)
    latest = etl["latest_job_id"]
    page = (site / "jobs" / latest / "index.html").read_text()
    trend_href = "../../" + etl["page"]
    assert f'<a href="{trend_href}">See the trend</a>' in page
    assert 'class="regression warning" id="regression"' in page
    previous = re.search(r'rel="prev" href="\.\./\.\./jobs/(\w+)/index.html"', page)
    assert previous and 'rel="next"' not in page
    before = (site / "jobs" / previous.group(1) / "index.html").read_text()
    assert latest not in before  # a run's page names no later run: a new one changes none
    # The comparison with the previous successful run, stage by stage.
    assert '<table class="compare">' in page and page.count('<th scope="row">') >= 5
    trend_page = (site / etl["page"]).read_text()
    assert trend_page.count('<tr><td><a href="../../jobs/') == generator.RECURRING_RUNS
    assert '<svg class="trend"' in trend_page and 'class="trend-failed"' in trend_page
    assert 'class="trend-regressed"' in trend_page
    recurring_page = (site / urls.RECURRING).read_text()
    assert f'href="../{etl["page"]}"' in recurring_page
    failures_page = (site / urls.FAILURES).read_text()
    assert '<a href="../jobs/Ca05RFR/index.html">' in failures_page
    insights_page = (site / urls.INSIGHTS).read_text()
    assert f'<a href="../jobs/{latest}/index.html#regression">' in insights_page
    listing = (site / "index.html").read_text()
    assert '<span class="severity warning">1 warning</span>' in listing


def test_insights_detail_the_most_flagged_executors_and_count_every_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()

    def slow_on(executor: str, picks: tuple[int, int], job_id: str, start: int) -> None:
        tasks = uniform(1, 24, executors=4)
        for n in picks:  # two of its six tasks 9x slower: a slow executor, not stragglers
            tasks[n] = T(n, executor, 9_000)
        write(logs / f"{job_id}.eventlog", lines(Job(job_id, {1: tasks}, start_ms=start)))

    for k in range(3):
        slow_on("exec-3", (2, 6), f"three-{k}", T0 + k * 60_000)
    for k in range(2):
        slow_on("exec-2", (1, 5), f"two-{k}", T0 + 600_000 + k * 60_000)
    monkeypatch.setattr(insights, "NODES_DETAILED", 1)
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    page = (site / urls.INSIGHTS).read_text()
    assert "2 executors are; the 1 flagged in the most jobs are detailed below" in page
    rows = re.findall(r'<tr><td><a href="[^"]+"><code>(exec-\d)</code></a></td><td[^>]*>(\d)', page)
    assert rows == [("exec-3", "3"), ("exec-2", "2")]
    details = re.findall(r"<h3><a [^>]+><code>(exec-\d)</code></a>: (\d) jobs</h3>", page)
    assert details == [("exec-3", "3")]
    assert "three-2" in page and "two-1" not in page.split("</table>")[-1]
    # With room for both, both are detailed and the table is left out (it would repeat them).
    monkeypatch.setattr(insights, "NODES_DETAILED", 20)
    build(BuildOptions(logs, tmp_path / "roomy"))
    roomy = (tmp_path / "roomy" / urls.INSIGHTS).read_text()
    assert "executors are; the" not in roomy
    details = re.findall(r"<h3><a [^>]+><code>(exec-\d)</code></a>: (\d) jobs</h3>", roomy)
    assert details == [("exec-3", "3"), ("exec-2", "2")]


def test_names_are_escaped(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    evil = '<script>alert("x")</script> & ../../'
    for n in range(2):
        write(logs / f"e{n}.eventlog", job_lines(f"e{n}", name=evil, start_ms=T0 + n * DAY))
    build(BuildOptions(logs, tmp_path / "site"))
    for page in (tmp_path / "site").rglob("*.html"):
        assert "<script>alert" not in page.read_text(), page
    assert json.loads((tmp_path / "site" / "names.json").read_text())["names"][0]["name"] == evil


# check --fail-on --------------------------------------------------------------------------


def daily_runs(logs: Path, count: int, last_scale: float = 1.0, last_fails: bool = False) -> None:
    """Write ``count`` identical daily runs of q1; the last one slower, or failed."""
    logs.mkdir(exist_ok=True)
    for n in range(count):
        last = n == count - 1
        lines = job_lines(
            f"run{n}",
            name="q1",
            start_ms=T0 + n * DAY,
            spread=(1000, 1000),
            stage1_straggler=False,
            scale=last_scale if last else 1.0,
            outcome="failed" if last and last_fails else "succeeded",
        )
        write(logs / f"run{n}.eventlog", lines)


def test_fail_on_passes_steady_runs(tmp_path: Path) -> None:
    daily_runs(tmp_path, 7)
    result = CliRunner().invoke(
        cli, ["check", "--event-log-dir", str(tmp_path), "--fail-on", "regression,failed"]
    )
    assert result.exit_code == 0
    assert result.output.splitlines()[-1] == (
        "--fail-on failed,regression: no newest run of a job name has one: passed."
    )


def test_fail_on_regression_exits_1_and_says_why(tmp_path: Path) -> None:
    daily_runs(tmp_path, 7, last_scale=2.0)
    result = CliRunner().invoke(
        cli, ["check", "--event-log-dir", str(tmp_path), "--fail-on", "regression"]
    )
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"Checked 7 logs in {tmp_path}: 7 completed.",
        "7 jobs can be published; no problems: check passed.",
        "fail-on: q1: job run6: regression: warning: This run took 4.1 s, 2.0x the median of"
        " 2.1 s over the previous 6 successful runs of “q1”; the run before it was not slower.",
        "--fail-on regression: 1 newest run to look at: failed.",
    ]
    # Not asked about regressions: passes.
    other = CliRunner().invoke(
        cli, ["check", "--event-log-dir", str(tmp_path), "--fail-on", "idle"]
    )
    assert other.exit_code == 0


def test_fail_on_failed_and_json(tmp_path: Path) -> None:
    daily_runs(tmp_path, 3, last_fails=True)
    args = ["check", "--event-log-dir", str(tmp_path), "--fail-on", "failed"]
    result = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert result.exit_code == 1
    out = json.loads(result.output)
    assert out["ok"] is True and out["fail_on"] == ["failed"]
    assert [(r["job_id"], r["kind"]) for r in out["fail_on_reasons"]] == [("run2", "failed")]
    assert out["fail_on_reasons"][0]["why"].startswith("Job failed due to stage 2 failed: ")
    assert [j["job_id"] for j in out["jobs"]] == ["run2", "run1", "run0"]
    # Only the newest run counts: an older failure is history.
    (tmp_path / "run3.eventlog").write_bytes(
        b"".join(job_lines("run3", name="q1", start_ms=T0 + 3 * DAY))
    )
    assert CliRunner().invoke(cli, args).exit_code == 0


@pytest.mark.parametrize("bad", ["", "regresion", "failed,nope"])
def test_fail_on_refuses_unknown_kinds(bad: str) -> None:
    result = CliRunner().invoke(cli, ["check", "--fail-on", bad])
    assert result.exit_code == 2
    assert "--fail-on takes a comma-separated list of" in result.output


def test_fail_on_kinds_are_every_finding_kind_failed_and_fleet() -> None:
    assert set(gate.KINDS) == {str(k) for k in FindingKind} | {"failed", "fleet"}


def test_trend_chart_is_well_formed_and_marks_each_run() -> None:
    import xml.etree.ElementTree as ET

    from sitegen.svg import trend as trend_svg

    points = [
        trend_svg.Point("a&b", T0, 1_000),
        trend_svg.Point("<c>", T0 + DAY, 1_100, failed=True),
        trend_svg.Point('"d"', T0 + 2 * DAY, 3_000, regressed=True),
    ]
    svg = trend_svg.chart(points, 'Duration of <x> & "y"', lambda job_id: f"jobs/{job_id}")
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    links = root.findall(f"{ns}a")
    assert [a.get("href") for a in links] == ["jobs/a&b", "jobs/<c>", 'jobs/"d"']
    assert [m.get("class") for a in links for m in a if m.tag != f"{ns}title"] == [
        "trend-ok",
        "trend-failed",
        "trend-regressed",
    ]
    assert root.get("aria-label") == 'Duration of <x> & "y"'
    # The line joins the successful runs only.
    assert len(root.find(f"{ns}polyline").get("points").split()) == 2  # type: ignore[union-attr]
    assert trend_svg.chart([], "empty", str) == ""


def test_failures_json_names_a_groups_newest_jobs_and_counts_them_all() -> None:
    many = failures.JOBS_IN_JSON + 200
    jobs = [run(f"j{n:05d}", 10, T0 + n, failure="disk full on node-1") for n in range(many)]
    (group,) = failures.failure_groups(reversed(jobs))
    listed = json.loads(failures.failures_json([group]))["groups"][0]
    assert listed["jobs_total"] == many
    assert listed["jobs"] == [j.job_id for j in jobs[-failures.JOBS_IN_JSON :]]
    assert group.failed_jobs == many


def test_a_name_page_lists_its_newest_runs_and_draws_more(tmp_path: Path) -> None:
    from sitegen.publish.writer import SiteWriter
    from sitegen.render import trend_pages
    from sitegen.render.pages import PageRenderer

    history = runs([1_000 + n for n in range(150)])
    trend = recurring.trend("q1", history)
    writer = SiteWriter(tmp_path, fresh=True)
    by_id = {j.job_id: j for j in history}
    trend_pages.write_name_page(PageRenderer(), writer, trend, by_id)
    page = (tmp_path / urls.name_page("q1")).read_text()
    table = page[page.index('<table class="runs"') :]
    rows = re.findall(r"<tr><td><a href=\"[^\"]*\"><code>(q1-\d+)</code>", table)
    assert rows == [f"q1-{n}" for n in range(149, 149 - trend_pages.RUNS_SHOWN, -1)]
    assert f"The newest {trend_pages.RUNS_SHOWN} of 150 runs" in page
    chart = page[page.index("<svg") : page.index("</svg>")]
    assert chart.count("q1-") >= 150  # every run is drawn (150 is under MAX_POINTS)


def test_the_state_keeps_input_rows_so_the_site_says_more_data(tmp_path: Path) -> None:
    # Six steady runs, then one twice as slow that read 2.1x the rows: on the site, the
    # regression says "more data" (the state's run columns carry the rows to the trend).
    logs = tmp_path / "logs"
    logs.mkdir()
    day = 86_400_000
    for n in range(7):
        last = n == 6
        spec = generator.JobSpec(
            f"rows-{n}",
            "rows-grow",
            stages=1,
            tasks_per_stage=4,
            start_ms=generator.BASE_TIME_MS + n * day,
            spread=(1_000, 1_000),
            rows=(525_000, 525_000) if last else (250_000, 250_000),  # four tasks a run
            scale=2.1 if last else 1.0,
            stage1_straggler=False,
        )
        generator.write_log(logs, spec, seed=1)
    site = tmp_path / "site"
    build(BuildOptions(logs, site, workers=1))
    state = open_published(site)
    assert state is not None
    try:
        rows = [run[8] for run, _, _ in state.runs("rows-grow")]
    finally:
        state.close()
    assert rows == [1_000_000] * 6 + [2_100_000]
    page = (site / "jobs" / "rows-6" / "index.html").read_text()
    assert "more data, not a slower job" in page


def test_a_text_masked_for_one_job_is_masked_for_another_as_if_anew() -> None:
    # Masked texts are kept per worker (texts recur across jobs): a job's own id is masked
    # before, so another job's mask of the same text is its own, whatever came first.
    text = "stage 3 failed: table xyzzy has no column 'col_a' (/data/t/part-7.parquet)"
    fresh = {}
    for job_id in ("xyzzy", "other", ""):
        masking._masked.cache_clear()
        fresh[job_id] = mask(text, job_id)
    assert fresh["xyzzy"] != fresh["other"] == fresh[""]
    for job_id in ("other", "xyzzy", "", "xyzzy"):
        assert mask(text, job_id) == fresh[job_id]
    assert masking._masked.cache_info().hits >= 2
