"""Publishing into an output that is a mount point (a Docker or Kubernetes volume)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.layout import DEFAULT_TITLE
from sitegen.publish import mounts, writer
from tests.helpers.namespaces import in_mount_namespace, q, require_mounts
from tests.helpers.sitetree import tree


def test_mountinfo_escapes_are_decoded() -> None:
    assert mounts._unescape(r"/srv/my\040site\134x") == "/srv/my site\\x"


def test_root_is_a_mount_point_and_a_plain_directory_is_not(tmp_path: Path) -> None:
    assert mounts.is_mount_point(Path("/"))
    assert not mounts.is_mount_point(tmp_path)
    assert not mounts.is_mount_point(tmp_path / "missing")


def _as_if_mounted(monkeypatch: pytest.MonkeyPatch, output: Path) -> None:
    """Make sitegen treat ``output`` as a mount point, as it would a volume."""
    monkeypatch.setattr(writer, "is_mount_point", lambda path: path == output)


@pytest.mark.slow  # four builds of the examples
def test_builds_into_a_mount_point_stay_inside_it(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    out.mkdir()
    _as_if_mounted(monkeypatch, out)
    # A killed build's staging dir, left in the volume by a process that is gone.
    stale = out / ".sitegen-staging-999999999-0000"
    (stale / "jobs").mkdir(parents=True)
    first = build(BuildOptions(example_logs, out))
    assert not stale.exists()
    victim = next(example_logs.glob("*.eventlog"))
    victim.rename(tmp_path / victim.name)
    incremental = build(BuildOptions(example_logs, out))
    assert incremental.published == first.published - 1
    (out / "old-only.html").write_text("in the old site only")  # a full build removes it
    build(BuildOptions(example_logs, out, title="Volume"))  # new options: a full build
    # Nothing was made beside the volume, and nothing of the build is left in it.
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["logs", "site", victim.name])
    assert not [p.name for p in out.iterdir() if p.name.startswith(".sitegen-staging-")]
    direct = tmp_path / "direct"
    build(BuildOptions(example_logs, direct, title="Volume"))
    assert tree(out) == tree(direct)


@pytest.mark.slow  # a tmpfs in a mount namespace, four CLI builds
def test_a_real_volume_is_published_into(tmp_path: Path, example_logs: Path) -> None:
    """Mount a tmpfs at the output in a private mount namespace and build into it."""
    out, after_update, after_full = tmp_path / "site", tmp_path / "update", tmp_path / "full"
    for directory in (out, after_update, after_full):
        directory.mkdir()
    require_mounts(out)
    victim = next(example_logs.glob("*.eventlog"))
    build_cmd = f"{q(sys.executable)} -m sitegen build --event-log-dir {q(example_logs)} "
    build_cmd += f"--output {q(out)} -q"
    run = in_mount_namespace(
        f"mount -t tmpfs tmpfs {q(out)} && {build_cmd} && {build_cmd} --clean && "
        f"mv {q(victim)} {q(tmp_path)} && {build_cmd} && cp -a {q(out)}/. {q(after_update)}/ && "
        f"{build_cmd} --title Volume && cp -a {q(out)}/. {q(after_full)}/"
    )
    assert run.returncode == 0, run.stderr
    assert not list(out.iterdir())  # the tmpfs went with its namespace
    for title, published in ((DEFAULT_TITLE, after_update), ("Volume", after_full)):
        direct = tmp_path / f"direct-{published.name}"
        build(BuildOptions(example_logs, direct, title=title))
        assert tree(published) == tree(direct)
