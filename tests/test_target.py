"""The build calls its publish target; the map step's context travels to workers alone."""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import pytest

from sitegen.builder import pipeline
from sitegen.builder.compose import Parts
from sitegen.builder.mapcontext import MapContext
from sitegen.builder.mappers import LocalMapper
from sitegen.builder.options import BuildOptions
from sitegen.builder.report import BuildReport
from sitegen.builder.target import LocalPublishing, LocalTarget, Move
from sitegen.eventlog.limits import LogLimits
from sitegen.render.pages import PageRenderer
from tests.logs import job_lines, write


class Recording(LocalPublishing):
    """The local target's publishing, noting what the build asked of it, in order."""

    def __init__(self, options: BuildOptions, calls: list[str]) -> None:
        super().__init__(options)
        self.calls = calls

    def stage(self) -> Path:
        self.calls.append("stage")
        return super().stage()

    def replace(
        self, jobs: Iterable[Move], unpublished: list[str], commit: Callable[[], None]
    ) -> None:
        self.calls.append("replace")
        super().replace(jobs, unpublished, commit)

    def update(
        self,
        jobs: Iterable[Move],
        listing: list[str],
        remove: list[str],
        commit: Callable[[], None],
    ) -> tuple[int, int]:
        self.calls.append("update")
        return super().update(jobs, listing, remove, commit)

    def finish(self, report: BuildReport) -> None:
        self.calls.append("finish")
        super().finish(report)


class RecordingTarget(LocalTarget):
    """A local target whose publishing notes the build's calls."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @contextlib.contextmanager
    def open(
        self, options: BuildOptions, on_wait: Callable[[], None] | None = None
    ) -> Iterator[Recording]:
        self.calls.append("open")
        with super().open(options, on_wait):
            yield Recording(options, self.calls)


def test_a_full_build_replaces_the_site_and_an_incremental_one_updates_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs, site = tmp_path / "logs", tmp_path / "site"
    logs.mkdir()
    write(logs / "job-a.eventlog", job_lines("job-a"))
    target = RecordingTarget()
    monkeypatch.setattr(pipeline, "compose", lambda options: Parts(LocalMapper(1), target))
    options = BuildOptions(logs, site, workers=1)

    first = pipeline.build(options)
    assert target.calls == ["open", "stage", "replace", "finish"]
    assert first.publish is not None and first.publish.changed is None  # swapped in whole
    assert (site / "api" / "job" / "job-a").is_dir()

    target.calls.clear()
    write(logs / "job-b.eventlog", job_lines("job-b"))
    second = pipeline.build(options)
    assert target.calls == ["open", "stage", "update", "finish"]
    assert second.publish is not None and second.publish.changed is not None
    assert "api/job/job-b" in second.publish.changed
    assert "api/job/job-a" not in second.publish.changed

    target.calls.clear()
    third = pipeline.build(options)
    assert third.up_to_date and target.calls == ["open", "finish"]
    assert third.publish is None  # nothing published: nothing to report


def test_a_failed_build_discards_its_staging_dir_and_keeps_the_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    logs, site = tmp_path / "logs", tmp_path / "site"
    logs.mkdir()
    write(logs / "job-a.eventlog", job_lines("job-a"))
    pipeline.build(BuildOptions(logs, site, workers=1))
    before = sorted(p.relative_to(site) for p in site.rglob("*"))

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(LocalPublishing, "update", broken)
    write(logs / "job-b.eventlog", job_lines("job-b"))
    with pytest.raises(Exception, match="the build stopped: No space left on device"):
        pipeline.build(BuildOptions(logs, site, workers=1))
    assert sorted(p.relative_to(site) for p in site.rglob("*")) == before
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


def test_the_map_context_carries_the_map_steps_options_and_the_renderer_only_renders() -> None:
    pages = PageRenderer(title="History")
    pages.warm()
    limits = LogLimits(max_log_bytes=1 << 20)
    context = MapContext(pages, limits=limits, raw_logs=False, data=True, follow_links=True)
    back = pickle.loads(pickle.dumps(context))
    assert back.limits == limits and not back.raw_logs and back.data and back.follow_links
    assert back.pages.title == "History" and back.pages._env is None  # workers build their own
    for option in ("limits", "raw_logs", "notes_dirs", "follow_links"):
        assert not hasattr(pages, option)
