"""A build's parts are seams: a fake source and a fake mapper each drive a real build.

Each fake (tests/helpers/fakes.py) is written against its interface alone (``LogSource``, ``Mapper``),
and the site it builds is the one a normal build makes, file for file and byte for byte, in a
full build and in an incremental one.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.examples import EXAMPLE_LOG_DIR
from tests.helpers.fakes import RecordingMapper, memory_copy, use_mapper
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree

NEW = "seam0001.eventlog"


def example_logs(tmp_path: Path) -> Path:
    """Copy the bundled logs (their times too) where a test may add to them."""
    logs = tmp_path / "logs"
    shutil.copytree(EXAMPLE_LOG_DIR, logs)
    return logs


def add_job(logs: Path) -> Path:
    """Write one more finished job into ``logs``."""
    return write(logs / NEW, job_lines("seam0001", name="seam-job"))


def built(log_dirs: object, output: Path, trusted: bool = True) -> BuildReport:
    """Build with one worker; ``trusted`` False: every log's numbers compared (--verify-logs)."""
    options = BuildOptions(
        log_dirs=log_dirs,  # type: ignore[arg-type]
        output=output,
        workers=1,
        trust_finished_logs=trusted,
    )
    return build(options)


def same_report(a: BuildReport, b: BuildReport) -> None:
    """Assert two builds published alike (their times aside)."""
    assert (a.logs, a.published, a.rebuilt, a.up_to_date) == (
        b.logs,
        b.published,
        b.rebuilt,
        b.up_to_date,
    )
    assert a.classifications == b.classifications
    assert sorted(p.file for p in a.problems) == sorted(p.file for p in b.problems)


def test_a_memory_source_builds_the_site_a_local_dir_builds(tmp_path: Path) -> None:
    logs = example_logs(tmp_path)
    source = memory_copy(logs)
    disk, memory = tmp_path / "disk", tmp_path / "memory"
    # The source trusts no log's name (it lists each log's numbers): the local dir is compared
    # with as --verify-logs makes it, so a log rewritten in place is seen by both.
    first = built(source, memory)
    same_report(first, built(logs, disk, trusted=False))
    assert first.published == 25
    assert tree(memory) == tree(disk)
    # The build read every log through the source, and only through it.
    assert set(source.reads) == set(source.logs)

    # A new log, and one rewritten in place with its size and time: the next build sees both.
    add_job(logs)
    source.put(NEW, (logs / NEW).read_bytes(), (logs / NEW).stat().st_mtime_ns)
    rewritten = "planted-idle.eventlog"
    data = (logs / rewritten).read_bytes().replace(b'"planted-idle"', b'"planted-idler"')
    assert data != (logs / rewritten).read_bytes()
    (logs / rewritten).write_bytes(data)
    stamp = (logs / rewritten).stat().st_mtime_ns
    source.put(rewritten, data, stamp)
    source.reads.clear()
    second = built(source, memory)
    same_report(second, built(logs, disk, trusted=False))
    assert not second.up_to_date and second.published == 26
    assert tree(memory) == tree(disk)
    assert b"planted-idler" in b"".join(tree(memory).values())
    # Only what changed was read again (and the log still running, whose end is awaited).
    assert NEW in source.reads and rewritten in source.reads
    assert set(source.reads) <= {NEW, rewritten, "GHZbKoX.eventlog.running"}


def test_a_recording_mapper_builds_the_site_the_local_mapper_builds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = example_logs(tmp_path)
    normal, faked = tmp_path / "normal", tmp_path / "faked"
    normal_report = built(logs, normal)

    full = RecordingMapper()
    use_mapper(monkeypatch, full)
    same_report(built(logs, faked), normal_report)
    assert tree(faked) == tree(normal)
    # Asked through the interface: made ready to map every log, each log peeked where the
    # map runs, every log mapped once, then closed.
    names = sorted(p.name for p in logs.iterdir())
    assert full.prepared == [True]
    assert [name for name, _ in full.each_calls] == ["peek"]
    assert sorted(key for keys in full.mapped for key in keys) == names
    assert full.closes == 1

    add_job(logs)
    again = RecordingMapper()
    use_mapper(monkeypatch, again)
    incremental = built(logs, faked)
    monkeypatch.undo()
    same_report(incremental, built(logs, normal))
    assert tree(faked) == tree(normal)
    assert again.prepared == [False]  # a state to go on: no need to start early
    mapped = [key for keys in again.mapped for key in keys]
    assert NEW in mapped and len(mapped) == len(set(mapped))
    assert set(mapped) <= {NEW, "GHZbKoX.eventlog.running"}
    assert again.closes == 1


def test_the_memory_source_times_are_the_files(tmp_path: Path) -> None:
    # The two builds compare only if the source's logs carry the files' own times (a
    # .running log's age decides whether it is abandoned).
    logs = example_logs(tmp_path)
    source = memory_copy(logs)
    source.list()
    for name, (data, mtime) in source.logs.items():
        assert data == (logs / name).read_bytes()
        assert mtime == os.stat(logs / name).st_mtime_ns
