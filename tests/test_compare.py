"""A run side by side with its previous successful run: ``jobs/<id>/compare.html``."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import msgspec

import sitegen
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.finding import Finding, FindingKind, FindingSeverity
from sitegen.render.compare import config_changes, finding_changes
from tests.helpers.logs import failed_task_end, write, write_series

# The bundled nightly-etl runs, oldest first (NeOQvte failed).
NIGHTLY = ["g7DfaPu", "YzO5Zlz", "lwMlrsR", "NeOQvte", "q8W07P2", "qBGokU4", "v1w8ozD"]


def _nightly(tmp_path: Path, ids: list[str]) -> Path:
    """Copy the bundled nightly-etl runs ``ids`` into a log dir of their own."""
    logs = tmp_path / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    for job_id in ids:
        shutil.copy(EXAMPLE_LOG_DIR / f"{job_id}.eventlog", logs / f"{job_id}.eventlog")
    return logs


def _href(html: str, anchor_id: str) -> str:
    """Return the href of the link with ``id=anchor_id``."""
    found = re.search(rf'<a id="{anchor_id}" href="([^"]+)"', html)
    assert found, anchor_id
    return found.group(1)


def test_every_recurring_run_with_a_baseline_links_its_compare_page(tmp_path: Path) -> None:
    logs = _nightly(tmp_path, NIGHTLY)
    out = tmp_path / "site"
    sitegen.build(logs, out, workers=1)
    pages = sorted(p.parent.name for p in (out / "jobs").glob("*/compare.html"))
    # The oldest run has no run before it; every other run has a successful one before it.
    assert pages == sorted(NIGHTLY[1:])
    for job_id in pages:
        page = out / "jobs" / job_id / "index.html"
        href = _href(page.read_text(), "compare-link")
        target = (page.parent / href).resolve()
        assert target == (out / "jobs" / job_id / "compare.html").resolve()
        html = target.read_text()
        assert 'id="compare-stages"' in html
        assert html.count('<th scope="row">') >= 2  # stage rows
        # The baseline's findings are paired in the browser (the page is the same whichever
        # build made it): the page holds both runs' findings.json addresses.
        assert f'data-before="../../jobs/{_baseline(html)}/findings.json"' in html
    assert 'id="compare-link"' not in (out / "jobs" / NIGHTLY[0] / "index.html").read_text()


def _baseline(html: str) -> str:
    """Return the job id a compare page compares with."""
    found = re.search(r"against the previous successful run, <a [^>]*><code>([^<]+)</code>", html)
    assert found
    return found.group(1)


def test_the_page_is_the_same_whichever_build_published_the_baseline(tmp_path: Path) -> None:
    once = tmp_path / "once"
    sitegen.build(_nightly(once, NIGHTLY), once / "site", workers=1)
    twice = tmp_path / "twice"
    logs = _nightly(twice, NIGHTLY[:-1])
    sitegen.build(logs, twice / "site", workers=1)
    _nightly(twice, NIGHTLY[-1:])
    sitegen.build(logs, twice / "site", workers=1)
    page = f"jobs/{NIGHTLY[-1]}/compare.html"
    html = (twice / "site" / page).read_text()
    assert html == (once / "site" / page).read_text()
    # The newest nightly-etl run regressed: listed among this run's findings.
    listed = html.split('id="findings-now"')[1].split("</ul>")[0]
    assert "regression" in listed
    assert "None: both runs ran with the same config." in html


def _with_config(lines: list[bytes], config: dict[str, str]) -> list[bytes]:
    """Return a log's lines with its JobEnd's config replaced (keys sorted, as Ballista's)."""
    out = []
    for line in lines:
        envelope = msgspec.json.decode(line)
        if envelope.get("ev") == "JobEnd":
            envelope["data"]["config"] = dict(sorted(config.items()))
            line = msgspec.json.encode(envelope) + b"\n"
        out.append(line)
    return out


def test_hostile_names_and_config_values_are_escaped(tmp_path: Path) -> None:
    name = '<img src=n onerror=alert("n")>'  # no "/": its runs' ids are made of it
    logs = tmp_path / "logs"
    ids = write_series(logs, name, ["2435", "2435"])
    newest = logs / f"{ids[1]}.eventlog"
    hostile = {"a.key<b>": "x", "datafusion.execution.batch_size": '"><img src=x onerror=1>'}
    write(newest, _with_config(newest.read_bytes().splitlines(keepends=True), hostile))
    out = tmp_path / "site"
    sitegen.build(logs, out, workers=1)
    pages = list((out / "jobs").glob("*/compare.html"))
    assert len(pages) == 1
    html = pages[0].read_text()
    assert "<img" not in html
    assert "&lt;img src=n onerror=alert(&#34;n&#34;)&gt;" in html
    assert "&lt;img src=x onerror=1&gt;" in html
    assert "a.key&lt;b&gt;" in html and 'id="compare-config"' in html


def test_rows_across_the_counting_change_are_not_comparable(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    ids = write_series(logs, "etl", ["before", "2435"])
    out = tmp_path / "site"
    sitegen.build(logs, out, workers=1)
    html = (out / "jobs" / ids[1] / "compare.html").read_text()
    assert 'id="rows-not-comparable"' in html and "not comparable</span>" in html
    same = tmp_path / "same"
    ids = write_series(same / "logs", "etl", ["2435", "2435"])
    sitegen.build(same / "logs", same / "site", workers=1)
    html = (same / "site" / "jobs" / ids[1] / "compare.html").read_text()
    assert 'id="rows-not-comparable"' not in html


def _finding(kind: FindingKind, stage: int | None, executor: str | None = None) -> Finding:
    return Finding(kind, FindingSeverity.WARNING, stage, None, executor, 1.0, "m")


def test_findings_pair_by_kind_stage_and_executor_not_figures() -> None:
    before = [_finding(FindingKind.STRAGGLER, 1), _finding(FindingKind.SLOW_EXECUTOR, None, "e1")]
    now = [
        Finding(FindingKind.STRAGGLER, FindingSeverity.CRITICAL, 1, 7, None, 9.0, "other"),
        _finding(FindingKind.SLOW_EXECUTOR, None, "e2"),
    ]
    found = finding_changes(now, before)
    assert [f.executor_id for f in found.appeared] == ["e2"]
    assert [f.executor_id for f in found.went] == ["e1"]
    assert [f.kind for f in found.stayed] == [FindingKind.STRAGGLER]


def test_config_changes_name_keys_set_on_one_side_only() -> None:
    changes = config_changes({"a": "1", "b": "2", "c": "3"}, {"a": "1", "b": "9", "d": "4"})
    assert [(c.key, c.now, c.before) for c in changes] == [
        ("b", "2", "9"),
        ("c", "3", None),
        ("d", None, "4"),
    ]


def test_failed_attempts_count_retries_the_task_list_hides(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    ids = write_series(logs, "etl", ["2435", "2435"])
    # The newer run's task 0 of stage 1 failed twice before it succeeded: its stages payload
    # lists the success only.
    path = logs / f"{ids[1]}.eventlog"
    lines = path.read_bytes().splitlines(keepends=True)
    start = 1_767_225_600_000 + 86_400_000
    retries = [
        failed_task_end(1, 0, "executor-1", "lost", (start + 1, start + 2, start + 3 + n))
        for n in range(2)
    ]
    write(path, [*lines[:-1], *retries, lines[-1]])
    out = tmp_path / "site"
    sitegen.build(logs, out, workers=1)
    html = (out / "jobs" / ids[1] / "compare.html").read_text()
    row = re.search(r'<tr><th scope="row">1</th>(.*?)</tr>', html, re.S)
    assert row, html
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", row.group(1))
    # Duration, task median and slowest task take 3 cells each; then this run's and the
    # previous run's failed attempts.
    assert cells[9:11] == ["2", "0"], cells
    assert "Failed attempts" in html
    found = msgspec.json.decode((out / "jobs" / ids[1] / "findings.json").read_bytes())
    assert found["failed_attempts"] == {"1": 2}
    before = msgspec.json.decode((out / "jobs" / ids[0] / "findings.json").read_bytes())
    assert before["failed_attempts"] == {}
