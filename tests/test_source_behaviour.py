"""The build asks a log source what it does, never what it is (eventlog/sources.py).

``Elsewhere`` holds its logs in a local directory, but is no ``LocalDir`` and says it has no
directory on this machine (``local`` None, as a prefix in object storage says): whatever the
build does with it (watch it, take its events, refuse an output or an archive inside it, poll
it) must come from the methods it answers, not from what it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.plan.events import Hint
from sitegen.builder.plan.planner import check_paths
from sitegen.builder.watch import Watcher, watched_paths
from sitegen.errors import UsageError
from sitegen.eventlog.localdir import LocalDir
from sitegen.publish.archive import check_archive_path
from tests.helpers.logs import job_lines, write


class Elsewhere:
    """A source whose logs are in ``path``, that says it is no local directory."""

    local = None  # read within eventlog alone: no notes, no link roots

    def __init__(self, path: Path, events: bool = True) -> None:
        self.inner = LocalDir(path)
        self.events = events

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("inner", "events"):
            raise AttributeError(name)  # unpickling asks before ``inner`` is set
        return getattr(self.inner, name)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Elsewhere) and other.inner == self.inner

    def __hash__(self) -> int:
        return hash(self.inner)

    def __str__(self) -> str:
        return f"elsewhere:{self.inner}"

    def __truediv__(self, name: str) -> Path:
        return self.inner / name

    def resolve(self) -> Elsewhere:
        return Elsewhere(self.inner.path.resolve(), self.events)

    def with_options(self, storage_options: dict[str, Any] | None) -> Elsewhere:
        return self

    def event_dirs(self) -> list[Path]:
        return self.inner.event_dirs() if self.events else []

    def log_named(self, path: str) -> str | None:
        return self.inner.log_named(path) if self.events else None


def _logs(tmp_path: Path, *ids: str) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    for job_id in ids:
        write(logs / f"{job_id}.eventlog", job_lines(job_id))
    return logs


def test_a_source_with_no_local_dir_is_built_watched_and_fed_by_events(tmp_path: Path) -> None:
    logs = _logs(tmp_path, "keep001")
    site = tmp_path / "site"
    options = BuildOptions((Elsewhere(logs),), site, workers=1)
    assert build(options).published == 1
    # Watched where its events come from, though it names no local dir.
    assert logs in watched_paths(options)
    new = write(logs / "new0003.eventlog", job_lines("new0003"))
    report = build(options, hint=Hint(frozenset({str(new)})))
    assert report.listed_from_events and report.published == 2


def test_an_output_or_archive_in_a_source_is_refused_by_what_it_holds(tmp_path: Path) -> None:
    logs = _logs(tmp_path, "keep001")
    source = Elsewhere(logs)
    with pytest.raises(UsageError, match="output dir must not be the event-log dir"):
        check_paths(BuildOptions((source,), logs / "site"))
    with pytest.raises(UsageError, match="event-log dir must not be inside the output"):
        check_paths(BuildOptions((source,), tmp_path))
    with pytest.raises(UsageError, match="archive must not be inside the event-log dir"):
        check_archive_path(logs / "site.tar.gz", tmp_path / "site", [source])


def test_a_source_that_raises_no_events_is_polled(tmp_path: Path) -> None:
    logs = _logs(tmp_path, "keep001")
    options = BuildOptions((Elsewhere(logs, events=False),), tmp_path / "site", workers=1)
    assert logs not in watched_paths(options)
    watcher = Watcher(options, lambda o, hint: None, lambda done: None)
    watcher.begin()
    try:
        write(logs / "new0003.eventlog", job_lines("new0003"))
        changes = watcher._poll_objects()
    finally:
        if watcher._notify is not None:
            watcher._notify.close()
    assert {path for _, path in changes} == {str(logs / "new0003.eventlog")}
    # Its events name no log: a build handed them lists it.
    report = build(options, hint=Hint(frozenset({str(logs / "new0003.eventlog")})))
    assert not report.listed_from_events and report.published == 2
