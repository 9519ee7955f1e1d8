"""A job's lifecycle as today's scheduler writes it (issue 37, points 1, 2, 7 and 8).

Logs follow upstream's record layouts (``JobSpec(upstream=True)``: no Stage records, the
stages payload in a hash map's order) and its ids (Snowflake, base32): a cancelled job's
JobEnd has ``end_time`` 0 in ``index`` and ``job``; since Ballista #2405 a log is written as
``<id>.eventlog.running`` and renamed to ``<id>.eventlog`` when its job ends, JobEnd or not.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.check import check
from sitegen.cli import cli
from sitegen.diagnose.recurring import Run, duration_ms
from sitegen.eventlog.reader import read_log
from sitegen.examples.generator import BASE_TIME_MS
from sitegen.layout import STATE_NAME
from sitegen.model import Classification, ProblemKind
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree

NOW = 1_767_225_600  # the tests' SOURCE_DATE_EPOCH (conftest), BASE_TIME_MS in seconds
DAY_MS = 86_400_000
# Snowflake ids in base32, as today's scheduler makes them.
DONE, CANCELLED, SILENT, OTHER = "0382W17Y0G000", "0382W17Y0G001", "0382W17Y0G002", "0382W17Y0G003"


def upstream(job_id: str, **kw: object) -> list[bytes]:
    """Return the lines of a job as today's scheduler writes them."""
    return job_lines(job_id, upstream=True, **kw)


def job_end(lines: list[bytes]) -> dict[str, object]:
    """Return the JobEnd record's data of a log's lines."""
    last = json.loads(lines[-1])
    assert last["ev"] == "JobEnd"
    data: dict[str, object] = last["data"]
    return data


def aged(path: Path, days: float) -> Path:
    """Set a log's modification time ``days`` before the build's clock."""
    then = NOW - int(days * 86_400)
    os.utime(path, (then, then))
    return path


def kinds(report: BuildReport) -> dict[str, str]:
    """Return each problem's kind by file."""
    return {p.file: str(p.kind) for p in report.problems}


def state_rows(site: Path, query: str) -> list[tuple[object, ...]]:
    """Return the rows of a query of the site's state."""
    db = sqlite3.connect(site / STATE_NAME)
    try:
        return db.execute(query).fetchall()
    finally:
        db.close()


# 1. Cancelled jobs: end_time 0, completed_at the cancel time.


@pytest.fixture
def cancelled_logs(tmp_path: Path) -> Path:
    """A job cancelled 90 days before the build and one completed 10 days before it."""
    logs = tmp_path / "logs"
    logs.mkdir()
    start = BASE_TIME_MS - 90 * DAY_MS
    write(logs / f"{CANCELLED}.eventlog", upstream(CANCELLED, outcome="cancelled", start_ms=start))
    write(logs / f"{DONE}.eventlog", upstream(DONE, start_ms=BASE_TIME_MS - 10 * DAY_MS))
    return logs


def test_a_cancelled_job_is_written_as_upstream_writes_it(cancelled_logs: Path) -> None:
    lines = (cancelled_logs / f"{CANCELLED}.eventlog").read_bytes().splitlines(keepends=True)
    end = job_end(lines)
    index, job = end["index"], end["job"]
    assert isinstance(index, dict) and isinstance(job, dict)
    assert end["status"] == "Cancelled" and end["queued_at"] == 0
    assert index["status"] == index["job_status"] == job["status"] == job["job_status"]
    assert index["status"] == "Cancelled"
    assert index["end_time"] == job["end_time"] == 0
    assert isinstance(end["completed_at"], int) and end["completed_at"] > index["start_time"]
    assert list(index) == [
        "job_id",
        "job_name",
        "status",
        "job_status",
        "start_time",
        "end_time",
        "num_stages",
        "completed_stages",
        "percent_complete",
    ]
    assert not any(b'"ev":"Stage' in line for line in lines)


def test_max_age_keeps_a_cancelled_job_by_its_cancel_time(
    tmp_path: Path, cancelled_logs: Path
) -> None:
    kept = build(BuildOptions(cancelled_logs, tmp_path / "year", max_age="365d"))
    assert kept.published == 2 and kept.retention_dropped == 0
    listed = json.loads((tmp_path / "year/api/jobs").read_bytes())
    assert [j["job_id"] for j in listed] == [DONE, CANCELLED]
    # /api/jobs and /api/job/<id> keep the index's and the payload's 0, byte for byte.
    assert listed[1]["end_time"] == 0
    read = read_log(cancelled_logs / f"{CANCELLED}.eventlog")
    assert read.job_end is not None
    assert (tmp_path / "year/api/job" / CANCELLED / "index.json").read_bytes() == bytes(
        read.job_end.job
    )
    # A retention its cancel time does not pass drops it, as any job that ended then.
    month = build(BuildOptions(cancelled_logs, tmp_path / "month", max_age="30d"))
    assert month.published == 1 and month.retention_dropped == 1
    # The state keeps when it ended: the cancel time.
    rows = state_rows(tmp_path / "year", "SELECT job_id, end_time, completed_at FROM log")
    ends = {job_id: (end, completed) for job_id, end, completed in rows}
    assert ends[CANCELLED][0] == ends[CANCELLED][1] == read.job_end.completed_at > 0


def test_the_jobs_list_shows_a_cancelled_jobs_duration(
    tmp_path: Path, cancelled_logs: Path
) -> None:
    site = tmp_path / "site"
    report = build(BuildOptions(cancelled_logs, site))
    job = next(j for j in report.jobs if j.job_id == CANCELLED)
    assert job.end_time == 0 and job.ended_at == job.completed_at > job.start_time
    took = job.completed_at - job.start_time
    front = (site / "index.html").read_text()
    row = front[front.index(f"<code>{CANCELLED}</code>") :]
    row = row[: row.index("</tr>")]
    assert f'<td class="num" data-v="{took}">' in row
    # Trends measure it alike.
    assert duration_ms(job) == took == duration_ms(Run.of(job))


# 2. A log that ended without its JobEnd.


def test_a_log_without_jobend_beside_running_logs_ended_unrecorded(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / f"{DONE}.eventlog", upstream(DONE))
    write(logs / f"{OTHER}.eventlog.running", upstream(OTHER)[:3])  # Ballista #2405 naming
    write(logs / f"{SILENT}.eventlog", upstream(SILENT)[:-1])  # every record but JobEnd
    site = tmp_path / "site"
    report = build(BuildOptions(logs, site))
    assert report.classifications["ended-unrecorded"] == 1
    assert report.classifications["incomplete"] == 1
    (problem,) = [p for p in report.problems if p.kind is ProblemKind.ENDED_UNRECORDED]
    assert problem.file == f"{SILENT}.eventlog" and str(problem.severity) == "warning"
    assert "Ballista #2405" in problem.message and "ended unrecorded" in problem.message
    by_id = {r.job_id: r for r in report.running}
    assert by_id[SILENT].ended == problem.message and by_id[SILENT].abandoned is None
    assert by_id[OTHER].ended is None
    running = (site / "running/index.html").read_text()
    assert running.count(">ended unrecorded</span>") == 1
    # The front page counts what still runs: one job, not two.
    assert ">1 running</a>" in (site / "index.html").read_text()
    assert f"{SILENT}.eventlog" in (site / "problems/index.html").read_text()
    assert SILENT not in [j["job_id"] for j in json.loads((site / "api/jobs").read_bytes())]
    # check judges it alike.
    checked = check(logs, workers=1)
    assert checked.classifications["ended-unrecorded"] == 1
    assert checked.problems == report.problems


@pytest.mark.parametrize("trusting", [True, False], ids=["trusted", "verify-logs"])
def test_a_renamed_log_tells_the_dir_names_logs_the_2405_way(
    tmp_path: Path, trusting: bool
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    site = tmp_path / "site"
    options = BuildOptions(logs, site, trust_finished_logs=trusting)
    write(logs / f"{DONE}.eventlog", upstream(DONE))
    running = write(logs / f"{SILENT}.eventlog.running", upstream(SILENT)[:-1])
    first = build(options)
    assert kinds(first) == {f"{SILENT}.eventlog.running": "incomplete"}
    # The job ends, its JobEnd never written: renamed all the same (no .running left).
    running.rename(logs / f"{SILENT}.eventlog")
    second = build(options)
    assert kinds(second) == {f"{SILENT}.eventlog": "ended-unrecorded"}
    assert state_rows(site, "SELECT key FROM renamed") == [(f"{SILENT}.eventlog",)]
    # The state remembers: a later .eventlog without JobEnd there ended unrecorded too.
    write(logs / f"{OTHER}.eventlog", upstream(OTHER)[:4])
    third = build(options)
    assert kinds(third)[f"{OTHER}.eventlog"] == "ended-unrecorded"
    assert build(options).up_to_date
    # The renamed log gone, nothing shows the naming: a new one is judged by its age.
    (logs / f"{SILENT}.eventlog").unlink()
    (logs / f"{OTHER}.eventlog").unlink()
    write(logs / "0382W17Y0G004.eventlog", upstream("0382W17Y0G004")[:4])
    fourth = build(options)
    assert kinds(fourth) == {"0382W17Y0G004.eventlog": "incomplete"}
    assert state_rows(site, "SELECT key FROM renamed") == []


def test_a_running_log_appearing_rejudges_an_older_log_without_jobend(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    site = tmp_path / "site"
    write(logs / f"{SILENT}.eventlog", upstream(SILENT)[:-1])
    # No sign of the naming, written just now: it may be a job still running (before #2405).
    assert kinds(build(BuildOptions(logs, site))) == {f"{SILENT}.eventlog": "incomplete"}
    write(logs / f"{OTHER}.eventlog.running", upstream(OTHER)[:3])
    later = build(BuildOptions(logs, site))
    assert kinds(later)[f"{SILENT}.eventlog"] == "ended-unrecorded"
    assert later.rebuilt == 2  # the new log, and the old one judged again
    clean = build(BuildOptions(logs, tmp_path / "clean"))
    assert kinds(clean) == kinds(later)
    assert tree(site) == tree(tmp_path / "clean")
    # The .running log gone unrenamed, the dir no longer shows the naming: judged by age again.
    (logs / f"{OTHER}.eventlog.running").unlink()
    again = build(BuildOptions(logs, site))
    assert kinds(again) == {f"{SILENT}.eventlog": "incomplete"} and again.rebuilt == 1
    build(BuildOptions(logs, tmp_path / "clean2"))
    assert tree(site) == tree(tmp_path / "clean2")


def test_without_a_sign_of_the_naming_the_age_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    site = tmp_path / "site"
    write(logs / f"{DONE}.eventlog", upstream(DONE))
    aged(write(logs / f"{SILENT}.eventlog", upstream(SILENT)[:-1]), days=0.5)
    assert kinds(build(BuildOptions(logs, site))) == {f"{SILENT}.eventlog": "incomplete"}
    assert build(BuildOptions(logs, site)).up_to_date
    # A day later nothing changed, but the clock says the job ended (the default 24 h).
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(NOW + 86_400))
    later = build(BuildOptions(logs, site))
    assert later.rebuilt == 1
    (problem,) = later.problems
    assert problem.kind is ProblemKind.ENDED_UNRECORDED
    assert problem.message.startswith("no JobEnd record, and last written 1 day ago:")
    (shown,) = later.running
    assert shown.ended == problem.message
    # --stale-after 0: never by age.
    never = build(BuildOptions(logs, tmp_path / "never", stale_after="0"))
    assert kinds(never) == {f"{SILENT}.eventlog": "incomplete"}


def test_a_compressed_log_without_jobend_ended_unrecorded(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / f"{SILENT}.eventlog.gz").write_bytes(gzip.compress(b"".join(upstream(SILENT)[:-1])))
    report = build(BuildOptions(logs, tmp_path / "site"))
    (problem,) = report.problems
    assert problem.kind is ProblemKind.ENDED_UNRECORDED
    assert problem.message == "a compressed log holds no JobEnd record: the job ended unrecorded"
    assert report.classifications[str(Classification.ENDED_UNRECORDED)] == 1


def test_check_tells_the_naming_from_the_listing(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / f"{SILENT}.eventlog", upstream(SILENT)[:-1])
    out = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs)])
    assert f"{SILENT}.eventlog: note: incomplete:" in out.output, out.output
    write(logs / f"{OTHER}.eventlog.running", upstream(OTHER)[:3])
    out = CliRunner().invoke(cli, ["check", "--event-log-dir", str(logs)])
    assert out.exit_code == 0, out.output  # a warning: check passes
    assert f"{SILENT}.eventlog: warning: ended-unrecorded:" in out.output


# 7. A .running log that already holds its JobEnd: published; its rename changes nothing.


def test_a_running_log_holding_its_jobend_is_published(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    site = tmp_path / "site"
    write(logs / f"{DONE}.eventlog.running", upstream(DONE))
    first = build(BuildOptions(logs, site))
    assert first.published == 1 and first.problems == [] and first.running == []
    assert [j["job_id"] for j in json.loads((site / "api/jobs").read_bytes())] == [DONE]
    assert check(logs, workers=1).problems == []
    before = tree(site)
    # Renamed into place as the scheduler finishes the job: the same job, the same files
    # (the job page names the log file).
    (logs / f"{DONE}.eventlog.running").rename(logs / f"{DONE}.eventlog")
    after = build(BuildOptions(logs, site))
    assert after.published == 1 and after.problems == [] and after.rebuilt == 1
    now = tree(site)
    page = f"jobs/{DONE}/index.html"
    assert now.pop(page) == before.pop(page).replace(b".eventlog.running<", b".eventlog<")
    # The jobs table names the log file too (and the manifest gives that file's size).
    for name in ("data/jobs/00000.parquet", "data/manifest.json"):
        assert now.pop(name) != before.pop(name)
    assert _log_files(site) == [f"{DONE}.eventlog"]
    assert now == before
    assert state_rows(site, "SELECT key FROM renamed") == [(f"{DONE}.eventlog",)]


# 8. Late records, null tasks, ids the TUI cannot ask for.


def test_a_late_task_end_after_jobend_is_not_read(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = upstream(DONE)
    log = write(logs / f"{DONE}.eventlog", lines)
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    before = _served(site)
    tasks = len(read_log(log).tasks)
    # A scheduler from before #2405 could append a TaskEnd after JobEnd.
    late = next(line for line in lines if line.startswith(b'{"ev":"TaskEnd"'))
    with log.open("ab") as f:
        f.write(late)
    assert len(read_log(log).tasks) == tasks
    assert build(BuildOptions(logs, site)).up_to_date  # a finished log is trusted
    verified = build(BuildOptions(logs, site, trust_finished_logs=False))
    assert verified.rebuilt == 1 and _served(site) == before


def _served(site: Path) -> dict[str, bytes]:
    """Return what a job's log makes of the site but its raw copy and the size shown of it.

    The size is shown on the job page and in the jobs table (``log_bytes``, and so the
    manifest's size of that file); every other table is compared.
    """
    shown = ("eventlog.gz", f"{DONE}/index.html", "data/jobs/00000.parquet", "manifest.json")
    return {path: data for path, data in tree(site).items() if not path.endswith(shown)}


def _null_tasks(line: bytes) -> bytes:
    """Return a JobEnd line whose stages list null task entries (as the payload may)."""
    record_ = json.loads(line)
    stages = record_["data"]["stages"]["stages"]
    for stage in stages:
        stage["tasks"] = [None, *stage["tasks"], None]
    stages.append({**stages[0], "stage_id": "9", "tasks": [None]})
    return msgspec.json.encode(record_) + b"\n"


def test_null_task_entries_are_tolerated_everywhere(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = upstream(DONE, outcome="failed", stages=3, tasks_per_stage=6)
    lines[-1] = _null_tasks(lines[-1])
    write(logs / f"{DONE}.eventlog", lines)
    site = tmp_path / "site"
    report = build(BuildOptions(logs, site))
    assert report.published == 1 and report.problems == []
    stages = (site / "api/job" / DONE / "stages").read_bytes()
    assert stages.count(b"null") >= 7  # relayed as written
    pages = [p for p in (site / "jobs" / DONE).rglob("*.html")]
    assert len(pages) >= 5  # the job page and a page per stage
    assert all(p.stat().st_size > 0 for p in pages)
    # The stage's six tasks, its null entries skipped; a stage of nulls alone lists none.
    assert (site / "jobs" / DONE / "stage-1.html").read_text().count("<tr id=task-") == 6
    assert (site / "jobs" / DONE / "stage-9.html").read_text().count("<tr id=task-") == 0
    assert json.loads((site / "jobs" / DONE / "trace.json").read_bytes())
    assert json.loads((site / "jobs" / DONE / "findings.json").read_bytes()) is not None
    checked = check(logs, workers=1)
    assert checked.problems == [] and checked.publishable == 1


def test_an_id_with_percent_is_published_with_a_warning(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    odd = "q%41-1"  # the TUI sends it as it is: a host reads qA-1
    write(logs / f"{odd}.eventlog", job_lines(odd))
    write(logs / f"{DONE}.eventlog", upstream(DONE))
    site = tmp_path / "site"
    report = build(BuildOptions(logs, site))
    assert report.published == 2
    (problem,) = report.problems
    assert problem.kind is ProblemKind.TUI_UNREACHABLE and problem.file == f"{odd}.eventlog"
    assert problem.job_id == odd and not problem.skipped and str(problem.severity) == "warning"
    assert (site / "api/job" / odd / "index.json").is_file()
    again = build(BuildOptions(logs, site))
    assert again.up_to_date and again.problems == report.problems
    assert check(logs, workers=1).problems == report.problems


def test_records_of_upstream_shape_read_whole(tmp_path: Path) -> None:
    """The helpers above write what the scheduler writes: one JobStart first, JobEnd last."""
    lines = upstream(SILENT)
    assert json.loads(lines[0])["ev"] == "JobStart"
    assert {json.loads(line)["ev"] for line in lines[1:-1]} == {"TaskEnd"}
    assert json.loads(lines[-1])["ev"] == "JobEnd"


def _log_files(site: Path) -> list[str]:
    """Return the log_file column of the jobs table."""
    import pyarrow.parquet as pq

    return list(pq.read_table(site / "data/jobs/00000.parquet").column("log_file").to_pylist())
