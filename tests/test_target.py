"""The build calls its publish target; the map step's context travels to workers alone."""

from __future__ import annotations

import contextlib
import os
import pickle
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sitegen.builder import pipeline
from sitegen.builder.compose import Parts, compose
from sitegen.builder.map.context import MapContext
from sitegen.builder.map.mapper import LocalMapper
from sitegen.builder.options import BuildOptions
from sitegen.builder.report import BuildReport
from sitegen.builder.targets.local import LocalPublishing, LocalTarget, Move
from sitegen.eventlog.limits import LogLimits
from sitegen.examples.generator import BASE_TIME_MS, JobSpec, write_log
from sitegen.layout import PARTS_DIR
from sitegen.render.pages import PageRenderer
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree

if TYPE_CHECKING:
    from sitegen.builder.map.mapper import Uploads
    from sitegen.builder.targets.local import Publishing, PublishTarget


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


class PlainPublishing:
    """A ``Publishing`` of its own: no lock, staging dirs beside the output, plain renames."""

    uploads: Uploads | None = None

    def __init__(self, options: BuildOptions, calls: list[str]) -> None:
        self.options = options
        self.calls = calls
        self.staging: Path | None = None

    def _staged(self) -> Path:
        assert self.staging is not None
        return self.staging

    def stage(self) -> Path:
        self.staging = self.options.output.parent / f"plain-stage-{len(self.calls)}"
        self.staging.mkdir()
        self.calls.append("stage")
        return self.staging

    def make_dirs(self, parents: Iterable[str]) -> None:
        for parent in parents:
            (self._staged() / parent).mkdir(parents=True, exist_ok=True)

    def discard(self) -> None:
        shutil.rmtree(self._staged(), ignore_errors=True)

    def replace(
        self, jobs: Iterable[Move], unpublished: list[str], commit: Callable[[], None]
    ) -> None:
        staging = self._staged()
        for root in unpublished:
            shutil.rmtree(staging / root)
        for source, root in jobs:
            os.rename(source, staging / root)
        shutil.rmtree(staging / PARTS_DIR, ignore_errors=True)
        commit()
        shutil.rmtree(self.options.output, ignore_errors=True)
        os.rename(staging, self.options.output)
        self.calls.append("replace")

    def update(
        self,
        jobs: Iterable[Move],
        listing: list[str],
        remove: list[str],
        commit: Callable[[], None],
    ) -> tuple[int, int]:
        out, staging = self.options.output, self._staged()
        replaced = replaced_bytes = 0
        for source, rel in jobs:
            shutil.rmtree(out / rel, ignore_errors=True)
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            os.rename(source, out / rel)
        for rel in listing:
            data = (staging / rel).read_bytes()
            if not (out / rel).is_file() or (out / rel).read_bytes() != data:
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                (out / rel).write_bytes(data)
                replaced, replaced_bytes = replaced + 1, replaced_bytes + len(data)
        for rel in remove:
            if (out / rel).is_dir():
                shutil.rmtree(out / rel)
            else:
                (out / rel).unlink(missing_ok=True)
        commit()
        shutil.rmtree(staging)
        self.calls.append("update")
        return replaced, replaced_bytes

    def finish(self, report: BuildReport) -> None:
        self.calls.append("finish")  # it attaches no report of its own


class PlainTarget:
    """A ``PublishTarget`` written against the interface alone (no lock, no atomic swap)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @contextlib.contextmanager
    def open(
        self, options: BuildOptions, on_wait: Callable[[], None] | None = None
    ) -> Iterator[PlainPublishing]:
        self.calls.append("open")
        yield PlainPublishing(options, self.calls)


def test_a_target_of_its_own_publishes_the_site_the_local_target_publishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, example_logs: Path
) -> None:
    plain = PlainTarget()

    def composed(options: BuildOptions) -> Parts:
        if options.output.name == "plain":
            return Parts(LocalMapper(1), plain)
        return compose(options)

    monkeypatch.setattr(pipeline, "compose", composed)
    sites = {name: tmp_path / name for name in ("plain", "local")}

    def both() -> list[BuildReport]:
        return [pipeline.build(BuildOptions(example_logs, s, workers=1)) for s in sites.values()]

    first = both()
    assert plain.calls == ["open", "stage", "replace", "finish"]
    assert tree(sites["plain"]) == tree(sites["local"]) and first[0].published == 25
    write_log(
        example_logs, JobSpec(job_id="one-more", job_name="more", start_ms=BASE_TIME_MS), seed=1
    )
    plain.calls.clear()
    second = both()
    assert plain.calls == ["open", "stage", "update", "finish"]
    assert second[0].published == second[1].published == 26
    assert tree(sites["plain"]) == tree(sites["local"])
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("plain-stage-")]


if TYPE_CHECKING:

    def _fakes_fit() -> tuple[PublishTarget, Publishing]:
        """Let mypy check the fake target against the interface it stands in for."""
        return PlainTarget(), PlainPublishing(BuildOptions(Path("logs"), Path("site")), [])
