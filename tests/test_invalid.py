"""Invalid jobs (issue 51, item 4): coloured, counted and gated as failed runs.

The scheduler reports ``status`` "Invalid" and ``job_status`` "Invalid State" for a job whose
graph holds no status it knows (Ballista's ``format_job_status``). The JobEnd's own ``status``
comes from the event that ended the job, so it is ``"Succeeded"`` or ``{"Failed": msg}``;
which one an Invalid job gets upstream is not known, so both are tested.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.cli import cli
from sitegen.diagnose import failures, recurring
from sitegen.model import JobSummary
from sitegen.render.tables import job_tables
from sitegen.render.templates import default_template_dir
from tests.helpers.logs import invalid_job_lines, job_lines, write
from tests.test_tables import analysed, parquet_rows

DAY = 86_400_000
T0 = 1_767_225_600_000
# The JobEnd status each shape ends with: JobFinished's, and JobRunningFailed's.
ENDS = ["succeeded", "failed"]
FAILURE = "Job failed due to stage 2 failed: Arrow error: Divide by zero error"
INVALID_BADGE = '<span class="badge st-invalid">Invalid</span>'


def daily_runs(logs: Path, count: int, invalid: dict[int, str], slow: int | None = None) -> None:
    """Write ``count`` identical daily runs of q1; ``invalid`` maps a run to its JobEnd outcome."""
    logs.mkdir(exist_ok=True)
    for n in range(count):
        kw = {
            "start_ms": T0 + n * DAY,
            "spread": (1000, 1000),
            "stage1_straggler": False,
            "scale": 2.0 if n == slow else 1.0,
        }
        if n in invalid:
            lines = invalid_job_lines(f"run{n}", name="q1", outcome=invalid[n], **kw)
        else:
            lines = job_lines(f"run{n}", name="q1", **kw)
        write(logs / f"run{n}.eventlog", lines)


def test_the_log_says_invalid_in_the_index_and_the_job_payload() -> None:
    for end, status in zip(ENDS, ["Succeeded", {"Failed": FAILURE}], strict=True):
        record = json.loads(invalid_job_lines("x", outcome=end)[-1])
        assert record["ev"] == "JobEnd" and record["data"]["status"] == status
        for part in (record["data"]["index"], record["data"]["job"]):
            assert (part["status"], part["job_status"]) == ("Invalid", "Invalid State")


def test_invalid_is_coloured_as_a_failure_in_the_stylesheet() -> None:
    css = (default_template_dir() / "static" / "style.css").read_text()
    rule = next(line for line in css.splitlines() if ".st-failed" in line and "{" in line)
    assert rule.startswith(".st-failed, .st-invalid,") and "var(--bad)" in rule
    assert ".st-invalid" not in css.replace(rule, "")  # no other rule recolours it


@pytest.mark.parametrize("end", ENDS)
def test_the_jobs_list_and_job_page_badge_an_invalid_job(tmp_path: Path, end: str) -> None:
    logs = tmp_path / "logs"
    daily_runs(logs, 2, {1: end})
    report = build(BuildOptions(logs, tmp_path / "site", workers=1))
    assert report.published == 2 and not report.problems
    site = tmp_path / "site"
    listing = (site / "index.html").read_text()
    row = next(r for r in listing.split("<tr") if "run1" in r)
    assert f'<td data-v="Invalid">{INVALID_BADGE}</td>' in row
    # The counts by status on top: one Invalid, one Completed.
    assert f'<span class="count">{INVALID_BADGE} 1</span>' in listing
    page = (site / "jobs" / "run1" / "index.html").read_text()
    assert f"<h1>q1 {INVALID_BADGE}</h1>" in page
    assert f"<dt>Status</dt><dd>{INVALID_BADGE} Invalid State</dd>" in page
    # A Failed JobEnd has its message to show; a Succeeded one has none.
    assert ("Why it failed" in page) is (end == "failed")
    # /api/jobs relays the log's words.
    api = json.loads((site / "api" / "jobs").read_text())
    assert {(j["job_id"], j["status"], j["job_status"]) for j in api} >= {
        ("run1", "Invalid", "Invalid State")
    }


@pytest.mark.parametrize("end", ENDS)
def test_recurring_counts_an_invalid_run_as_failed(tmp_path: Path, end: str) -> None:
    logs = tmp_path / "logs"
    daily_runs(logs, 4, {1: end})
    build(BuildOptions(logs, tmp_path / "site", workers=1))
    site = tmp_path / "site"
    (entry,) = json.loads((site / "names.json").read_text())["names"]
    assert (entry["runs"], entry["failure_rate"]) == (4, 0.25)
    name_page = (site / entry["page"]).read_text()
    assert name_page.count('class="trend-failed"') == 1  # the cross of a failed run
    rows = {
        n: next(r for r in name_page.split("<tr>") if f"<code>run{n}</code></a></td>" in r)
        for n in range(4)
    }
    assert {n: '<span class="bad">failed</span>' in r for n, r in rows.items()} == {
        0: False,
        1: True,
        2: False,
        3: False,
    }
    groups = json.loads((site / "failures.json").read_text())["groups"]
    pattern = "Invalid State" if end == "succeeded" else "Arrow error: Divide by zero error"
    (group,) = [g for g in groups if g["pattern"] == pattern]
    assert group["jobs"] == ["run1"]
    failures_page = (site / "failures" / "index.html").read_text()
    assert ("Invalid State" in failures_page) is (end == "succeeded")


def summary(status: str, failure: str | None = None) -> JobSummary:
    """Return a summary with only the words that decide how a run ended."""
    verbose = "Invalid State" if status == "Invalid" else status
    return JobSummary(
        "j", "q1", status, verbose, T0, T0 + 1000, 2, 2, 100, T0, T0, T0 + 1000, "f", failure
    )


@pytest.mark.parametrize(
    ("status", "failure", "is_failed", "is_success"),
    [
        ("Invalid", None, True, False),
        ("Invalid", FAILURE, True, False),
        ("Failed", FAILURE, True, False),
        ("Completed", None, False, True),
        ("Cancelled", None, False, False),
        ("Running", None, False, False),
    ],
)
def test_an_invalid_run_is_failed_and_never_a_success(
    status: str, failure: str | None, is_failed: bool, is_success: bool
) -> None:
    job = summary(status, failure)
    assert recurring.failed(job) is is_failed
    assert recurring.succeeded(job) is is_success
    rows = list(failures.failure_rows(job))
    assert [r.failed_job for r in rows] == ([1] if is_failed else [])


def test_an_invalid_failure_row_groups_by_its_status_text() -> None:
    (row,) = failures.failure_rows(summary("Invalid"))
    assert (row.pattern, row.example, row.failed_job) == ("Invalid State", "Invalid State", 1)


def fail_on(logs: Path, kinds: str) -> tuple[int, list[str]]:
    """Run ``sitegen check --fail-on kinds`` and return its exit code and output lines."""
    result = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs), "--fail-on", kinds])
    return result.exit_code, result.output.splitlines()


@pytest.mark.parametrize("end", ENDS)
def test_fail_on_failed_stops_on_a_newest_invalid_run(tmp_path: Path, end: str) -> None:
    daily_runs(tmp_path, 3, {2: end})
    code, lines = fail_on(tmp_path, "failed")
    assert code == 1
    why = "status Invalid" if end == "succeeded" else FAILURE
    assert lines == [
        f"Checked 3 logs in {tmp_path}: 3 completed.",
        "3 jobs can be published; no problems: check passed.",
        f"fail-on: q1: job run2: failed: {why}",
        "--fail-on failed: 1 newest run to look at: failed.",
    ]
    # An Invalid job is no damaged log: a plain check passes.
    assert CliRunner().invoke(cli, ["check", "--event-log-dir", str(tmp_path)]).exit_code == 0


def test_fail_on_failed_passes_once_a_newer_run_completes(tmp_path: Path) -> None:
    daily_runs(tmp_path, 4, {2: "succeeded"})
    code, lines = fail_on(tmp_path, "failed")
    assert code == 0
    assert lines[-1] == "--fail-on failed: no newest run of a job name has one: passed."


def test_an_invalid_run_is_no_baseline_and_no_regression(tmp_path: Path) -> None:
    # Runs 0-4 complete, run 5 is Invalid, run 6 took twice as long: judged against the five
    # completed runs only. An Invalid newest run, however slow, is failed, not regressed.
    daily_runs(tmp_path / "a", 7, {5: "succeeded"}, slow=6)
    code, lines = fail_on(tmp_path / "a", "regression")
    assert code == 1
    assert re.fullmatch(
        r"fail-on: q1: job run6: regression: warning: This run took .*, 2\.0x the median of .*"
        r" over the previous 5 successful runs of “q1”; the run before it was not slower\.",
        lines[2],
    ), lines
    daily_runs(tmp_path / "b", 7, {6: "succeeded"}, slow=6)
    assert fail_on(tmp_path / "b", "regression") == (
        0,
        [
            f"Checked 7 logs in {tmp_path / 'b'}: 7 completed.",
            "7 jobs can be published; no problems: check passed.",
            "--fail-on regression: no newest run of a job name has one: passed.",
        ],
    )
    assert fail_on(tmp_path / "b", "regression,failed")[1][2] == (
        "fail-on: q1: job run6: failed: status Invalid"
    )


@pytest.mark.parametrize("end", ENDS)
def test_the_sql_jobs_table_keeps_the_logs_word(tmp_path: Path, end: str) -> None:
    path = write(tmp_path / "inv.eventlog", invalid_job_lines("inv", outcome=end))
    key, read, analysis = analysed(path)
    rows = parquet_rows("jobs", [job_tables(read, analysis, key)])
    assert rows["status"] == ["Invalid"]
    assert rows["failure"] == [None if end == "succeeded" else FAILURE]
