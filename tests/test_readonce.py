"""A build reads each log once: the map step takes the bytes and digest its peek read."""

from __future__ import annotations

import collections
import gzip
import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from sitegen.builder.contexts import peek
from sitegen.builder.map import jobs, pool
from sitegen.builder.map.context import MapContext
from sitegen.builder.map.jobs import process_log, root_parents
from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.state.identity import log_digest
from sitegen.builder.state.store import open_published
from sitegen.eventlog import rawlog, sources, taskmetrics
from sitegen.eventlog.discover import discover
from sitegen.eventlog.limits import DEFAULT_LIMITS
from sitegen.render.pages import PageRenderer
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree


class Opens:
    """The log files opened and the bytes read of them, counted at the opener."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, log_dir: Path) -> None:
        self.log_dir = str(log_dir)
        self.opens: collections.Counter[str] = collections.Counter()
        self.read = 0
        for name in ("open_regular", "open_regular_sized", "read_regular"):
            monkeypatch.setattr(sources, name, self._counted(getattr(sources, name)))

    def _counted(self, opener: Callable[..., Any]) -> Callable[..., Any]:
        """Return ``opener`` counting the logs it opens and what is read of them."""

        def counted(path: Any, *args: Any, **kwargs: Any) -> Any:
            got = opener(path, *args, **kwargs)
            if not str(path).startswith(self.log_dir):
                return got
            self.opens[Path(path).name] += 1
            if isinstance(got, bytes):
                self.read += len(got)
                return got
            self.read += os.path.getsize(path)  # a stream: each step reads it to its end
            return got

        return counted


def log_dir(root: Path) -> Path:
    """Write plain and gzipped logs, two runs of one name among them (so a context)."""
    root.mkdir()
    for n, name in enumerate(["j1", "j2", "j3", "j4"]):
        lines = job_lines(name, "nightly" if n < 2 else name, start_ms=1_767_000_000_000 + n)
        data = b"".join(lines)
        if n % 2:
            (root / f"{name}.eventlog.gz").write_bytes(gzip.compress(data, mtime=0))
        else:
            write(root / f"{name}.eventlog", lines)
    return root


@pytest.mark.parametrize("data", [False, True])
def test_a_full_build_opens_and_reads_each_log_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bool
) -> None:
    logs = log_dir(tmp_path / "logs")
    on_disk = sum(p.stat().st_size for p in logs.iterdir())
    if data:
        pytest.importorskip("pyarrow")
    opens = Opens(monkeypatch, logs)
    report = build(BuildOptions(logs, tmp_path / "site", workers=1, data=data))
    assert report.rebuilt == 4
    # The peek, its digest, the reader, the map step's digest, the raw-log copy and the
    # task table's rows: one open (a .gz one decompressed once, in memory).
    assert opens.opens == {p.name: 1 for p in logs.iterdir()}
    assert opens.read == on_disk


def test_the_tables_take_each_taskends_extras_from_the_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("pyarrow")
    logs = log_dir(tmp_path / "logs")
    with monkeypatch.context() as streamed:
        # Streamed, a log's TaskEnd records are lean: their extras are read again.
        streamed.setattr(rawlog, "HOLD_LIMIT", 0)
        build(BuildOptions(logs, tmp_path / "streamed", workers=1, data=True))

    def again(*args: Any) -> bool:
        raise AssertionError("the log was read again for its TaskEnd extras")

    # Held, each TaskEnd is decoded once, its launch time and metrics with the rest.
    monkeypatch.setattr(taskmetrics, "_held", again)
    monkeypatch.setattr(taskmetrics, "_scan", again)
    report = build(BuildOptions(logs, tmp_path / "held", workers=1, data=True))
    assert report.rebuilt == 4 and not report.problems
    held = tree(tmp_path / "held")
    assert any(name.startswith("data/tasks/") for name in held)
    assert held == tree(tmp_path / "streamed")


def test_the_map_step_takes_the_bytes_and_digest_the_peek_read(tmp_path: Path) -> None:
    logs = log_dir(tmp_path / "logs")
    found = discover(logs)
    peek.let_go()
    peek.keep_here()
    for log in found:
        assert peek.peek(DEFAULT_LIMITS, log) is not None
    for log in found:
        held, digest = peek.taken(log) or pytest.fail(log.key)
        assert held.stored == log.path.read_bytes()
        assert digest == hashlib.sha256(held.stored).hexdigest()
        if log.key.endswith(".gz"):
            assert held.plain == gzip.decompress(held.stored)
        assert peek.taken(log) is None  # handed on once, then let go
    assert peek._passed_bytes == 0


def test_the_map_step_reads_nothing_the_peek_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = log_dir(tmp_path / "logs")
    found = discover(logs)
    peek.let_go()
    peek.keep_here()
    told = [peek.peek(DEFAULT_LIMITS, log) for log in found]
    opens = Opens(monkeypatch, logs)
    pages, out = PageRenderer(), tmp_path / "out"
    for parent in root_parents(pages):
        (out / parent).mkdir(parents=True)
    for n, (log, run) in enumerate(zip(found, told, strict=True)):
        outcome, _ = process_log(log, out, out / "parts" / str(n), MapContext(pages))
        assert run is not None and outcome.summary is not None
        assert run[0].source == outcome.sha256 + log.key
    assert not opens.opens and opens.read == 0


def test_logs_past_the_limits_build_the_same_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = log_dir(tmp_path / "logs")
    build(BuildOptions(logs, tmp_path / "once", workers=1))
    # Past the budget the peek passes nothing on: the map step reads and hashes again.
    monkeypatch.setattr(peek, "PASS_ON_BYTES", 0)
    opens = Opens(monkeypatch, logs)
    build(BuildOptions(logs, tmp_path / "twice", workers=1))
    assert set(opens.opens.values()) != {1}
    # Past the size held, every log is streamed (a .gz one decompressed by each reader).
    monkeypatch.setattr(rawlog, "HOLD_LIMIT", 0)
    build(BuildOptions(logs, tmp_path / "streamed", workers=1))
    once = tree(tmp_path / "once")
    assert any(name.endswith("eventlog.gz") for name in once)
    assert once == tree(tmp_path / "twice") == tree(tmp_path / "streamed")


@pytest.mark.parametrize("workers", [1, 2])
def test_a_log_is_hashed_once_where_its_bytes_are_read_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    # Kept bytes or not (none in a full build's workers, here none at all), the map step
    # takes the digest the peek made: each log is hashed once a build, in whichever process.
    logs = log_dir(tmp_path / "logs")
    monkeypatch.setattr(peek, "PASS_ON_BYTES", 0)
    monkeypatch.setattr(pool, "MIN_ITEMS", 1)  # 4 logs: workers even so
    hashed = tmp_path / "hashed"
    hashed.mkdir()

    def counted(path: Any, held: bytes | None = None) -> str:
        (hashed / f"{os.getpid()}-{Path(str(path)).name}").write_text("")
        return log_digest(path, held)

    monkeypatch.setattr(jobs, "log_digest", counted)
    build(BuildOptions(logs, tmp_path / "site", workers=workers))
    assert not list(hashed.iterdir())  # the map step hashed none: every log was peeked
    state = open_published(tmp_path / "site") or pytest.fail("no state")
    stored = dict(state.db.execute("SELECT key, sha256 FROM log").fetchall())
    state.close()
    assert stored == {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in logs.iterdir()}


def test_a_log_list_hands_each_noted_digest_to_its_log_file(tmp_path: Path) -> None:
    found = discover(log_dir(tmp_path / "logs"))
    assert [log.sha256 for log in found] == ["", "", "", ""]
    found.note_digest(2, "ab" * 32)
    assert [log.sha256 for log in found] == ["", "", "ab" * 32, ""]
    more = discover(log_dir(tmp_path / "more"))
    more.note_digest(0, "cd" * 32)
    found.extend(more)
    assert [log.sha256 for log in found] == ["", "", "ab" * 32, "", "cd" * 32, "", "", ""]
    found.replace(2, msgspec.structs.replace(found[2], sha256=""))  # not known: another log
    found.note_digest(3, "")
    assert [log.sha256 for log in found] == ["", "", "", "", "cd" * 32, "", "", ""]


def test_a_damaged_archive_is_not_held(tmp_path: Path) -> None:
    path = tmp_path / "cut.eventlog.gz"
    path.write_bytes(gzip.compress(b"".join(job_lines("cut")), mtime=0)[:-12])
    assert rawlog.hold_log(path, path.stat().st_size) is None  # the reader says why
    shutil.copy(path, tmp_path / "empty.eventlog.gz")
    (tmp_path / "empty.eventlog.gz").write_bytes(b"")
    assert rawlog.hold_log(tmp_path / "empty.eventlog.gz", 0) is None


def test_only_the_build_process_keeps_what_it_peeked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (log, *_) = discover(log_dir(tmp_path / "logs"))
    peek.let_go()
    monkeypatch.setattr(peek, "_keeper", None)  # a Dask worker, or a worker forked early
    assert peek.peek(DEFAULT_LIMITS, log) is not None
    assert peek.taken(log) is None and peek._passed_bytes == 0
