"""Stages as today's scheduler writes them (issue 37, points 3 to 5).

The scheduler writes no StageStart or StageEnd records, builds the stages payload from a hash
map (its stages come in no set order), and writes a failed job's JobEnd before it marks the
failing stage failed (the payload and the DOT still say Running, with running tasks). The
pages list stages by stage id and show that stage as failed; the ``/api`` files keep the
payload's bytes. The logs here are written in upstream's record layouts (checked first).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.diagnose.statuses import CUT_SHORT, NO_CHANGE, Shown, ended_statuses
from sitegen.eventlog import dotgraph, payload
from sitegen.eventlog.reader import read_log
from sitegen.eventlog.schema import TaskEnd
from sitegen.svg import dag
from tests.helpers.logs import SNOWFLAKE_IDS, job_lines, upstream_job_lines, write

FAILED, DONE, RUNNING, OLD_RUNNING = SNOWFLAKE_IDS

# Upstream's field order (serde writes fields in declaration order): ballista/history's
# event.rs and ballista/api-types' dto.rs.
JOB_START_KEYS = [
    "job_id",
    "job_name",
    "queued_at",
    "submitted_at",
    "logical_plan",
    "physical_plan",
]
TASK_END_KEYS = [
    "stage_id", "task_id", "executor_id", "status", "launch_time", "start_exec_time",
    "end_exec_time", "metrics",
]  # fmt: skip
JOB_END_KEYS = [
    "status", "queued_at", "started_at", "completed_at", "index", "job", "stages", "config", "dot",
]  # fmt: skip
STAGE_KEYS = [
    "stage_id", "stage_status", "input_rows", "output_rows", "elapsed_compute", "stage_plan",
    "task_duration_percentiles", "task_input_percentiles", "tasks",
]  # fmt: skip
TASK_KEYS = [
    "id", "status", "partition_id", "scheduled_time", "launch_time", "start_exec_time",
    "end_exec_time", "exec_duration", "finish_time", "input_rows", "output_rows",
]  # fmt: skip


def test_the_logs_are_written_as_upstream_writes_them() -> None:
    records = [msgspec.json.decode(line) for line in upstream_job_lines(FAILED, outcome="failed")]
    kinds = [r["ev"] for r in records]
    assert kinds[0] == "JobStart" and kinds[-1] == "JobEnd"
    assert set(kinds[1:-1]) == {"TaskEnd"}  # no StageStart, no StageEnd
    assert list(records[0]["data"]) == JOB_START_KEYS
    assert all(list(r["data"]) == TASK_END_KEYS for r in records[1:-1])
    end = records[-1]["data"]
    assert list(end) == JOB_END_KEYS
    assert end["index"]["status"] == "Failed" and "Failed" in end["status"]
    stages = end["stages"]["stages"]
    ids = [s["stage_id"] for s in stages]
    assert ids == ["2", "3", "1"]  # a hash map's order
    assert all(list(s) == STAGE_KEYS for s in stages)
    assert all(list(t) == TASK_KEYS for s in stages for t in s["tasks"])
    (failing,) = [s for s in stages if s["stage_id"] == "3"]
    assert failing["stage_status"] == "Running"
    words = [t["status"] if isinstance(t["status"], str) else "Failed" for t in failing["tasks"]]
    assert {"Successful", "Failed", "Running"} <= set(words)
    assert 'label = "Stage 3 [Running]";' in end["dot"]
    # A running task has no TaskEnd: only ended attempts are recorded.
    running = [t["id"] for t in failing["tasks"] if t["status"] == "Running"]
    ended = {(r["data"]["stage_id"], r["data"]["task_id"]) for r in records[1:-1]}
    assert running and not any((3, task) in ended for task in running)


def test_the_stages_payload_is_read_in_stage_order() -> None:
    raw = msgspec.json.encode(
        {"stages": [{"stage_id": sid} for sid in ("10", "2", "x", "9", "01", "1")]}
    )
    assert [s.stage_id for s in payload.stages(raw)] == ["01", "1", "2", "9", "10", "x"]
    # The lenient path (a task entry null) sorts the same way.
    raw = raw.replace(b'"stage_id":"2"', b'"stage_id":"2","tasks":[null]')
    assert [s.stage_id for s in payload.stages(raw)] == ["01", "1", "2", "9", "10", "x"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("shapes")
    logs = root / "logs"
    logs.mkdir()
    write(logs / f"{FAILED}.eventlog", upstream_job_lines(FAILED, outcome="failed"))
    write(logs / f"{DONE}.eventlog", upstream_job_lines(DONE, stages=4))
    write(logs / f"{RUNNING}.eventlog.running", upstream_job_lines(RUNNING, outcome="running"))
    build(BuildOptions(log_dirs=logs, output=root / "site", workers=1))
    return root


def _stage_rows(page: str) -> list[tuple[str, str]]:
    """Return the job page's stage table as (stage id, status cell) rows, in order."""
    table = page[page.index('<table class="stages">') :]
    table = table[: table.index("</table>")]
    return re.findall(r">Stage ([^<]+)</a></th>\n<td data-v=\"[^\"]*\">(.*?)</td>", table)


def test_pages_list_stages_in_stage_order_and_the_api_keeps_the_payloads(site: Path) -> None:
    out = site / "site"
    for job, count in ((FAILED, 3), (DONE, 4)):
        page = (out / f"jobs/{job}/index.html").read_text()
        assert [sid for sid, _ in _stage_rows(page)] == [str(n) for n in range(1, count + 1)]
        legend = re.findall(
            r'<span class="legend"><span class="swatch c\d+"></span>stage (\w+)', page
        )
        assert legend == [str(n) for n in range(1, count + 1)]
        trace = json.loads((out / f"jobs/{job}/trace.json").read_bytes())
        spans = [e["args"]["stage"] for e in trace["traceEvents"] if e.get("cat") == "stage"]
        assert spans == sorted(spans, key=int)
        # Byte for byte, in the payload's own (hash map) order.
        read = read_log(site / f"logs/{job}.eventlog")
        assert read.job_end is not None
        served = (out / f"api/job/{job}/stages").read_bytes()
        assert served == bytes(read.job_end.stages)
        ids = [s["stage_id"] for s in json.loads(served)["stages"]]
        assert ids[0] == "2" and ids != sorted(ids, key=int)
        assert (out / f"api/job/{job}/dot").read_text() == read.job_end.dot


def test_a_failed_jobs_running_stage_shows_as_failed(site: Path) -> None:
    out = site / "site"
    page = (out / f"jobs/{FAILED}/index.html").read_text()
    rows = dict(_stage_rows(page))
    assert ">Successful<" in rows["1"] and ">Successful<" in rows["2"]
    assert '<span class="badge st-failed">Failed</span>' in rows["3"]
    assert "cut short when the job failed; the scheduler&#39;s payload says Running" in rows["3"]
    # The DAG says so too, with the note in the stage's tooltip.
    assert 'Stage 3 · <tspan class="dag-status">Failed</tspan>' in page
    assert "Stage 3 [Failed]: cut short when the job failed" in page
    assert 'dag-status">Running<' not in page
    stage = (out / f"jobs/{FAILED}/stage-3.html").read_text()
    assert '<h1>Stage 3 <span class="badge st-failed">Failed</span></h1>' in stage
    assert "the scheduler&#39;s payload says Running" in stage
    # Its task still listed as running was cut short (not "still running").
    assert '<span class="badge st-cut-short">Cut short</span>' in stage
    assert '<span class="badge st-running">' not in stage
    # It never ended: no end time and no duration (the payload's exec_duration 0 is no time).
    rows = [r for r in stage.split("\n") if "Cut short</span>" in r]
    assert len(rows) == 2  # tasks 2 and 5 of 6
    assert all(r.endswith("<td>—</td><td>—</td><td>0</td><td>0</td></tr>") for r in rows)
    trace = json.loads((out / f"jobs/{FAILED}/trace.json").read_bytes())
    words = {e["args"]["stage"]: e["args"]["status"] for e in trace["traceEvents"]
             if e.get("cat") == "stage"}  # fmt: skip
    assert words["3"] == "Failed"
    # The API keeps the scheduler's word.
    stages = json.loads((out / f"api/job/{FAILED}/stages").read_bytes())["stages"]
    assert {s["stage_id"]: s["stage_status"] for s in stages}["3"] == "Running"
    assert "Stage 3 [Running]" in (out / f"api/job/{FAILED}/dot").read_text()


def test_a_succeeded_job_keeps_the_payloads_words(site: Path) -> None:
    page = (site / f"site/jobs/{DONE}/index.html").read_text()
    assert all(">Successful<" in cell for _, cell in _stage_rows(page))
    assert "payload says" not in page


def _running_table(out: Path) -> tuple[list[str], list[list[str]]]:
    """Return the running page's column heads and its rows' cells (text only)."""
    page = (out / "running/index.html").read_text()
    heads = re.findall(r'<th scope="col"[^>]*>([^<]+)</th>', page)
    body = page[page.index("<tbody>") : page.index("</tbody>")]
    rows = [
        [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row)]
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body)
    ]
    return heads, rows


def test_the_running_page_shows_what_a_log_without_stage_records_knows(site: Path) -> None:
    heads, rows = _running_table(site / "site")
    assert "Stages started" not in heads and "Stages ended" not in heads
    assert heads[4:] == [
        "Stages with a finished task", "Task attempts finished", "Failed", "Last activity (UTC)",
    ]  # fmt: skip
    (row,) = rows
    read = read_log(site / f"logs/{RUNNING}.eventlog.running")
    assert row[0].startswith(RUNNING)
    assert row[4:7] == [str(len({t.stage_id for t in read.tasks})), str(len(read.tasks)), "0"]
    assert row[4] == "2"  # stage 1 ended, stage 2 ran some tasks: a TaskEnd cannot tell more


def test_the_running_page_keeps_stage_records_where_a_log_has_them(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write(
        logs / f"{OLD_RUNNING}.eventlog.running",
        job_lines(OLD_RUNNING, outcome="running", stages=3),
    )
    write(logs / f"{RUNNING}.eventlog.running", upstream_job_lines(RUNNING, outcome="running"))
    build(BuildOptions(log_dirs=logs, output=tmp_path / "site", workers=1))
    heads, rows = _running_table(tmp_path / "site")
    assert heads[4:7] == ["Stages with a finished task", "Stages started", "Stages ended"]
    by_job = {row[0][:13]: row for row in rows}
    assert by_job[OLD_RUNNING][4:7] == ["2", "2", "1"]  # stage 2 started, still running
    assert by_job[RUNNING][4:7] == ["2", "0", "0"]


def _stage(sid: str, status: str, *tasks: object) -> payload.Stage:
    raw = msgspec.json.encode(
        {"stages": [{"stage_id": sid, "stage_status": status,
                     "tasks": [{"id": n, "status": s} for n, s in enumerate(tasks)]}]}
    )  # fmt: skip
    (stage,) = payload.stages(raw)
    return stage


def _failed_end(stage_id: int) -> TaskEnd:
    failed = {"Failed": {"reason": "ExecutionError", "error": "boom"}}
    return TaskEnd(stage_id, 0, "executor-1", failed, 10, 20)


FAILED_JOB = {"Failed": "Job failed due to stage 3 failed: boom\n"}


def test_ended_statuses_name_the_stage_a_job_failed_in() -> None:
    ok = _stage("1", "Successful", "Successful")
    failing = _stage("3", "Running", "Successful", "Running")
    beside = _stage("2", "Running", "Running")
    statuses = ended_statuses(FAILED_JOB, [(ok, []), (beside, []), (failing, [_failed_end(3)])])
    assert statuses.stage("3", "Running").word == "Failed"
    assert statuses.stage("03", "Running").word == "Failed"  # one stage, however written
    assert statuses.stage("2", "Running") == Shown(
        CUT_SHORT, "still running when the job failed; the scheduler's payload says Running"
    )
    assert statuses.stage("1", "Successful") == Shown("Successful")
    running = payload.task_status("Running")
    assert statuses.task_state(running).word == CUT_SHORT
    assert statuses.task_state(payload.SUCCESSFUL) is payload.SUCCESSFUL


def test_ended_statuses_when_the_failure_is_only_in_the_payload_or_not_recorded() -> None:
    failed_task = {"Failed": {"reason": "ExecutionError", "error": "boom"}}
    in_payload = _stage("4", "Running", failed_task, "Running")
    assert ended_statuses(FAILED_JOB, [(in_payload, [])]).stage("4", "Running").word == "Failed"
    # No failed attempt recorded (TaskEnd records dropped): the only Running stage failed.
    lone = _stage("4", "Running", "Running")
    assert ended_statuses(FAILED_JOB, [(lone, [])]).stage("4", "Running").word == "Failed"
    # Two Running stages and no failure seen: neither is named as the one that failed.
    other = _stage("5", "Running", "Running")
    both = ended_statuses(FAILED_JOB, [(lone, []), (other, [])])
    assert {both.stage(s, "Running").word for s in ("4", "5")} == {CUT_SHORT}
    # An older scheduler that marked the stage Failed: a Running one beside it was cut short.
    marked = _stage("6", "Failed", failed_task)
    assert ended_statuses(FAILED_JOB, [(marked, []), (lone, [])]).stage("4", "Running").word == (
        CUT_SHORT
    )


def test_ended_statuses_of_cancelled_and_succeeded_jobs() -> None:
    running = _stage("2", "Running", "Successful", "Running")
    cancelled = ended_statuses("Cancelled", [(running, [])])
    assert cancelled.stage("2", "Running") == Shown(
        "Cancelled", "cut short when the job was cancelled; the scheduler's payload says Running"
    )
    assert cancelled.task_state(payload.task_status("Running")).word == CUT_SHORT
    assert ended_statuses("Succeeded", [(running, [])]) is NO_CHANGE
    assert NO_CHANGE.stage("2", "Running") == Shown("Running")
    assert NO_CHANGE.task_state(payload.task_status("Running")).word == "Running"


def _dot(order: list[int]) -> str:
    clusters = [
        f'\tsubgraph cluster{n} {{\n\t\tlabel = "Stage {sid} [Successful]";\n'
        f'\t\tstage_{sid}_0 [shape=box, label="ShuffleWriterExec"]\n'
        f'\t\tstage_{sid}_0_0 [shape=box, label="ShuffleReaderExec"]\n'
        f"\t\tstage_{sid}_0_0 -> stage_{sid}_0\n\t}}\n"
        for n, sid in enumerate(order)
    ]
    links = "\tstage_1_0 -> stage_3_0_0\n\tstage_2_0 -> stage_3_0_0\n"
    return "digraph G {\n" + "".join(clusters) + links + "}\n"


def test_the_stage_dag_is_laid_out_in_stage_order_whatever_the_dots() -> None:
    drawn = {
        dag.stage_dag(dotgraph.parse(_dot(order)), {}, "DAG") for order in ([1, 2, 3], [3, 1, 2])
    }
    assert len(drawn) == 1
