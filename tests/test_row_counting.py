"""Rows across Ballista #2435: how a log counts them, and what runs compare across the change."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from sitegen.builder.contexts.foresight import forecast
from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.diagnose import recurring
from sitegen.diagnose.analysis import analyse
from sitegen.diagnose.counting import BEFORE, PR_2435, UNKNOWN, counting, produced_rows
from sitegen.diagnose.stage_findings import _stage_rows
from sitegen.eventlog.payload import Stage, TaskSummary
from sitegen.eventlog.reader import read_log
from sitegen.finding import FindingSeverity
from sitegen.model import JobSummary, StageFigures
from sitegen.render import urls
from sitegen.render.runs import StageChange, comparison_rows
from tests.helpers.logs import counted_job_lines, write, write_series

DAY = 86_400_000
T0 = 1_767_225_600_000


def summary_of(tmp_path: Path, lines: list[bytes]) -> JobSummary:
    """Return the summary the map step makes of a log."""
    path = write(tmp_path / "job.eventlog", lines)
    return analyse(read_log(path), path.name).summary


# The judgment --------------------------------------------------------------------------------


@pytest.mark.parametrize("how", [PR_2435, BEFORE])
@pytest.mark.parametrize("stages", [3, 4, 5])
def test_a_log_tells_its_counting_from_its_own_figures(
    tmp_path: Path, how: str, stages: int
) -> None:
    assert summary_of(tmp_path, counted_job_lines("J1", how, stages=stages)).counting == how


def test_a_one_stage_job_is_told_by_the_rows_it_produced(tmp_path: Path) -> None:
    for how in (PR_2435, BEFORE):
        assert summary_of(tmp_path, counted_job_lines("J1", how, stages=1)).counting == how
    # Failed, it says no rows produced and has no stage edge: unknown.
    failed = counted_job_lines("J1", PR_2435, stages=1, outcome="failed")
    assert summary_of(tmp_path, failed).counting == UNKNOWN


def test_the_rows_a_job_produced_are_read_from_its_status() -> None:
    assert produced_rows("Completed. Produced 4 partitions containing 1000 rows. Elapsed") == 1000
    assert produced_rows("Failed: 1 rows") is None


def stage(stage_id: str, rows_in: int, rows_out: int, status: str = "Successful") -> Stage:
    """Return a payload stage with one task and these rows."""
    task = TaskSummary(id=0, status="Successful", input_rows=rows_in, output_rows=rows_out)
    return Stage(stage_id, status, rows_in, rows_out, tasks=[task])


def test_what_the_judgment_gets_wrong_a_stage_that_only_reads_and_writes() -> None:
    # Before #2435, stage 1 scans and writes (its writer the only operator reporting an
    # output), stage 2 reads and writes (its writer's input is all it read): the stage's
    # input equals its parent's output under both countings, so the log is taken for #2435.
    stages = [stage("1", 500, 100), stage("2", 100, 100)]
    assert counting(stages, [("1", "2")], "") == PR_2435  # documented: wrong for a pre-#2435 log
    # One operator more in stage 1 (a filter reporting its output): before, told right.
    stages = [stage("1", 100, 600), stage("2", 100, 100)]
    assert counting(stages, [("1", "2")], "") == BEFORE


def test_rows_not_recorded_or_unfinished_stages_are_no_evidence() -> None:
    edges = [("1", "2")]
    assert counting([stage("1", 500, 100), stage("2", 0, 40)], edges, "") == UNKNOWN
    assert counting([stage("1", 500, 100), stage("2", 60, 40, "Running")], edges, "") == UNKNOWN
    # Evidence both ways (a stage that also scans is no evidence; smaller is before).
    mixed = [stage("1", 9, 100), stage("2", 100, 10), stage("3", 5, 1)]
    assert counting(mixed, [("1", "2"), ("2", "3")], "") == UNKNOWN


# Regressions across the change --------------------------------------------------------------


def run(n: int, took: int, rows: int | None, how: str) -> recurring.Run:
    """Return a successful daily run of q1."""
    start = T0 + n * DAY
    return recurring.Run(
        f"q1-{n}", "q1", start, start + took, "Completed", False, True, "", rows, how
    )


def test_a_slowdown_right_after_the_change_stays_a_warning() -> None:
    # Five runs counted the old way (input rows: the writers' input, small), then the same
    # data counted the new way and twice as slow: 30x "more rows" excuse nothing.
    series = [run(n, 10_000, 100_000, BEFORE) for n in range(5)]
    series.append(run(5, 20_000, 3_000_000, PR_2435))
    finding = recurring.regressions(series)["q1-5"]
    assert finding.severity is FindingSeverity.WARNING
    assert "rows" not in finding.message
    # Within one counting, more rows still excuse it.
    same = [run(n, 10_000, 100_000, PR_2435) for n in range(5)]
    same.append(run(5, 20_000, 300_000, PR_2435))
    assert recurring.regressions(same)["q1-5"].severity is FindingSeverity.INFO


def test_earlier_rows_counted_otherwise_or_not_recorded_are_left_out() -> None:
    series = [run(0, 10_000, 100_000, BEFORE), run(1, 10_000, 100_000, BEFORE)]
    series += [run(n, 10_000, 0, PR_2435) for n in (2, 3)]  # not recorded
    series += [run(4, 10_000, 1_000_000, PR_2435), run(5, 21_000, 2_100_000, PR_2435)]
    job = series[-1]
    earlier = [(r.input_rows, r.counting) for r in series[:-1]]
    assert recurring.comparable_rows(job, earlier) == [1_000_000]
    finding = recurring.regressions(series)["q1-5"]
    assert finding.severity is FindingSeverity.INFO
    assert "2.1x the rows of the median run" in finding.message


def test_the_peek_forecast_includes_the_counting() -> None:
    summary = JobSummary("j", "q1", "Completed", "", 1, 2, 1, 1, 100, 1, 1, 2, "j.eventlog")
    told = recurring.Run.of(summary)
    other = msgspec.structs.replace(summary, counting=PR_2435)
    assert forecast(told, summary) != forecast(recurring.Run.of(other), other)


# Rows not recorded ----------------------------------------------------------------------------


def test_tasks_that_ran_with_0_rows_are_left_out_of_the_skew_median() -> None:
    tasks = [TaskSummary(id=n, status="Successful", input_rows=r) for n, r in enumerate([0, 0, 5])]
    assert _stage_rows(Stage("1", "Successful", tasks=tasks)) == [5]


def test_the_runs_table_marks_rows_across_countings_and_rows_not_recorded() -> None:
    row = StageChange("1", StageFigures("1", 900, 4, 1000, 10), StageFigures("1", 800, 4, 9, 900))
    html = str(comparison_rows([row], comparable=False))
    assert html.count("not comparable") == 2
    assert "+11011%" not in html and "\u221299%" not in html  # what the counting alone made
    assert "+12%" in html  # the duration still compares
    unrecorded = StageChange("1", StageFigures("1", 900, 4, 0, 10), StageFigures("1", 800, 4, 9, 9))
    html = str(comparison_rows([unrecorded]))
    assert "not recorded" in html and "\u2212100%" not in html


# The site --------------------------------------------------------------------------------------


def test_a_series_spanning_the_change_shows_no_row_change_nor_row_excuse(tmp_path: Path) -> None:
    ids = write_series(
        tmp_path / "logs", "nightly", [BEFORE] * 5 + [PR_2435] * 2, [1.0] * 5 + [2.0, 1.0]
    )
    out = tmp_path / "site"
    build(BuildOptions(log_dirs=tmp_path / "logs", output=out, workers=1))
    first_new = (out / "jobs" / ids[5] / "index.html").read_text()
    # Right after the change: a regression warning, and rows marked, not changed.
    assert re.search(r'class="regression warning"', first_new)
    assert "more data, not a slower job" not in first_new
    assert "Rows are not comparable" in first_new
    compared = first_new.split('<table class="compare">')[1].split("</table>")[0]
    # Input and output rows of the job and its three stages: no +89% nor -100%.
    assert compared.count("not comparable</span></td>") == 8
    changes = re.findall(r'<td class="num">([^<]*%)</td>', compared)
    assert len(changes) == 8  # durations and tasks only
    # Within one counting, rows compare again.
    after = (out / "jobs" / ids[6] / "index.html").read_text()
    assert "Rows are not comparable" not in after and "not comparable" not in after
    # The name's runs table marks the runs counted the old way.
    name_page = (out / urls.name_page("nightly")).read_text()
    assert name_page.count("rows counted before #2435</small>") == 5


def test_rows_of_0_where_tasks_ran_are_shown_as_not_recorded(tmp_path: Path) -> None:
    lines = counted_job_lines("J0", PR_2435, stages=3)
    end = lines[-1]
    # Stage 3's rows as Ballista writes them where metrics do not line up with the plan.
    end = re.sub(rb'("stage_id":"3","stage_status":"Successful","input_rows":)\d+', rb"\g<1>0", end)
    (tmp_path / "logs").mkdir()
    write(tmp_path / "logs" / "J0.eventlog", [*lines[:-1], end])
    out = tmp_path / "site"
    build(BuildOptions(log_dirs=tmp_path / "logs", output=out, workers=1))
    job = (out / "jobs" / "J0" / "index.html").read_text()
    assert job.count("not recorded</td>") == 1  # stage 3's input; its output is recorded
    stage_page = (out / "jobs" / "J0" / "stage-3.html").read_text()
    assert "<dt>Input rows</dt><dd>not recorded" in stage_page
