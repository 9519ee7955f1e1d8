"""Stages a replan dropped (Ballista #2192): TaskEnd records name them, the payload does not.

Such a log is published; the dropped stage's attempts are a row of the job page's stages
table, a stage page without plan or DOT, rows of the SQL ``tasks`` table (no ``stages`` row),
bars of the timeline and, where judged, findings: each marked "dropped by a replan". The
``/api`` files keep the payload's bytes.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.diagnose.analysis import analyse
from sitegen.diagnose.diagnosis import diagnose, facts_of
from sitegen.diagnose.replanned import DROPPED, stages_named
from sitegen.eventlog import dotgraph, payload
from sitegen.eventlog.reader import read_log
from sitegen.finding import FindingKind
from sitegen.render import urls
from sitegen.render.jobpage import build_stages
from tests.conftest import require_module
from tests.helpers.logs import REPLANNED_STAGE, SNOWFLAKE_IDS, replanned_job_lines, write
from tests.test_stage_shapes import JOB_END_KEYS, TASK_END_KEYS, _stage_rows

JOB, FAILED_JOB = SNOWFLAKE_IDS[:2]
HOSTILE = '<script>alert("x")</script> & q3'
# Stage 2 of 4 dropped; its task 1 a straggler (15x its stage's time, tasks otherwise within
# 180-220 ms), two of its tasks retried.
KNOBS = {
    "straggler": (REPLANNED_STAGE, 1),
    "retries": 3,
    "tasks_per_stage": 8,
    "spread": (180, 220),
    "stage1_straggler": False,
}


def _records(lines: list[bytes]) -> list[dict]:
    return [msgspec.json.decode(line) for line in lines]


def test_the_log_is_upstream_shaped_and_its_payload_lacks_a_stage_its_taskends_name() -> None:
    records = _records(replanned_job_lines(JOB, **KNOBS))
    assert {r["ev"] for r in records[1:-1]} == {"TaskEnd"}
    assert all(list(r["data"]) == TASK_END_KEYS for r in records[1:-1])
    end = records[-1]["data"]
    assert list(end) == JOB_END_KEYS
    named = {s["stage_id"] for s in end["stages"]["stages"]}
    assert named == {"1", "3", "4"}
    assert {r["data"]["stage_id"] for r in records[1:-1]} == {1, 2, 3, 4}
    assert "Stage 2 [" not in end["dot"] and "stage=2" not in end["dot"]
    assert end["index"]["num_stages"] == 3 and end["index"]["percent_complete"] == 100


def _read(tmp_path: Path, lines: list[bytes], name: str = JOB):
    read = read_log(write(tmp_path / f"{name}.eventlog", lines))
    assert read.job_end is not None
    return read


def test_facts_list_the_dropped_stage_after_the_payloads_with_its_attempts(tmp_path: Path) -> None:
    read = _read(tmp_path, replanned_job_lines(JOB, **KNOBS))
    assert read.job_end is not None
    stages = payload.stages(read.job_end.stages)
    facts = facts_of(read, stages, dotgraph.parse(read.job_end.dot))
    assert facts.dropped == {REPLANNED_STAGE}
    assert [s.stage_id for s, _ in facts.stages] == ["1", "3", "4", "2"]
    dropped, ends = facts.stages[-1]
    assert dropped.stage_status == DROPPED and dropped.stage_plan is None
    assert ends and all(e.stage_id == REPLANNED_STAGE for e in ends)
    assert ends == [t for t in read.tasks if t.stage_id == REPLANNED_STAGE]
    # A row per attempt, failed ones too: the payload lists last attempts only.
    assert [(r.id, r.start_exec_time) for r in dropped.task_list] == [
        (e.task_id, e.start_exec_time) for e in ends
    ]
    assert any(payload.task_status(r.status).failed for r in dropped.task_list)
    # Every attempt is in ``tasks`` once, the dropped stage's too.
    assert facts.tasks == read.tasks


def test_a_straggler_in_a_dropped_stage_is_judged_and_says_so(tmp_path: Path) -> None:
    read = _read(tmp_path, replanned_job_lines(JOB, **KNOBS))
    assert read.job_end is not None
    facts = facts_of(read, payload.stages(read.job_end.stages), dotgraph.parse(read.job_end.dot))
    found = diagnose(facts)
    (straggler,) = [f for f in found.findings if f.kind is FindingKind.STRAGGLER]
    assert (straggler.stage_id, straggler.task_id) == (REPLANNED_STAGE, 1)
    assert f"Stage {REPLANNED_STAGE} was {DROPPED}" in straggler.message
    assert straggler.impact_ms is not None  # costed by the replay, which has its attempts
    assert any(s == REPLANNED_STAGE for s, _, _ in found.straggler_attempts)
    # Its row on the stage page is flagged: rows are its attempts, found by id and times.
    assert found.flagged_rows[REPLANNED_STAGE]
    # The critical path walks the final plan's DAG, without the dropped stage.
    assert found.critical_path is not None
    assert str(REPLANNED_STAGE) not in found.critical_path.stages
    # Findings about the payload's stages do not mention it.
    assert all(DROPPED not in f.message for f in found.findings if f.stage_id != REPLANNED_STAGE)


def test_a_failed_job_with_a_dropped_stage_is_diagnosed(tmp_path: Path) -> None:
    read = _read(tmp_path, replanned_job_lines(FAILED_JOB, outcome="failed", retries=3))
    analysis = analyse(read, "x")
    assert analysis.dropped == {REPLANNED_STAGE}
    assert analysis.summary.root_cause  # the failing stage is the payload's last
    assert [s.stage_id for s in analysis.summary.stages] == ["1", "3", "4"]


@pytest.mark.parametrize("odd", ["02", "stage-2", "2.0", " 2", "+2", "stage 2", "2-2"])
def test_a_dropped_stage_never_takes_a_payload_stages_page(tmp_path: Path, odd: str) -> None:
    lines = replanned_job_lines(JOB, **KNOBS)
    # The payload's stage 4 renamed: an id that reads as 2, or looks like stage 2's page.
    lines[-1] = lines[-1].replace(b'"stage_id":"4"', b'"stage_id":%s' % json.dumps(odd).encode())
    analysis = analyse(_read(tmp_path, lines), "x")
    infos = build_stages(analysis)
    files = [urls.stage_file_name(i.segment) for i in infos]
    assert len(set(files)) == len(files)
    listed = [s.stage_id for s in payload.stages(_read(tmp_path, lines).job_end.stages)]
    # The payload's stages keep the pages they have without any dropped stage.
    assert [i.segment for i in infos if not i.dropped] == urls.stage_segments(listed)
    named_two = payload.as_int(odd) == REPLANNED_STAGE
    assert ({i.stage.stage_id for i in infos if i.dropped} == {"2", "4"}) is not named_two


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("replanned")
    logs = root / "logs"
    logs.mkdir()
    write(logs / f"{JOB}.eventlog", replanned_job_lines(JOB, HOSTILE, **KNOBS))
    write(logs / f"{FAILED_JOB}.eventlog", replanned_job_lines(FAILED_JOB, outcome="failed"))
    report = build(BuildOptions(log_dirs=logs, output=root / "site", workers=1))
    assert report.published == 2 and not report.problems
    return root


def test_the_job_page_lists_the_dropped_stage_marked(site: Path) -> None:
    page = (site / f"site/jobs/{JOB}/index.html").read_text()
    rows = _stage_rows(page)
    assert [sid for sid, _ in rows] == ["1", "3", "4", "2"]
    assert DROPPED in rows[-1][1] and all(DROPPED not in cell for _, cell in rows[:-1])
    assert f"stage {REPLANNED_STAGE} ({DROPPED})" in page  # the timeline's legend
    assert f"stage {REPLANNED_STAGE} ({DROPPED}) &#183;" in page  # its bars' tips
    assert f"without {stages_named([REPLANNED_STAGE])} ({DROPPED})" in page  # critical path
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#34;x&#34;)" in page


def test_the_dropped_stage_has_a_page_without_plan_or_dot(site: Path) -> None:
    page = (site / f"site/jobs/{JOB}/stage-{REPLANNED_STAGE}.html").read_text()
    assert page.count(DROPPED) >= 3  # badge, note, operators, finding
    assert 'id="plan"' not in page and '<svg class="dag' not in page
    assert (
        "has no cluster in the job&#39;s DOT" in page or "has no cluster in the job's DOT" in page
    )
    # A row per attempt, the straggler flagged; the retried ones' failures listed.
    records = _records((site / f"logs/{JOB}.eventlog").read_bytes().splitlines(keepends=True))
    ends = [r["data"] for r in records if r["ev"] == "TaskEnd"]
    mine = [e for e in ends if e["stage_id"] == REPLANNED_STAGE]
    assert page.count("<tr id=task-") + page.count("<tr class=") >= len(
        {e["task_id"] for e in mine}
    )
    assert "&#9873; straggler" in page
    if any(e["status"] != "Successful" for e in mine):
        assert 'id="failed"' in page
    assert "<script>alert" not in page


def test_the_api_keeps_the_payloads_bytes(site: Path) -> None:
    for job in (JOB, FAILED_JOB):
        line = (site / f"logs/{job}.eventlog").read_bytes().splitlines()[-1]
        end = msgspec.json.decode(line)["data"]
        raw = re.search(rb'"stages":(\{"stages":.*?\]\}\]\}|\{"stages":\[.*?\]\}),"config"', line)
        assert raw is not None
        served = (site / f"site/api/job/{job}/stages").read_bytes()
        assert served == raw.group(1)
        assert REPLANNED_STAGE not in {int(s["stage_id"]) for s in end["stages"]["stages"]}
        assert not (site / f"site/api/job/{job}/stage/{REPLANNED_STAGE}").exists()


def test_the_trace_names_the_dropped_stage(site: Path) -> None:
    trace = json.loads((site / f"site/jobs/{JOB}/trace.json").read_bytes())
    spans = {
        e["args"]["stage"]: e["args"]["status"]
        for e in trace["traceEvents"]
        if e.get("cat") == "stage"
    }
    assert spans[str(REPLANNED_STAGE)] == DROPPED


def test_sql_tasks_hold_the_dropped_stages_attempts_and_stages_do_not(site: Path) -> None:
    require_module("pyarrow", "sql")
    from tests.helpers.sqldata import rows as read

    out = site / "site"
    records = _records((site / f"logs/{JOB}.eventlog").read_bytes().splitlines(keepends=True))
    mine = [r for r in records if r["ev"] == "TaskEnd" and r["data"]["stage_id"] == REPLANNED_STAGE]
    tasks = [t for t in read(out, "tasks") if t["job_id"] == JOB]
    dropped = [t for t in tasks if t["stage_id"] == REPLANNED_STAGE]
    assert len(dropped) == len(mine)
    assert all(t["partition_id"] is None for t in dropped)  # no payload row names one
    assert sum(t["input_rows"] or 0 for t in dropped) == sum(
        r["data"]["metrics"]["input_rows"] for r in mine
    )
    stages = [s["stage_id"] for s in read(out, "stages") if s["job_id"] == JOB]
    assert sorted(stages) == [1, 3, 4]
