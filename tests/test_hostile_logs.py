"""Hostile and broken logs (issue 16): each is a problem row with file and line, never a crash.

Every case is checked the way an operator meets it: ``check`` and ``build`` agree on the
problem, and the good job beside the bad log is still published.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.check import check
from sitegen.eventlog.reader import read_log
from sitegen.model import Classification, ProblemKind
from sitegen.text import formatting
from tests.helpers.logs import job_lines, record, write

DEEP = b'{"ev":"X","version":1,"data":' + b"[" * 1000 + b"]" * 1000 + b"}\n"


def _job_end(lines: list[bytes]) -> dict[str, object]:
    """Decode a log's JobEnd line into plain data (to damage one field of it)."""
    return msgspec.json.decode(lines[-1])  # type: ignore[no-any-return]


def _encode(data: object) -> bytes:
    return msgspec.json.encode(data) + b"\n"


def huge_start_time() -> list[bytes]:
    lines = job_lines("bad")
    end = _job_end(lines)
    end["data"]["index"]["start_time"] = 2**64  # type: ignore[index]
    return [*lines[:-1], _encode(end)]


def huge_elapsed_compute() -> list[bytes]:
    lines = job_lines("bad")
    end = _job_end(lines)
    stages = msgspec.json.decode(msgspec.json.encode(end["data"]["stages"]))  # type: ignore[index]
    stages["stages"][0]["elapsed_compute"] = "1" + "0" * 309 + "ms"
    end["data"]["stages"] = stages  # type: ignore[index]
    return [*lines[:-1], _encode(end)]


def damaged_job_end(damage: bytes) -> list[bytes]:
    """A JobEnd line with one bad token, followed by more records (which are fine)."""
    lines = job_lines("bad")
    lines[-1] = lines[-1].replace(b'"completed_at":', b'"completed_at":' + damage + b',"x":', 1)
    return [*lines, record("AnotherKind", {})]


def _build_and_check(
    tmp_path: Path, name: str, lines: list[bytes], published: tuple[str, ...] = ("good",)
) -> tuple[object, object]:
    """Write the bad log beside a good one; return (check report, build report)."""
    logs = tmp_path / "logs"
    logs.mkdir()
    write(logs / name, lines)
    write(logs / "good.eventlog", job_lines("good"))
    checked = check(logs, workers=1)
    built = build(BuildOptions(log_dirs=logs, output=tmp_path / "site", workers=1))
    assert tuple(j.job_id for j in built.jobs) == published
    assert checked.problems == built.problems
    assert (tmp_path / "site/api/job/good").is_dir()
    return checked, built


def test_deep_nesting_is_malformed_with_its_line(tmp_path: Path) -> None:
    lines = [*job_lines("bad")[:2], DEEP, *job_lines("bad")[2:]]
    _, built = _build_and_check(tmp_path, "bad.eventlog", lines)
    (problem,) = built.problems  # type: ignore[attr-defined]
    assert (problem.kind, problem.file, problem.line) == (ProblemKind.MALFORMED, "bad.eventlog", 3)
    assert "nested too deeply" in problem.message


def test_deep_nesting_alone_reads_as_malformed(tmp_path: Path) -> None:
    read = read_log(write(tmp_path / "deep.eventlog", [DEEP]))
    assert (read.classification, read.line) == (Classification.MALFORMED, 1)


def test_job_end_number_beyond_64_bits_is_malformed(tmp_path: Path) -> None:
    _, built = _build_and_check(tmp_path, "bad.eventlog", huge_start_time())
    (problem,) = built.problems  # type: ignore[attr-defined]
    assert problem.kind is ProblemKind.MALFORMED
    assert problem.line == len(job_lines("bad"))
    assert "start_time" in problem.message


def test_310_digit_elapsed_compute_builds(tmp_path: Path) -> None:
    _, built = _build_and_check(
        tmp_path, "bad.eventlog", huge_elapsed_compute(), published=("bad", "good")
    )
    assert built.problems == []  # type: ignore[attr-defined]
    page = (tmp_path / "site/jobs/bad/index.html").read_text()
    assert "1" + "0" * 309 + "ms" in page  # shown as the log gave it


@pytest.mark.parametrize("damage", [b"NaN", b'"\\ud800"x', b"1\x01"])
def test_damaged_job_end_line_is_malformed(tmp_path: Path, damage: bytes) -> None:
    lines = damaged_job_end(damage)
    _, built = _build_and_check(tmp_path, "bad.eventlog", lines)
    (problem,) = built.problems  # type: ignore[attr-defined]
    assert (problem.kind, problem.line) == (ProblemKind.MALFORMED, len(lines) - 1)
    assert "damaged JobEnd" in problem.message


def test_job_end_cut_off_mid_write_is_still_running(tmp_path: Path) -> None:
    lines = job_lines("bad")
    lines[-1] = lines[-1][:200]  # no newline: the scheduler is writing it
    read = read_log(write(tmp_path / "bad.eventlog", lines))
    assert read.classification is Classification.INCOMPLETE


@pytest.mark.parametrize(
    ("ms", "shown"),
    [(float("inf"), formatting.NONE), (float("nan"), formatting.NONE), (1e300, None)],
)
def test_duration_copes_with_any_float(ms: float, shown: str | None) -> None:
    text = formatting.duration(ms)
    assert text == shown if shown is not None else text.endswith(" min")


def test_unparseable_compute_time_is_shown_as_given() -> None:
    text = "1" + "0" * 309 + "ms"
    assert formatting.compute_ms(text) is None
    assert formatting.compute_time(text) == text


def _specials(logs: Path, outside: Path) -> None:
    """Plant what a log dir should never read as a log, beside a good log."""
    logs.mkdir()
    write(logs / "good.eventlog", job_lines("good"))
    os.mkfifo(logs / "fifo.eventlog")
    (logs / "zero.eventlog").symlink_to("/dev/zero")
    (logs / "dir.eventlog").mkdir()
    write(outside / "far.eventlog", job_lines("far"))
    (logs / "far.eventlog").symlink_to(outside / "far.eventlog")
    (logs / "near.eventlog").symlink_to("good.eventlog")  # inside: read, under its own name


def test_non_regular_files_and_links_out_are_reported_not_read(tmp_path: Path) -> None:
    logs, outside = tmp_path / "logs", tmp_path / "elsewhere"
    outside.mkdir()
    _specials(logs, outside)
    checked = check(logs, workers=1)
    built = build(BuildOptions(log_dirs=logs, output=tmp_path / "site", workers=1))
    assert set(checked.problems) == set(built.problems)
    why = {p.file: p.message for p in built.problems if p.kind is ProblemKind.UNREADABLE}
    assert why == {
        "dir.eventlog": "skipped: a directory, not a regular file",
        "fifo.eventlog": "skipped: a FIFO (named pipe), not a regular file",
        "zero.eventlog": "skipped: a symbolic link to a character device, not a regular file",
        "far.eventlog": "skipped: a symbolic link to a file outside the event-log dirs "
        "(--follow-links reads it)",
    }
    # The link inside the dir is read: the same job twice, one of them reported as a duplicate.
    assert [j.job_id for j in built.jobs] == ["good"]
    assert {p.file for p in built.problems if p.kind is ProblemKind.DUPLICATE_ID} == {
        "near.eventlog"
    }
    page = (tmp_path / "site/problems/index.html").read_text()
    for file, message in why.items():
        assert file in page and html.escape(message, quote=False) in page


def test_follow_links_reads_links_out_but_never_devices(tmp_path: Path) -> None:
    logs, outside = tmp_path / "logs", tmp_path / "elsewhere"
    outside.mkdir()
    _specials(logs, outside)
    built = build(
        BuildOptions(log_dirs=logs, output=tmp_path / "site", workers=1, follow_links=True)
    )
    assert sorted(j.job_id for j in built.jobs) == ["far", "good"]
    why = {p.file: p.message for p in built.problems if p.kind is ProblemKind.UNREADABLE}
    assert set(why) == {"dir.eventlog", "fifo.eventlog", "zero.eventlog"}


def test_a_fifo_swapped_in_after_listing_is_unreadable_not_a_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "late.eventlog")
    read = read_log(tmp_path / "late.eventlog")
    assert read.classification is Classification.UNREADABLE
    assert "FIFO" in read.message


def test_note_linked_out_of_the_log_dir_is_not_rendered(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "notes").mkdir(parents=True)
    write(logs / "good.eventlog", job_lines("good"))
    secret = tmp_path / "hostname"
    secret.write_text("secret-build-host-name\n")
    (logs / "notes/good.md").symlink_to(secret)
    site = tmp_path / "site"
    build(BuildOptions(log_dirs=logs, output=site, workers=1))
    assert "secret-build-host-name" not in (site / "jobs/good/index.html").read_text()
    build(BuildOptions(log_dirs=logs, output=site, workers=1, follow_links=True))
    assert "secret-build-host-name" in (site / "jobs/good/index.html").read_text()
    # A note linked within the log dir is rendered without the option.
    (logs / "notes/good.md").unlink()
    (logs / "notes/real.md").write_text("inside-note\n")
    (logs / "notes/good.md").symlink_to("real.md")
    build(BuildOptions(log_dirs=logs, output=site, workers=1))
    assert "inside-note" in (site / "jobs/good/index.html").read_text()


CONTROLS = "\x00\x01\x1b\x7f\x85"


def test_control_characters_never_reach_html(tmp_path: Path) -> None:
    """NUL and friends in a job name, config, DOT, a note and a --pages heading: stand-ins."""
    logs, pages = tmp_path / "logs", tmp_path / "pages"
    (logs / "notes").mkdir(parents=True)
    pages.mkdir()
    name = f"q{CONTROLS}name"
    lines = job_lines("ctl", name=name, extra_config={f"k{CONTROLS}": f"v{CONTROLS}"})
    end = _job_end(lines)
    end["data"]["dot"] = end["data"]["dot"].replace("Stage 1", f"Stage 1{CONTROLS}")  # type: ignore[index]
    lines[-1] = _encode(end)
    write(logs / "ctl.eventlog", lines)
    (logs / "notes/ctl.md").write_text(f"# Note{CONTROLS}heading\n\ntext{CONTROLS}\n")
    (pages / "runbook.md").write_text(f"# Run{CONTROLS}book\n\nbody{CONTROLS}\n")
    site = tmp_path / "site"
    report = build(BuildOptions(log_dirs=logs, output=site, workers=1, pages_dir=pages))
    assert [j.job_name for j in report.jobs] == [name]  # the data keeps what the log said
    stand_ins = 0
    for page in site.rglob("*.html"):
        text = page.read_text()
        bad = [c for c in text if c in CONTROLS]
        assert bad == [], page
        stand_ins += text.count("␀")
    assert stand_ins >= 5
    assert "q␀␁␛␡\ufffdname" in (site / "jobs/ctl/index.html").read_text()
    # Python-Markdown drops a NUL itself; the rest get stand-ins.
    assert "Note␁␛␡\ufffdheading" in (site / "jobs/ctl/index.html").read_text()
    assert "Run␀␁␛␡\ufffdbook" in (site / "index.html").read_text()
    # The API keeps the log's bytes; only its HTML copy (zero-config hosts) is scrubbed.
    api = json.loads((site / "api/jobs").read_bytes())
    assert api[0]["job_name"] == name


@given(st.text())
def test_visible_controls_leaves_no_control_and_changes_nothing_else(text: str) -> None:
    from sitegen.text.htmlsafe import visible_controls

    shown = visible_controls(text)
    assert not any(
        c in shown
        for c in map(chr, [*range(0x0B), *range(0x0E, 0x20), *range(0x7F, 0xA0)])
        if c not in "\t\n"
    )
    kept = [c for c in text if not ((c < " " and c not in "\t\n\x0c\r") or "\x7f" <= c <= "\x9f")]
    assert [c for c in shown if not ("\u2400" <= c <= "\u2421" or c == "\ufffd")] == [
        c for c in kept if not ("\u2400" <= c <= "\u2421" or c == "\ufffd")
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.text(max_size=40),
    stages=st.integers(1, 4),
    tasks=st.integers(1, 5),
    running=st.booleans(),
)
def test_healthy_logs_are_never_called_damaged(
    tmp_path_factory: pytest.TempPathFactory, name: str, stages: int, tasks: int, running: bool
) -> None:
    """The damaged-JobEnd rule stays silent on whole logs, and on logs still being written."""
    lines = job_lines("ok", name=name, stages=stages, tasks_per_stage=tasks)
    if running:
        lines = lines[:-1]
    path = write(tmp_path_factory.mktemp("healthy") / "ok.eventlog", lines)
    read = read_log(path)
    expected = Classification.INCOMPLETE if running else Classification.COMPLETED
    assert read.classification is expected, read.message


def test_long_plans_are_cut_on_pages_only() -> None:
    text = "x" * (formatting.MAX_PAGE_TEXT + 5)
    shown = formatting.page_text(text)
    assert shown.startswith("x" * formatting.MAX_PAGE_TEXT)
    assert shown.endswith("… cut here: 5 more characters (the API has it all)")


@given(st.text(max_size=300))
def test_short_plans_are_shown_whole(text: str) -> None:
    assert formatting.page_text(text) == text


def test_payload_numbers_beyond_64_bits_are_shown_as_missing(tmp_path: Path) -> None:
    """Found by the fuzzer: a 64-digit exec_duration in the stages payload failed the build
    (OverflowError drawing the duration histogram). The /api bytes keep it as it was."""
    lines = job_lines("bad")
    end = _job_end(lines)
    stage = end["data"]["stages"]["stages"][0]  # type: ignore[index]
    stage["tasks"][0]["exec_duration"] = 10**63
    stage["tasks"][1]["output_rows"] = 10**400
    stage["input_rows"] = -(10**30)
    stage["task_duration_percentiles"]["max"] = 10**70
    lines[-1] = _encode(end)
    _, built = _build_and_check(tmp_path, "bad.eventlog", lines, published=("bad", "good"))
    assert built.problems == []  # type: ignore[attr-defined]
    assert b"1" + b"0" * 63 in (tmp_path / "site/api/job/bad/stages").read_bytes()
    page = (tmp_path / "site/jobs/bad/stage-1.html").read_text()
    assert "1" + "0" * 63 not in page


@pytest.mark.parametrize(
    ("value", "expected"),
    [(2**63 - 1, 2**63 - 1), (2**63, None), (-(2**63), -(2**63)), ("99999999999999999999", None)],
)
def test_payload_ints_are_64_bit(value: object, expected: int | None) -> None:
    from sitegen.eventlog.payload import as_int

    assert as_int(value) == expected


def test_start_times_at_the_ends_of_64_bits_list_in_spans_past_them(tmp_path: Path) -> None:
    # The jobs list's spans of a job started in the last day a 64-bit time holds end past
    # it (and those of the first day start before it): no query may be handed such a bound.
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(55):  # more than a page: the archive is cut into spans
        write(logs / f"j{n}.eventlog", job_lines(f"j{n}", start_ms=1_767_225_600_000 + n * 1000))
    for name, start in (("late", 2**63 - 1 - 10_000), ("early", -(2**63) + 86_400_000)):
        write(logs / f"{name}.eventlog", job_lines(name, start_ms=start))
    site = tmp_path / "site"
    first = build(BuildOptions(logs, site))
    listed = [job["job_id"] for job in json.loads((site / "api/jobs").read_bytes())]
    assert listed[0] == "late" and "j0" in listed
    write(logs / "later.eventlog", job_lines("later", start_ms=2**63 - 1 - 5_000))
    again = build(BuildOptions(logs, site))
    assert again.published == first.published + 1
    clean = tmp_path / "clean"
    build(BuildOptions(logs, clean))
    assert (site / "api/jobs").read_bytes() == (clean / "api/jobs").read_bytes()
    assert (site / "index.html").read_bytes() == (clean / "index.html").read_bytes()
