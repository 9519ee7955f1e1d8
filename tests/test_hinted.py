"""A watcher's events as names in and out (builder/plan/events.py), diffed with the state's logs.

The listing diff (builder/plan/listing.py) fed by events gives the logs a listing would, without
listing a dir or rebuilding its listing; the watcher's fallbacks list the dirs.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.plan.events import Hint, KeptLogs, heard_names
from sitegen.builder.plan.listing import Listed, logs_from_events, trusted_logs
from sitegen.builder.state.store import State, open_published
from sitegen.errors import SitegenError
from sitegen.eventlog.discover import list_dirs
from sitegen.eventlog.localdir import LocalDir
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree


def _logs(tmp_path: Path, *ids: str) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    for job_id in ids:
        write(logs / f"{job_id}.eventlog", job_lines(job_id))
    return logs


def _from_events(logs: Path, site: Path, paths: set[str], **kw: bool) -> Listed | None:
    """Return the listing diff of ``paths`` against the published state; None: list."""
    options = BuildOptions(logs, site, **kw)
    heard = heard_names(options.log_dirs, paths)
    if heard is None:
        return None
    state = open_published(site)
    assert state is not None
    try:
        return logs_from_events(options.log_dirs, heard, state)
    finally:
        state.close()


def _from_listing(logs: Path, site: Path) -> Listed:
    """Return the listing diff of a readdir of ``logs`` against the published state."""
    options = BuildOptions(logs, site)
    state = open_published(site)
    assert state is not None
    try:
        listed = trusted_logs(options.log_dirs, list_dirs(options.log_dirs), state)
    finally:
        state.close()
    assert listed is not None
    return listed


def test_events_give_the_logs_a_readdir_would(tmp_path: Path) -> None:
    logs = _logs(tmp_path, "keep001", "gone002")
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    (logs / "gone002.eventlog").unlink()
    write(logs / "new0003.eventlog", job_lines("new0003"))
    # A file added and removed in one burst is named and is not there.
    paths = {str(logs / "gone002.eventlog"), str(logs / "new0003.eventlog"), str(logs / "b.x")}
    heard = _from_events(logs, site, paths)
    listed = _from_listing(logs, site)
    assert heard is not None
    assert heard.listings == [["keep001.eventlog", "new0003.eventlog"]]
    assert heard.differ == listed.differ == {"new0003.eventlog"}
    assert heard.gone == listed.gone == {"gone002.eventlog"}
    assert heard.logs.keys == sorted(listed.logs.keys)


def test_a_running_log_renamed_into_place_is_one_in_one_out(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    running = write(logs / "ren0001.eventlog.running", job_lines("ren0001")[:-1])
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    write(running, job_lines("ren0001"))
    final = running.rename(logs / "ren0001.eventlog")
    heard = _from_events(logs, site, {str(running), str(final)})
    assert heard is not None
    assert heard.gone == {"ren0001.eventlog.running"}
    assert heard.differ == {"ren0001.eventlog"}
    assert heard.listings == [["ren0001.eventlog"]]


def test_what_events_cannot_place_means_a_listing(tmp_path: Path) -> None:
    logs = _logs(tmp_path, "keep001")
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    (logs / "sub").mkdir()
    # A file deeper down, or the log dir itself: list the dir.
    assert _from_events(logs, site, {str(logs / "sub" / "x.eventlog")}) is None
    assert _from_events(logs, site, {str(logs)}) is None
    # Outside every log dir (a notes dir, the templates): a listing, rather than miss a log.
    assert _from_events(logs, site, {str(tmp_path / "notes" / "keep001.md")}) is None


def test_names_not_trusted_mean_a_listing(tmp_path: Path) -> None:
    logs = _logs(tmp_path, "keep001")
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    path = write(logs / "new0003.eventlog", job_lines("new0003"))
    report = build(
        BuildOptions(logs, site, trust_finished_logs=False), hint=Hint(frozenset({str(path)}))
    )
    assert not report.listed_from_events
    assert report.published == 2


@pytest.mark.parametrize("change", ["add", "remove"])
def test_a_hinted_build_publishes_the_listed_builds_site(tmp_path: Path, change: str) -> None:
    logs = _logs(tmp_path, "keep001", "gone002")
    sites = [tmp_path / "hinted", tmp_path / "listed"]
    for site in sites:
        build(BuildOptions(logs, site))
    path = logs / ("new0003.eventlog" if change == "add" else "gone002.eventlog")
    if change == "add":
        write(path, job_lines("new0003"))
    else:
        path.unlink()
    hinted = build(BuildOptions(logs, sites[0]), hint=Hint(frozenset({str(path)})))
    listed = build(BuildOptions(logs, sites[1]))
    assert hinted.listed_from_events and not listed.listed_from_events
    assert hinted.published == listed.published == (3 if change == "add" else 1)
    assert tree(sites[0]) == tree(sites[1])


def test_a_log_dir_named_relatively_takes_events_named_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _logs(tmp_path, "keep001")
    monkeypatch.chdir(tmp_path)
    build(BuildOptions(Path("logs"), Path("site")))
    write(tmp_path / "logs" / "new0003.eventlog", job_lines("new0003"))
    want = [["keep001.eventlog", "new0003.eventlog"]]
    for named in (str(tmp_path / "logs" / "new0003.eventlog"), "logs/new0003.eventlog"):
        heard = _from_events(Path("logs"), Path("site"), {named})
        assert heard is not None and heard.listings == want


def _identities(site: Path) -> tuple[list[str], list[int], list[int]]:
    state = open_published(site)
    assert state is not None
    try:
        stored = state.identities()
    finally:
        state.close()
    return (
        stored.keys,
        [int(n) for n in stored.sizes.split(",")],
        [int(n) for n in stored.times.split(",")],
    )


def test_events_read_no_listing_and_kept_logs_no_state_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs = _logs(tmp_path, "keep001", "gone002")
    site = tmp_path / "site"
    kept = KeptLogs()
    build(BuildOptions(logs, site), hint=Hint(None, kept))  # lists, as a watcher's first
    # What a build keeps is what the state holds, in its order.
    assert (kept.keys, list(kept.sizes), list(kept.times)) == _identities(site)
    monkeypatch.setattr(LocalDir, "list", lambda self: pytest.fail(f"{self} listed"))
    scans: list[int] = []
    real = State.identities

    def counted(self: State) -> Any:
        scans.append(1)
        return real(self)

    monkeypatch.setattr(State, "identities", counted)
    new = write(logs / "new0003.eventlog", job_lines("new0003"))
    report = build(BuildOptions(logs, site), hint=Hint(frozenset({str(new)}), kept))
    assert report.listed_from_events and report.published == 3
    gone = logs / "gone002.eventlog"
    gone.unlink()
    report = build(BuildOptions(logs, site), hint=Hint(frozenset({str(gone)}), kept))
    assert report.listed_from_events and report.published == 2
    assert scans == []  # each event spliced into the kept logs: the state's not scanned
    monkeypatch.setattr(State, "identities", real)
    assert (kept.keys, list(kept.sizes), list(kept.times)) == _identities(site)


def test_kept_logs_another_build_outdated_are_not_used(tmp_path: Path) -> None:
    logs = _logs(tmp_path, "keep001", "gone002")
    site = tmp_path / "site"
    kept = KeptLogs()
    build(BuildOptions(logs, site), hint=Hint(None, kept))
    # A cron build changes the state between the watcher's builds.
    (logs / "gone002.eventlog").unlink()
    build(BuildOptions(logs, site))
    new = write(logs / "new0003.eventlog", job_lines("new0003"))
    report = build(BuildOptions(logs, site), hint=Hint(frozenset({str(new)}), kept))
    assert report.listed_from_events
    assert report.published == 2  # gone002 stays gone: the state's logs, not the kept ones
    assert kept.keys == ["keep001.eventlog", "new0003.eventlog"]


class Builds:
    """A watcher's build that records each hint's paths and publishes nothing."""

    def __init__(self) -> None:
        self.paths: list[frozenset[str] | None] = []
        self.fail = False

    def __call__(self, options: BuildOptions, hint: Hint) -> Any:
        self.paths.append(hint.paths)
        if self.fail:
            raise SitegenError("a failed publish")
        return SimpleNamespace(running=[], listed_from_events=hint.paths is not None)


def test_the_watcher_lists_after_a_failure_a_dir_come_back_and_relist_seconds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitegen.builder import watch

    logs = _logs(tmp_path, "keep001")
    builds = Builds()
    watcher = watch.Watcher(BuildOptions(logs, tmp_path / "site"), builds, lambda done: None)
    path = str(logs / "new0003.eventlog")

    def publish(reason: str = "changed") -> frozenset[str] | None:
        watcher._heard.add(path)
        watcher.publish(reason)
        return builds.paths[-1]

    assert publish("first build") is None
    assert publish() == {path}  # events since a build that listed
    builds.fail = True
    publish()
    builds.fail = False
    assert publish() is None  # after a failed publish: list
    assert publish() == {path}
    assert publish("log dir changed") is None  # a dir come back: list
    clock = watch.time.monotonic()
    monkeypatch.setattr(watch.time, "monotonic", lambda: clock + watch.RELIST_SECONDS + 1)
    assert publish() is None  # RELIST_SECONDS since the last listing: list
