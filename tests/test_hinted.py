"""A watcher's events as the log dirs' listings (builder/hinted.py): the same site, no listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitegen.builder.hinted import hinted_listings
from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.state.store import open_published
from sitegen.eventlog.discover import list_dirs
from tests.logs import job_lines, write
from tests.sitetree import tree


def _logs(tmp_path: Path, *ids: str) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    for job_id in ids:
        write(logs / f"{job_id}.eventlog", job_lines(job_id))
    return logs


def _hinted(logs: Path, site: Path, hint: set[str], **kw: bool) -> list[list[str]] | None:
    options = BuildOptions(logs, site, **kw)
    state = open_published(site)
    assert state is not None
    try:
        return hinted_listings(options.log_dirs, state, hint)
    finally:
        state.close()


def test_events_give_the_listing_a_readdir_would(tmp_path: Path) -> None:
    logs = _logs(tmp_path, "keep001", "gone002")
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    (logs / "gone002.eventlog").unlink()
    write(logs / "new0003.eventlog", job_lines("new0003"))
    # A file added and removed in one burst is named and is not there.
    hint = {str(logs / "gone002.eventlog"), str(logs / "new0003.eventlog"), str(logs / "brief.x")}
    listed = _hinted(logs, site, hint)
    assert listed == [sorted(list_dirs(BuildOptions(logs, site).log_dirs)[0])]
    assert listed == [["keep001.eventlog", "new0003.eventlog"]]


def test_what_events_cannot_place_means_a_listing(tmp_path: Path) -> None:
    logs = _logs(tmp_path, "keep001")
    site = tmp_path / "site"
    build(BuildOptions(logs, site))
    (logs / "sub").mkdir()
    # A file deeper down, the log dir itself, or names that are not trusted: list the dir.
    assert _hinted(logs, site, {str(logs / "sub" / "x.eventlog")}) is None
    assert _hinted(logs, site, {str(logs)}) is None
    assert _hinted(logs, site, {str(logs / "a.eventlog")}, trust_finished_logs=False) is None
    # Outside every log dir (a notes dir, the templates): a listing, rather than miss a log.
    assert _hinted(logs, site, {str(tmp_path / "notes" / "keep001.md")}) is None


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
    hinted = build(BuildOptions(logs, sites[0]), hint={str(path)})
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
        assert _hinted(Path("logs"), Path("site"), {named}) == want
