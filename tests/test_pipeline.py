from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.errors import UsageError
from sitegen.eventlog.discover import unsafe_id_reason
from sitegen.model import ProblemKind
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree


def _kinds(report: BuildReport) -> dict[str, str]:
    return {p.file: str(p.kind) for p in report.problems}


def test_example_site_publishes_every_completed_job(example_site: tuple[Path, BuildReport]) -> None:
    site, report = example_site
    assert report.logs == 28
    assert report.published == 25
    assert sorted(report.skipped.items()) == [
        ("ended-unrecorded", 1),
        ("incomplete", 1),
        ("malformed", 1),
    ]
    listed = json.loads((site / "api/jobs").read_bytes())
    assert len(listed) == 25
    starts = [(-j["start_time"], j["job_id"]) for j in listed]
    assert starts == sorted(starts)
    statuses = {j["status"] for j in listed}
    assert statuses == {"Completed", "Failed", "Cancelled"}
    for job in listed:
        assert list(job) == [
            "job_id",
            "job_name",
            "job_status",
            "status",
            "num_stages",
            "completed_stages",
            "percent_complete",
            "start_time",
            "end_time",
        ]
        assert (site / "api/job" / job["job_id"] / "index.json").is_file()
    # A job that ended unrecorded is listed beside the running one, as such.
    ended, running = report.running
    assert ended.file == "0382W2C5NR000.eventlog" and ended.ended is not None
    assert running.file.endswith(".eventlog.running") and running.ended is None


def test_job_files_are_the_stored_bytes(example_site: tuple[Path, BuildReport]) -> None:
    site, report = example_site
    from sitegen.eventlog.reader import read_log
    from sitegen.examples import EXAMPLE_LOG_DIR

    job = report.jobs[0]
    read = read_log(EXAMPLE_LOG_DIR / job.file)
    assert read.job_end is not None
    base = site / "api/job" / job.job_id
    assert (base / "index.json").read_bytes() == bytes(read.job_end.job)
    assert (base / "stages").read_bytes() == bytes(read.job_end.stages)
    assert (base / "config").read_bytes() == bytes(read.job_end.config)
    assert (base / "dot").read_text() == read.job_end.dot
    stage_dot = (base / "stage/1/dot").read_text()
    assert stage_dot.startswith("digraph G {\n\t\tstage_1_0 ")
    assert stage_dot.endswith("}\n") and "label = " not in stage_dot.split("\n")[1]


def test_html_copies_parse_to_the_same_json(example_site: tuple[Path, BuildReport]) -> None:
    site, _ = example_site
    copies = sorted((site / "api").rglob("index.html"))
    # Only /api/job/{id} is a directory (a path prefix); every other endpoint is a file.
    assert [c.parent.name for c in copies] == sorted(j.job_id for j in example_site[1].jobs)
    escaped = 0
    for html in copies:
        body = html.read_bytes()
        assert b"<" not in body and b">" not in body and b"&" not in body.replace(b"\\u0026", b"")
        exact = html.with_name("index.json").read_bytes()
        assert json.loads(body) == json.loads(exact)
        escaped += body != exact
    assert escaped > 0  # the example plans hold "<=", so copies really were escaped


def test_duplicate_ids_keep_the_later_completion(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "dup.eventlog", job_lines("dup", start_ms=2_000_000))
    write(logs / "dup-copy.eventlog", job_lines("dup", start_ms=1_000_000))
    report = build(BuildOptions(logs, tmp_path / "site", workers=1))
    assert report.published == 1
    assert report.jobs[0].file == "dup.eventlog"
    # The loser is read first (by name) and writes in place; the winner's files replace it.
    from sitegen.eventlog.reader import read_log

    winner = read_log(logs / "dup.eventlog").job_end
    assert winner is not None
    assert (tmp_path / "site/api/job/dup/index.json").read_bytes() == bytes(winner.job)
    assert not (tmp_path / "site/.parts").exists()
    kinds = _kinds(report)
    assert kinds["dup-copy.eventlog"] == "duplicate-id"
    # The loser's name differs from its id, which is reported too (as a warning).
    assert [p.kind for p in report.problems if p.file == "dup-copy.eventlog"] == [
        ProblemKind.ID_MISMATCH,
        ProblemKind.DUPLICATE_ID,
    ]


@pytest.mark.parametrize(
    "job_id",
    ["", ".", "..", "a/b", "a\\b", "nul\x00", "tab\there", "x" * 201],
)
def test_unsafe_ids_are_not_published(tmp_path: Path, job_id: str) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "evil.eventlog", job_lines(job_id))
    write(logs / "fine.eventlog", job_lines("fine"))
    report = build(BuildOptions(logs, tmp_path / "site"))
    assert [j.job_id for j in report.jobs] == ["fine"]
    assert _kinds(report)["evil.eventlog"] == "unsafe-id"
    published = {p.name for p in (tmp_path / "site/api/job").iterdir()}
    assert published == {"fine"}


@pytest.mark.parametrize("job_id", ["with space", "100%", "a#b", "why?", "a+b", "ünïcødé", "日本"])
def test_awkward_ids_are_published(job_id: str) -> None:
    assert unsafe_id_reason(job_id) is None


def test_mismatched_file_name_publishes_under_job_end_id(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / "renamed.eventlog", job_lines("real-id"))
    report = build(BuildOptions(logs, tmp_path / "site"))
    assert [j.job_id for j in report.jobs] == ["real-id"]
    assert report.skipped == {}
    assert _kinds(report) == {"renamed.eventlog": "id-mismatch"}


def test_logs_that_cannot_be_opened_are_problems(tmp_path: Path, example_logs: Path) -> None:
    (example_logs / "dangling.eventlog").symlink_to("removed-since.eventlog")
    (example_logs / "loop.eventlog").symlink_to("loop.eventlog")
    os.mkfifo(example_logs / "fifo.eventlog")  # not a regular file: never opened (it would block)
    (example_logs / "dir.eventlog").mkdir()  # never opened either, but reported all the same
    out = tmp_path / "site"
    report = build(BuildOptions(example_logs, out))
    assert report.published == 25
    unreadable = {p.file: p.message for p in report.problems if p.kind == "unreadable"}
    assert unreadable == {
        "dangling.eventlog": "No such file or directory",
        "loop.eventlog": "Too many levels of symbolic links",
        "dir.eventlog": "skipped: a directory, not a regular file",
        "fifo.eventlog": "skipped: a FIFO (named pipe), not a regular file",
    }
    again = build(BuildOptions(example_logs, out))
    assert again.up_to_date and len(again.problems) == len(report.problems)


def test_logs_are_never_modified(tmp_path: Path, example_logs: Path) -> None:
    before = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in example_logs.iterdir()}
    build(BuildOptions(example_logs, tmp_path / "site"))
    after = {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in example_logs.iterdir()}
    assert before == after


def test_bad_paths_are_refused_and_nothing_is_written(tmp_path: Path, example_logs: Path) -> None:
    cases = [
        (BuildOptions(tmp_path / "missing", tmp_path / "out"), "does not exist"),
        (BuildOptions(example_logs, example_logs), "must not be the event-log dir"),
        (BuildOptions(example_logs, example_logs / "site"), "must not be the event-log dir"),
        (BuildOptions(example_logs, tmp_path), "event-log dir must not be inside"),
    ]
    (tmp_path / "afile").write_text("x")
    cases.append((BuildOptions(example_logs, tmp_path / "afile"), "not a directory"))
    (tmp_path / "precious").mkdir()
    (tmp_path / "precious/thesis.tex").write_text("x")
    cases.append((BuildOptions(example_logs, tmp_path / "precious"), "not a sitegen site"))
    for options, message in cases:
        with pytest.raises(UsageError, match=message):
            build(options)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile", "logs", "precious"]
    assert (tmp_path / "afile").read_text() == "x"


def test_rebuild_replaces_the_site_and_leaves_no_staging(
    tmp_path: Path, example_logs: Path
) -> None:
    out = tmp_path / "site"
    build(BuildOptions(example_logs, out))
    victim = next(example_logs.glob("*.eventlog"))
    job_id = victim.name.removesuffix(".eventlog")
    victim.rename(tmp_path / victim.name)
    report = build(BuildOptions(example_logs, out))
    assert not (out / "api/job" / job_id).exists()
    assert report.published in (23, 24)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["logs", "site", victim.name])


@pytest.mark.slow  # four builds of the examples
def test_symlinked_output_is_published_where_it_points(tmp_path: Path, example_logs: Path) -> None:
    (tmp_path / "www").mkdir()
    link = tmp_path / "www" / "history"
    link.symlink_to("../srv/history")  # dangling until the first build
    real = tmp_path / "srv" / "history"
    first = build(BuildOptions(example_logs, link))
    victim = next(example_logs.glob("*.eventlog"))
    victim.rename(tmp_path / victim.name)
    incremental = build(BuildOptions(example_logs, link))
    assert incremental.published == first.published - 1
    clean = build(BuildOptions(example_logs, link, clean=True))
    assert clean.published == incremental.published
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert real.is_dir() and not real.is_symlink()
    # Nothing left beside the link or the site: no staging dir, no old site.
    assert [p.name for p in (tmp_path / "www").iterdir()] == ["history"]
    assert [p.name for p in (tmp_path / "srv").iterdir()] == ["history"]
    direct = tmp_path / "direct"
    build(BuildOptions(example_logs, direct))
    assert tree(real) == tree(direct)


@pytest.mark.slow  # four builds of the examples
def test_output_dot_is_built_into_the_working_directory(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    inode = site.stat().st_ino
    monkeypatch.chdir(site)
    first = build(BuildOptions(example_logs, Path(".")))
    victim = next(example_logs.glob("*.eventlog"))
    victim.rename(tmp_path / victim.name)
    assert build(BuildOptions(example_logs, Path("."))).published == first.published - 1
    build(BuildOptions(example_logs, Path("."), title="Here"))  # a full build
    # Still the directory the shell is in, not a new one swapped in under its name.
    assert site.stat().st_ino == inode
    assert not [p for p in site.iterdir() if "staging" in p.name]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["logs", "site", victim.name])
    direct = tmp_path / "direct"
    build(BuildOptions(example_logs, direct, title="Here"))
    assert tree(site) == tree(direct)


def _build_and_kill(logs: Path, out: Path, delay: float, *extra: str) -> None:
    """Start `sitegen build`, SIGKILL it ``delay`` seconds after its staging dir appears."""
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sitegen",
            "build",
            "--event-log-dir",
            str(logs),
            "--output",
            str(out),
            "--workers",
            "1",
            *extra,
        ],
    )
    deadline = time.monotonic() + 20
    while not any(p.name.startswith(".site.staging") for p in out.parent.iterdir()):
        if proc.poll() is not None:
            return
        assert time.monotonic() < deadline
        time.sleep(0.002)
    time.sleep(delay)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.mark.slow  # a corpus of 60 jobs, built and killed again and again
def test_killed_full_build_leaves_the_old_or_the_new_site(
    tmp_path: Path, example_logs: Path
) -> None:
    out = tmp_path / "site"
    build(BuildOptions(example_logs, out))
    before = tree(out)
    from sitegen.examples.generator import write_corpus

    write_corpus(example_logs, jobs=60, stages=4, tasks_per_stage=200)
    build(BuildOptions(example_logs, tmp_path / "clean"))
    after = tree(tmp_path / "clean")
    seen = set()
    for delay in (0.0, 0.1, 0.3, 0.6):
        _build_and_kill(example_logs, out, delay, "--clean")
        state = tree(out)
        assert state in (before, after), delay
        seen.add(state == after)
        if state == after:
            break
    assert False in seen  # at least one kill landed before the swap
    # The next build sweeps the dead builds' staging dirs and publishes normally.
    report = build(BuildOptions(example_logs, out))
    assert report.published == 85
    assert tree(out) == after
    assert sorted(p.name for p in tmp_path.iterdir()) == ["clean", "logs", "site"]


@pytest.mark.slow  # a corpus of 30 jobs, built and killed again and again
def test_killed_incremental_build_leaves_a_consistent_site(
    tmp_path: Path, example_logs: Path
) -> None:
    from sitegen.examples.generator import write_corpus

    out = tmp_path / "site"
    build(BuildOptions(example_logs, out))
    write_corpus(example_logs, jobs=30, stages=3, tasks_per_stage=100)
    for delay in (0.0, 0.05, 0.1, 0.2, 0.4):
        _build_and_kill(example_logs, out, delay)
        # Whatever moment it died at: every listed job is complete on disk.
        listed = json.loads((out / "api/jobs").read_bytes())
        assert len(listed) >= 12
        for job in listed:
            base = out / "api/job" / job["job_id"]
            for name in ("index.json", "index.html", "stages", "config", "dot"):
                assert (base / name).is_file(), (delay, job["job_id"], name)
    report = build(BuildOptions(example_logs, out))
    assert report.published == 55
    clean = tmp_path / "clean"
    build(BuildOptions(example_logs, clean))
    assert tree(out) == tree(clean)


def test_a_build_that_maps_every_log_forks_its_workers_before_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A forked worker starts as a copy of its parent: fork before the listing's strings."""
    from sitegen.builder.map import pool
    from sitegen.builder.plan import inputs

    steps: list[str] = []
    fork, list_dirs = pool.EarlyWorkers.fork, inputs.list_dirs

    def forking(self: pool.EarlyWorkers) -> object:
        steps.append("fork")
        return fork(self)

    def listing(*args: object) -> object:
        steps.append("list")
        return list_dirs(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(pool.EarlyWorkers, "fork", forking)
    monkeypatch.setattr(inputs, "list_dirs", listing)
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(3):
        write(logs / f"job0000{n}.eventlog", job_lines(f"job0000{n}"))
    options = BuildOptions(logs, tmp_path / "site", workers=2)
    for what, given, expected in [
        ("no state", options, ["fork", "list"]),
        ("a new log", options, ["list"]),
        ("another title", dataclasses.replace(options, title="Other"), ["fork", "list"]),
        ("--clean", dataclasses.replace(options, title="Other", clean=True), ["fork", "list"]),
    ]:
        if what == "a new log":
            write(logs / "new00001.eventlog", job_lines("new00001"))
        steps.clear()
        report = build(given)
        assert (what, steps) == (what, expected)
        assert report.published == 3 + (what != "no state")
    assert (tmp_path / "site/api/job/new00001/index.json").is_file()
