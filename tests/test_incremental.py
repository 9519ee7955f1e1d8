from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.builder.contexts import foresight
from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.plan import planner
from sitegen.builder.report import BuildReport
from sitegen.builder.state.identity import changed_logs, identity_digest
from sitegen.builder.state.records import Identities
from sitegen.builder.state.schema import FORMAT
from sitegen.builder.state.store import State, open_state
from sitegen.eventlog import rawlog
from sitegen.examples.generator import (
    BASE_TIME_MS,
    RECURRING_NAME,
    JobSpec,
    generate_job,
    write_log,
)
from sitegen.layout import STATE_NAME
from sitegen.model import Problem, ProblemKind
from sitegen.render import urls
from sitegen.render.listing import PAGE_CAPACITY
from sitegen.render.pages import PageRenderer
from tests.helpers.logs import FAILED_JOB, job_lines, write
from tests.helpers.sitetree import tree

_DAY = 86_400_000

STATE = STATE_NAME


def assert_same_as_clean(logs: Path, incremental: Path, tmp_path: Path, name: str) -> None:
    clean = tmp_path / f"clean-{name}"
    build(BuildOptions(logs, clean))
    assert tree(incremental) == tree(clean)


def add(logs: Path) -> None:
    write(logs / "added.eventlog", job_lines("added", start_ms=5_000_000_000_000))


def change(logs: Path) -> None:
    write(logs / "added.eventlog", job_lines("added", name="renamed query", stages=3))


def remove(logs: Path) -> None:
    (logs / "added.eventlog").unlink()


def complete_running(logs: Path) -> None:
    (running,) = logs.glob("*.eventlog.running")
    spec = JobSpec(job_id="finished", job_name="tpch-q22", stages=3, tasks_per_stage=4)
    running.unlink()
    write(logs / "finished.eventlog", list(generate_job(spec, 3)))
    running_spec = JobSpec(job_id="finished", job_name="tpch-q22", outcome="running")
    write(logs / "finished.eventlog.running", list(generate_job(running_spec, 3)))
    (logs / "finished.eventlog.running").rename(logs / "finished.eventlog")


def duplicate_then_remove_winner(logs: Path) -> None:
    write(logs / "dup-a.eventlog", job_lines("dup", start_ms=1_000))
    write(logs / "dup-b.eventlog", job_lines("dup", start_ms=9_000))


def remove_duplicate_winner(logs: Path) -> None:
    (logs / "dup-b.eventlog").unlink()


def touch_without_change(logs: Path) -> None:
    path = logs / "dup-a.eventlog"
    path.write_bytes(path.read_bytes())


def latest_run(site: Path, name: str) -> str:
    """Return the newest run of ``name`` as the site's names.json says."""
    names = json.loads((site / "names.json").read_bytes())["names"]
    return str(next(n for n in names if n["name"] == name)["latest_job_id"])


NEW_RUN_START = BASE_TIME_MS + 2 * 86_400_000


def add_recurring_run(logs: Path) -> None:
    """Add a newer run of the examples' recurring job (its predecessor's page stays as it is)."""
    write(logs / "etl-new.eventlog", job_lines("etl-new", RECURRING_NAME, start_ms=NEW_RUN_START))


def remove_recurring_run(logs: Path) -> None:
    """Remove that run again: the predecessor is the latest run once more."""
    (logs / "etl-new.eventlog").unlink()


STEPS: list[Callable[[Path], None]] = [
    add_recurring_run,
    remove_recurring_run,
    add,
    change,
    remove,
    complete_running,
    duplicate_then_remove_winner,
    remove_duplicate_winner,
    touch_without_change,
]


@pytest.mark.slow  # the examples changed step by step, each step also built clean
def test_incremental_builds_equal_clean_builds(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    first = build(BuildOptions(example_logs, site))
    assert first.rebuilt == first.logs
    for step in STEPS:
        step(example_logs)
        # Some steps rewrite a finished log in place: only --verify-logs sees that.
        report = build(BuildOptions(example_logs, site, trust_finished_logs=False))
        # Same bytes under a new mtime is nothing to rebuild.
        assert report.up_to_date == (step is touch_without_change), step.__name__
        assert report.rebuilt < report.logs, step.__name__
        assert_same_as_clean(example_logs, site, tmp_path, step.__name__)


def test_only_changed_logs_are_read(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    build(BuildOptions(example_logs, site))
    unchanged = [site / "static" / "tables.js", site / "404.html", site / ".htaccess"]
    before = [(p.stat().st_ino, p.stat().st_mtime_ns) for p in unchanged]
    # A name of its own: a new run of a recurring name also rebuilds its predecessor.
    lines = job_lines("added", name="a name of its own", start_ms=5_000_000_000_000)
    write(example_logs / "added.eventlog", lines)
    report = build(BuildOptions(example_logs, site))
    assert report.rebuilt == 1
    assert report.published == 26
    # Site-wide files whose bytes did not change stay as they were (and are not counted).
    assert [(p.stat().st_ino, p.stat().st_mtime_ns) for p in unchanged] == before
    job_files = sum(1 for p in (site / "jobs" / "added").rglob("*") if p.is_file())
    job_files += sum(1 for p in (site / "api" / "job" / "added").rglob("*") if p.is_file())
    # The listings that name it, and one segment's data files (a file per table) and manifest.
    assert job_files < report.files_written < job_files + 12 + 6
    again = build(BuildOptions(example_logs, site))
    assert again.up_to_date
    assert again.published == 26 and sorted(again.skipped) == [
        "ended-unrecorded",
        "incomplete",
        "malformed",
    ]


@pytest.mark.slow  # builds compared with clean builds
def test_a_new_run_rebuilds_itself_alone(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    build(BuildOptions(example_logs, site))
    before = latest_run(site, RECURRING_NAME)
    page = site / "jobs" / before / "index.html"
    published = page.read_bytes()
    add_recurring_run(example_logs)
    report = build(BuildOptions(example_logs, site))
    # The new run alone: a page names only the runs before it, so its predecessor's is as it was.
    assert report.rebuilt == 1
    assert latest_run(site, RECURRING_NAME) == "etl-new"
    assert page.read_bytes() == published
    new = (site / "jobs" / "etl-new" / "index.html").read_text()
    assert f'rel="prev" href="../../jobs/{before}/index.html"' in new
    assert_same_as_clean(example_logs, site, tmp_path, "new-run")
    remove_recurring_run(example_logs)
    assert build(BuildOptions(example_logs, site)).rebuilt == 0  # no page named it
    assert page.read_bytes() == published
    assert_same_as_clean(example_logs, site, tmp_path, "run-removed")


@pytest.mark.slow  # builds compared with clean builds
def test_a_middle_run_removed_and_restored_equals_clean(tmp_path: Path, example_logs: Path) -> None:
    # Restored, the run is mapped afresh and is the baseline of the runs after it, whose
    # pages are rendered again in the same build: its summary must be there to compare with.
    site = tmp_path / "site"
    build(BuildOptions(example_logs, site))
    runs = json.loads((site / "names.json").read_bytes())["names"]
    (etl,) = [n for n in runs if n["name"] == RECURRING_NAME]
    assert etl["runs"] >= 5
    first = {p: json.loads(p.read_text().splitlines()[0])["data"] for p in example_logs.glob("*")}
    ours = sorted(
        (d["submitted_at"], p) for p, d in first.items() if d["job_name"] == RECURRING_NAME
    )
    middle = ours[1][1]  # succeeded: the baseline of the run after it
    aside = tmp_path / middle.name
    middle.rename(aside)
    assert build(BuildOptions(example_logs, site)).rebuilt >= 1
    assert_same_as_clean(example_logs, site, tmp_path, "middle-removed")
    aside.rename(middle)
    assert build(BuildOptions(example_logs, site)).rebuilt >= 2
    assert_same_as_clean(example_logs, site, tmp_path, "middle-restored")


@pytest.mark.slow  # builds compared with a clean build
def test_changed_template_rebuilds_everything_as_clean(tmp_path: Path, example_logs: Path) -> None:
    theme = tmp_path / "theme"
    theme.mkdir()
    site = tmp_path / "site"
    build(BuildOptions(example_logs, site, templates_dir=theme))
    assert build(BuildOptions(example_logs, site, templates_dir=theme)).up_to_date
    from sitegen.render.templates import default_template_dir

    shipped = (default_template_dir() / "404.html").read_text()
    (theme / "404.html").write_text(shipped.replace("Not found", "Nothing here"))
    report = build(BuildOptions(example_logs, site, templates_dir=theme))
    assert report.rebuilt == report.logs == 28
    assert "Nothing here" in (site / "404.html").read_text()
    build(BuildOptions(example_logs, tmp_path / "clean", templates_dir=theme))
    assert tree(site) == tree(tmp_path / "clean")


def test_no_op_build_writes_nothing(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    build(BuildOptions(example_logs, site))
    before = {p: p.stat().st_mtime_ns for p in site.rglob("*")}
    report = build(BuildOptions(example_logs, site))
    assert report.up_to_date
    assert {p: p.stat().st_mtime_ns for p in site.rglob("*")} == before


def test_a_no_op_reads_identities_not_the_state_whole(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    write(example_logs / "dup-a.eventlog", job_lines("dup", start_ms=1_000))
    write(example_logs / "dup-b.eventlog", job_lines("dup", start_ms=9_000))
    full = build(BuildOptions(example_logs, site, max_jobs=20))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a no-op loaded every log's row or selected again")

    monkeypatch.setattr(State, "known", refuse)
    monkeypatch.setattr(planner, "choose", refuse)
    monkeypatch.setattr(State, "site_bytes", refuse)  # the size the build measured
    quick = build(BuildOptions(example_logs, site, max_jobs=20))
    assert quick.up_to_date and quick.rebuilt == 0
    assert quick.site_bytes == full.site_bytes > 0
    # What it reports is what the build that selected said: the duplicate, the counts.
    assert quick.problems == full.problems
    assert any(p.kind == ProblemKind.DUPLICATE_ID for p in quick.problems)
    assert (quick.published, quick.retention_dropped) == (full.published, full.retention_dropped)
    assert quick.classifications == full.classifications
    # Another limit selects again (not quick), whatever the logs; its size is measured anew.
    monkeypatch.undo()
    fewer = build(BuildOptions(example_logs, site, max_jobs=10))
    assert fewer.published == 10 and fewer.site_bytes < full.site_bytes
    assert build(BuildOptions(example_logs, site, max_jobs=10)).site_bytes == fewer.site_bytes
    assert fewer.site_bytes == sum(p.stat().st_size for p in site.rglob("*") if p.is_file()) - (
        (site / STATE_NAME).stat().st_size
    )


def test_the_identity_digest_changes_with_any_log_name_size_time_or_order() -> None:
    from sitegen.eventlog.logfiles import LogFile, LogList

    def log(name: str, size: int = 10, mtime_ns: int = 5) -> LogFile:
        return LogFile(Path("logs"), name, name[:-9], False, size, mtime_ns, name)

    def digest_of(logs: list[LogFile]) -> str:
        return identity_digest(LogList.of(logs))

    digest = digest_of([log("a.eventlog"), log("b.eventlog")])
    assert digest_of([log("a.eventlog"), log("b.eventlog")]) == digest
    changed = [
        [log("a.eventlog"), log("c.eventlog")],
        [log("a.eventlog", size=11), log("b.eventlog")],
        [log("a.eventlog"), log("b.eventlog", mtime_ns=6)],
        [log("b.eventlog"), log("a.eventlog")],
        [log("a.eventlog")],
        # Sizes and times swapped between the two lists of numbers.
        [log("a.eventlog", size=5, mtime_ns=10), log("b.eventlog", size=5, mtime_ns=10)],
    ]
    digests = {digest_of(other) for other in changed}
    assert digest not in digests and len(digests) == len(changed)
    # The last time 64 bits of nanoseconds hold (discover clamps later ones to it).
    far = digest_of([log("a.eventlog", mtime_ns=2**63 - 1)])
    assert far != digest_of([log("a.eventlog", mtime_ns=2**63 - 2)])


def test_clean_and_changed_options_rebuild_everything(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    build(BuildOptions(example_logs, site))
    report = build(BuildOptions(example_logs, site, clean=True))
    assert report.rebuilt == report.logs == 28


def _corrupt(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the schema page: SQLite cannot read its tables
    path.write_bytes(bytes(data))


def _corrupt_rows(path: Path) -> None:
    data = bytearray(path.read_bytes())
    # Past the schema: the pages of the log table, which only a query of them reads.
    data[8192:] = b"\x5a" * (len(data) - 8192)
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    with path.open("r+b") as f:
        f.truncate(path.stat().st_size // 2)


def _garbage(path: Path) -> None:
    path.write_text("{not a database")


DAMAGES: list[Callable[[Path], None]] = [_corrupt, _corrupt_rows, _truncate, _garbage, Path.unlink]


@pytest.mark.slow  # five damaged states, each rebuilt and compared
@pytest.mark.parametrize("damage", DAMAGES, ids=lambda d: d.__name__)
def test_damaged_or_missing_state_means_full_build(
    tmp_path: Path, example_logs: Path, damage: Callable[[Path], None]
) -> None:
    site = tmp_path / "site"
    build(BuildOptions(example_logs, site))
    add(example_logs)  # what the damaged state would have got wrong, had it been trusted
    damage(site / STATE)
    report = build(BuildOptions(example_logs, site))
    assert report.rebuilt == report.logs == 29
    assert_same_as_clean(example_logs, site, tmp_path, "damaged")
    assert build(BuildOptions(example_logs, site)).up_to_date


def test_state_of_another_layout_means_full_build(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    build(BuildOptions(example_logs, site))
    with sqlite3.connect(site / STATE) as db:
        (value,) = db.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
        assert value == str(FORMAT)
        db.execute("UPDATE meta SET value = ? WHERE name = 'format'", (str(FORMAT + 1),))
    db.close()
    assert build(BuildOptions(example_logs, site)).rebuilt == 28
    assert build(BuildOptions(example_logs, site)).up_to_date


def test_a_full_builds_state_keeps_no_journal_and_a_later_builds_changes_stay_atomic(
    tmp_path: Path,
) -> None:
    path = tmp_path / STATE
    created = State.create(path, "fingerprint")
    assert created.db.execute("PRAGMA journal_mode").fetchone() == ("off",)
    created.commit()
    created.close()
    # The next build opens it with a rollback journal: a change it does not commit is undone.
    later = open_state(path)
    assert later is not None
    assert later.db.execute("PRAGMA journal_mode").fetchone() == ("delete",)
    later.begin()
    later._meta({"fingerprint": "changed"})
    later.close()
    reopened = open_state(path)
    assert reopened is not None and reopened.fingerprint == "fingerprint"
    reopened.close()


def test_site_of_the_json_manifest_is_replaced(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / ".sitegen-manifest.json").write_text("{}")  # as sitegen before the state wrote
    (site / "index.html").write_text("old")
    assert build(BuildOptions(example_logs, site)).rebuilt == 28
    assert not (site / ".sitegen-manifest.json").exists()


@pytest.mark.slow  # builds compared with clean builds
def test_a_note_rebuilds_only_its_job(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    build(BuildOptions(example_logs, site))
    notes = example_logs / "notes"
    notes.mkdir()
    page = site / "jobs" / FAILED_JOB / "index.html"
    for step, text in [("added", "Known flaky: **INC-123**"), ("edited", "Fixed in INC-124")]:
        (notes / f"{FAILED_JOB}.md").write_text(text)
        report = build(BuildOptions(example_logs, site))
        assert report.rebuilt == 1, step
        assert text.split(":")[0].split()[0] in page.read_text(), step
        assert_same_as_clean(example_logs, site, tmp_path, f"note-{step}")
    (notes / "not-a-job.md").write_text("a note for no job changes nothing")
    assert build(BuildOptions(example_logs, site)).up_to_date
    (notes / f"{FAILED_JOB}.md").unlink()
    report = build(BuildOptions(example_logs, site))
    assert report.rebuilt == 1
    assert "Operator note" not in page.read_text()
    assert_same_as_clean(example_logs, site, tmp_path, "note-removed")


def test_streamed_logs_build_the_same_site_as_held_ones(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Logs above rawlog.HOLD_LIMIT are read, hashed and compressed as streams instead.
    build(BuildOptions(example_logs, tmp_path / "held"))
    monkeypatch.setattr(rawlog, "HOLD_LIMIT", 0)
    build(BuildOptions(example_logs, tmp_path / "streamed"))
    held, streamed = tree(tmp_path / "held"), tree(tmp_path / "streamed")
    assert any(name.endswith("eventlog.gz") for name in held)
    assert held == streamed


def test_an_unreadable_note_is_a_warning_naming_it_until_fixed(
    tmp_path: Path, example_logs: Path
) -> None:
    site = tmp_path / "site"
    build(BuildOptions(example_logs, site))
    notes = example_logs / "notes"
    notes.mkdir()
    note = notes / f"{FAILED_JOB}.md"
    page = site / "jobs" / FAILED_JOB / "index.html"
    problems_page = site / "problems" / "index.html"

    def note_problems(report: BuildReport) -> list[Problem]:
        return [p for p in report.problems if p.kind is ProblemKind.UNREADABLE_NOTE]

    note.write_bytes(b"Caf\xe9 is down\n")  # Latin-1, not UTF-8
    report = build(BuildOptions(example_logs, site))
    assert report.rebuilt == 1  # a note that appears unreadable still changes the job
    reason = "the note is not UTF-8 (byte 0xe9 at offset 3)"
    expected = Problem(
        ProblemKind.UNREADABLE_NOTE, f"notes/{FAILED_JOB}.md", reason, None, FAILED_JOB
    )
    assert note_problems(report) == [expected]
    assert report.published == 25 and not expected.skipped
    assert "Operator note" not in page.read_text()
    assert reason in problems_page.read_text()
    again = build(BuildOptions(example_logs, site))
    assert again.up_to_date and note_problems(again) == [expected]  # still reported

    note.unlink()
    note.mkdir()  # a directory where the note should be
    report = build(BuildOptions(example_logs, site))
    assert [p.message for p in note_problems(report)] == [
        "skipped: a directory, not a regular file"
    ]

    note.rmdir()
    note.write_text("Café is down")
    report = build(BuildOptions(example_logs, site))
    assert note_problems(report) == [] and report.rebuilt == 1
    assert "Café is down" in page.read_text()
    assert "unreadable-note" not in problems_page.read_text()
    assert_same_as_clean(example_logs, site, tmp_path, "note-fixed")


# A history with archive pages: 110 small jobs 15 minutes apart (96 a day: the first day
# splits into 12-hour pages), and what each step of the sequence does to it.
HOURLY = 15 * 60_000


def small_job(logs: Path, n: int, start_ms: int) -> None:
    spec = JobSpec(f"job{n:03d}", f"query {n}", stages=1, tasks_per_stage=1, executors=1)
    spec.start_ms = start_ms
    write_log(logs, spec, seed=n)


def snapshot(site: Path) -> dict[str, tuple[int, int]]:
    return {
        str(p.relative_to(site)): (p.stat().st_ino, p.stat().st_mtime_ns)
        for p in site.rglob("*")
        if p.is_file()
    }


def rewritten(before: dict[str, tuple[int, int]], site: Path) -> list[str]:
    """Return the listing files (list/*) that a build wrote or removed."""
    after = snapshot(site)
    changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
    return sorted(k for k in changed if k.startswith("list/"))


@pytest.mark.slow  # 110 jobs, built seven times
def test_listing_pages_do_not_shift(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(110):
        small_job(logs, n, BASE_TIME_MS + n * HOURLY)
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    pages = len(list((site / "list").iterdir()))
    assert pages >= 6
    newest = BASE_TIME_MS + 110 * HOURLY

    def add_newest(max_jobs: int | None) -> int | None:
        small_job(logs, 1000, newest)
        return max_jobs

    def insert_long_job(max_jobs: int | None) -> int | None:
        # Started early (in the middle of the time order), finished just now.
        spec = JobSpec("long", "long report", stages=2, tasks_per_stage=2, executors=1)
        spec.start_ms = BASE_TIME_MS + 30 * HOURLY + 1
        write_log(logs, spec, seed=5)
        return max_jobs

    def remove_middle(max_jobs: int | None) -> int | None:
        (logs / "job040.eventlog").unlink()
        return max_jobs

    def keep_108(max_jobs: int | None) -> int | None:
        return 108  # of 111: the three oldest leave

    def add_under_retention(max_jobs: int | None) -> int | None:
        small_job(logs, 1001, newest + HOURLY)  # the oldest kept job leaves the site
        return max_jobs

    def keep_all(max_jobs: int | None) -> int | None:
        return None

    limit: int | None = None
    steps = [add_newest, insert_long_job, remove_middle, keep_108, add_under_retention, keep_all]
    for step in steps:
        limit = step(limit)
        before = snapshot(site)
        report = build(BuildOptions(logs, site, max_jobs=limit))
        assert report.rebuilt <= (4 if step is keep_all else 1), step.__name__  # dropped: 4
        clean = tmp_path / f"clean-{step.__name__}"
        build(BuildOptions(logs, clean, max_jobs=limit))
        assert tree(site) == tree(clean), step.__name__
        changed = rewritten(before, site)
        # Its page and its day's find part; under retention also the oldest page and its
        # part: at most 4 listing files, however many jobs there are.
        assert len(changed) <= 4, (step.__name__, changed)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.text("abcé/", min_size=1, max_size=4),
        st.tuples(st.integers(0, 3), st.integers(-2, 2)),
        max_size=12,
    ),
    st.lists(
        st.tuples(
            st.sampled_from(["add", "drop", "size", "time"]),
            st.text("abcé/", min_size=1, max_size=4),
        ),
        max_size=6,
    ),
    st.booleans(),
)
def test_changed_logs_agrees_with_comparing_every_identity(
    stored: dict[str, tuple[int, int]], edits: list[tuple[str, str]], shuffled: bool
) -> None:
    from sitegen.eventlog.logfiles import LogFile, LogList

    now = dict(stored)
    for edit, key in edits:
        if edit == "add":
            now.setdefault(key, (7, 7))
        elif edit == "drop":
            now.pop(key, None)
        elif key in now:
            size, mtime = now[key]
            now[key] = (size + 1, mtime) if edit == "size" else (size, mtime + 1)
    order = sorted(now, reverse=shuffled)  # several dirs list their logs in another order
    logs = LogList.of(LogFile(Path("d"), k, k, False, now[k][0], now[k][1], k) for k in order)
    keys = sorted(stored)
    identities = Identities(
        keys, ",".join(str(stored[k][0]) for k in keys), ",".join(str(stored[k][1]) for k in keys)
    )
    then = {(k, *v) for k, v in stored.items()}
    tuples = {(k, *v) for k, v in now.items()}
    differ = {k for k, _, _ in tuples - then}
    assert changed_logs(identities, logs) == (
        differ,
        {k for k, _, _ in then - tuples} - differ,
    )


# Where the spy below records the job pages rendered (a file: workers are forked).
RENDERED = "SITEGEN_TEST_RENDERED"


def _recording_job_pages(
    pages: PageRenderer, writer: Any, read: Any, analysis: Any, *a: Any
) -> None:
    """Render one job's pages as the build would, and record which job and process did."""
    with open(os.environ[RENDERED], "a") as record:
        record.write(f"{analysis.summary.job_id} {os.getpid()}\n")
    JOB_PAGES(pages, writer, read, analysis, *a)


JOB_PAGES = PageRenderer.job_pages


def _rendered(record: Path) -> list[str]:
    """Return the job ids the spy saw rendered, in order, and forget them."""
    found = [line.split()[0] for line in record.read_text().splitlines()]
    record.unlink()
    return found


def _hourly_runs(logs: Path, count: int) -> Path:
    """Write ``count`` completed runs of one job name, 15 minutes apart, into a new ``logs``."""
    logs.mkdir()
    for n in range(count):
        write(logs / f"run{n}.eventlog", job_lines(f"run{n}", start_ms=BASE_TIME_MS + n * HOURLY))
    return logs


def test_each_job_page_is_rendered_once_with_its_run_context(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twelve runs of one name: each page rendered once, knowing the runs before it."""
    logs = _hourly_runs(tmp_path / "logs", 12)
    record = tmp_path / "rendered"
    monkeypatch.setenv(RENDERED, str(record))
    monkeypatch.setattr(PageRenderer, "job_pages", _recording_job_pages)
    build(BuildOptions(logs, tmp_path / "alone", workers=1))
    assert sorted(_rendered(record)) == sorted(f"run{n}" for n in range(12))
    build(BuildOptions(logs, tmp_path / "pool", workers=2))
    assert sorted(_rendered(record)) == sorted(f"run{n}" for n in range(12))
    assert tree(tmp_path / "pool") == tree(tmp_path / "alone")
    page = (tmp_path / "pool" / "jobs" / "run5" / "index.html").read_text()
    assert 'rel="prev" href="../../jobs/run4/index.html"' in page
    assert "Compared with the previous successful run" in page and "run6" not in page
    # A new run, incrementally: its page alone is rendered; the run before it is unchanged.
    before = tree(tmp_path / "pool")
    write(logs / "run12.eventlog", job_lines("run12", start_ms=BASE_TIME_MS + 12 * HOURLY))
    build(BuildOptions(logs, tmp_path / "pool", workers=2))
    assert _rendered(record) == ["run12"]
    after = tree(tmp_path / "pool")
    assert after["jobs/run11/index.html"] == before["jobs/run11/index.html"]
    assert b'rel="prev" href="../../jobs/run11/index.html"' in after["jobs/run12/index.html"]


def test_a_run_its_peek_misread_is_rendered_again_right(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A TaskEnd the peek does not count: the next run's page, rendered from it, is redone."""
    logs = _hourly_runs(tmp_path / "logs", 3)
    lines = job_lines("run1", start_ms=BASE_TIME_MS + HOURLY)
    spaced = [
        line.replace(b'{"ev":"TaskEnd",', b'{"ev": "TaskEnd",', 1) if n == 2 else line
        for n, line in enumerate(lines)
    ]
    assert spaced != lines
    write(logs / "run1.eventlog", spaced)
    record = tmp_path / "rendered"
    monkeypatch.setenv(RENDERED, str(record))
    monkeypatch.setattr(PageRenderer, "job_pages", _recording_job_pages)
    build(BuildOptions(logs, tmp_path / "site", workers=1))
    rendered = _rendered(record)
    # run2 compares with run1: rendered from the peek's count, then again from the map's.
    assert sorted(rendered) == ["run0", "run1", "run2", "run2"]
    attempts = sum(1 for line in lines if b'"TaskEnd"' in line)
    page = (tmp_path / "site" / "jobs" / "run2" / "index.html").read_text()
    compared = page[page.index('<tr class="total">') :]
    compared = compared[: compared.index("</tr>")]
    assert compared.count(f'<td class="num" data-v="{attempts}">{attempts}</td>') == 2  # and run1


def test_baselines_decoded_a_few_at_a_time_give_the_same_contexts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run contexts made two baselines at a time equal those made all at once."""
    logs = _hourly_runs(tmp_path / "logs", 7)
    build(BuildOptions(logs, tmp_path / "at-once", workers=1))
    monkeypatch.setattr(foresight, "BASELINES_AT_ONCE", 2)
    build(BuildOptions(logs, tmp_path / "by-two", workers=1))
    assert tree(tmp_path / "by-two") == tree(tmp_path / "at-once")
    # Each page compares its run with its baseline, the run before it (all succeeded).
    for n in range(1, 7):
        page = (tmp_path / "by-two" / "jobs" / f"run{n}" / "index.html").read_text()
        assert "Compared with the previous successful run" in page
        assert f'href="../../jobs/run{n - 1}/index.html"' in page


def _executor_sums(db: sqlite3.Connection) -> tuple[list[Any], list[Any]]:
    """Return executor_total and executor_hour as kept, and as summed from the executor rows."""
    kept = (
        db.execute("SELECT * FROM executor_total WHERE jobs ORDER BY 1").fetchall(),
        db.execute("SELECT * FROM executor_hour ORDER BY 1, 2").fetchall(),
    )
    summed = (
        db.execute(
            "SELECT executor_id, sum(tasks), sum(failed), sum(busy_ms), count(*) FROM executor "
            "WHERE published GROUP BY 1 ORDER BY 1"
        ).fetchall(),
        db.execute(
            "SELECT executor_id, hour, count(*), sum(tasks), sum(failed), sum(compared), "
            "sum(z_sum), sum(log_sum), sum(excess_ms), sum(own_failed), sum(own_failed > 0) "
            "FROM executor WHERE published GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall(),
    )
    return kept, summed


def test_executor_totals_are_the_sums_of_the_published_rows(tmp_path: Path) -> None:
    # Rows come (summed per chunk of logs), flip (selection) and go (a log removed): the
    # totals stay the sums of the published rows, and are there at all (6 executors).
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(6):
        lines = job_lines(f"j{n}", start_ms=BASE_TIME_MS + n * HOURLY, retries=n % 2)
        write(logs / f"j{n}.eventlog", lines)
    site = tmp_path / "site"
    for step in range(3):
        if step == 1:
            (logs / "j5.eventlog").unlink()
        build(BuildOptions(logs, site, max_jobs=4 - step))
        db = sqlite3.connect(site / STATE)
        kept, summed = _executor_sums(db)
        db.close()
        assert kept == summed and kept[0] and kept[1], step


def test_a_full_build_records_as_published_what_it_published(tmp_path: Path) -> None:
    """Each job is recorded published as mapped; selection flips off a loser and the oldest."""
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "dup-a.eventlog", job_lines("dup", start_ms=BASE_TIME_MS + 9 * HOURLY))
    write(logs / "dup-b.eventlog", job_lines("dup", start_ms=BASE_TIME_MS + 8 * HOURLY))
    for n in range(4):
        write(logs / f"j{n}.eventlog", job_lines(f"j{n}", start_ms=BASE_TIME_MS + n * HOURLY))
    (logs / "running.eventlog").write_bytes(b"".join(job_lines("running")[:3]))
    site = tmp_path / "site"
    report = build(BuildOptions(logs, site, max_jobs=3))
    assert report.published == 3
    on_site = {p.name for p in (site / "jobs").iterdir() if p.is_dir()}
    assert on_site == {"dup", "j3", "j2"}
    db = sqlite3.connect(site / STATE)
    published = {k for (k,) in db.execute("SELECT key FROM log WHERE published")}
    # The same job id twice: the log that completed later (dup-a, started an hour later) wins.
    assert published == {"j3.eventlog", "j2.eventlog", "dup-a.eventlog"}
    for table in ("executor", "failure", "flag"):
        rows = db.execute(f"SELECT key, published FROM {table}").fetchall()
        assert all(bool(flag) == (key in published) for key, flag in rows), table
    (jobs,) = db.execute("SELECT max(jobs) FROM executor_total").fetchone()
    assert jobs == 3
    db.close()
    # The next build starts from those flags: widening nothing, one new job equals clean.
    write(logs / "j9.eventlog", job_lines("j9", start_ms=BASE_TIME_MS + 20 * HOURLY))
    build(BuildOptions(logs, site, max_jobs=3))
    clean = tmp_path / "clean"
    build(BuildOptions(logs, clean, max_jobs=3))
    assert tree(site) == tree(clean)


def test_failures_follow_failure_rows_that_come_go_or_flip(tmp_path: Path) -> None:
    """Failures is written again whenever a published job's failure rows come, go or flip."""
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "ok.eventlog", job_lines("ok", start_ms=BASE_TIME_MS))
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    later = BASE_TIME_MS + 10 * HOURLY

    def add_failed(logs: Path) -> None:
        write(logs / "bad.eventlog", job_lines("bad", outcome="failed", start_ms=later))

    def add_later_success(logs: Path) -> None:
        # The same job id, completed later and succeeded: the failed log's rows are left out.
        write(logs / "bad-again.eventlog", job_lines("bad", start_ms=later + HOURLY))

    def remove_later_success(logs: Path) -> None:
        (logs / "bad-again.eventlog").unlink()

    def remove_failed(logs: Path) -> None:
        (logs / "bad.eventlog").unlink()

    steps = [
        (add_failed, True),
        (add_later_success, False),
        (remove_later_success, True),
        (remove_failed, False),
    ]
    for step, listed in steps:
        step(logs)
        build(BuildOptions(logs, site))
        assert ('"bad"' in (site / "failures.json").read_text()) is listed, step.__name__
        assert_same_as_clean(logs, site, tmp_path, step.__name__)


@pytest.mark.slow  # 171 jobs, built four times and cleanly three times
def test_recut_spans_of_a_crowded_day_equal_a_clean_build(tmp_path: Path) -> None:
    # 110 jobs 5 s apart (spans split to the minute), and 61 in one millisecond (numbered
    # pages): each change recuts only its span, and the site must be the clean build's.
    logs = tmp_path / "logs"
    logs.mkdir()
    crowded = BASE_TIME_MS + 3_600_000
    for n in range(110):
        small_job(logs, n, BASE_TIME_MS + n * 5_000)
    for n in range(110, 171):
        small_job(logs, n, crowded)
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    assert (site / "list" / "2026-01-01T010000-1s.2.html").exists()

    def add_to_a_full_page() -> None:  # 00:05-00:10 held 50 jobs: now split by minute
        assert (site / "list" / "2026-01-01T0005-5m.html").exists()
        small_job(logs, 500, BASE_TIME_MS + 400_001)

    def remove_to_merge_a_span() -> None:
        for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12):
            (logs / f"job{n:03d}.eventlog").unlink()

    def add_in_the_crowded_millisecond() -> None:
        small_job(logs, 501, crowded)
        (logs / "job120.eventlog").unlink()

    for step in (add_to_a_full_page, remove_to_merge_a_span, add_in_the_crowded_millisecond):
        step()
        before = snapshot(site)
        build(BuildOptions(logs, site))
        clean = tmp_path / f"clean-{step.__name__}"
        build(BuildOptions(logs, clean))
        assert tree(site) == tree(clean), step.__name__
        assert rewritten(before, site), step.__name__  # the listing did change


def _small(directory: Path, job_id: str, start: int, **kw: Any) -> None:
    """Write one small job's log into ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)
    write(directory / f"{job_id}.eventlog", job_lines(job_id, start_ms=start, **kw))


def test_a_list_shrunk_to_one_page_forgets_its_days_and_find_parts(tmp_path: Path) -> None:
    # Day 10 holds 60 jobs, day 11 holds 50: the list has an archive and find parts. Day 10's
    # jobs go (the list fits one page), then day 11's grow back past a page: /api/jobs, made
    # from the find parts kept, lists what a clean build lists, none of the gone day's jobs.
    logs = tmp_path / "logs"
    for day, count in ((10, 60), (11, 50)):
        for n in range(count):
            start = day * _DAY + n * 60_000
            _small(logs, f"d{day}-{n:02d}", start, name=f"q{day}-{n}", stages=1, tasks_per_stage=1)
    site = tmp_path / "site"
    build(BuildOptions(log_dirs=(logs,), output=site, workers=1))
    assert (site / urls.find_part_file("1970-01-11")).is_file()
    for path in logs.glob("d10-*.eventlog"):
        path.unlink()
    for path in sorted(logs.glob("d11-*.eventlog"))[PAGE_CAPACITY:]:
        path.unlink()
    build(BuildOptions(log_dirs=(logs,), output=site, workers=1))
    assert not (site / urls.find_part_file("1970-01-12")).exists()  # one page: no archive
    for n in range(PAGE_CAPACITY, 120):
        _small(
            logs, f"d11-{n:03d}", 11 * _DAY + n * 60_000, name=f"r{n}", stages=1, tasks_per_stage=1
        )
    build(BuildOptions(log_dirs=(logs,), output=site, workers=1))
    clean = tmp_path / "clean"
    build(BuildOptions(log_dirs=(logs,), output=clean, workers=1))
    listed = json.loads((site / "api" / "jobs").read_bytes())
    assert not [j for j in listed if j["job_id"].startswith("d10-")]
    assert (site / "api" / "jobs").read_bytes() == (clean / "api" / "jobs").read_bytes()
