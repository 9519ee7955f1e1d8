"""A disk that refuses a write: one clear line, and the published site stays as it was."""

from __future__ import annotations

import errno
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli import cli
from sitegen.publish.writer import SiteWriter
from tests.helpers.namespaces import in_mount_namespace, q, require_mounts
from tests.helpers.sitetree import tree


def test_a_full_disk_is_one_line_and_keeps_the_site(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    args = ["build", "--event-log-dir", str(example_logs), "--output", str(out)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    before = tree(out)

    def full(self: SiteWriter, rel: object, chunks: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(SiteWriter, "write_chunks", full)
    result = CliRunner().invoke(cli, [*args, "--title", "New"])
    assert (result.exit_code, result.output) == (
        1,
        f"Error: {out}: the build stopped: No space left on device\n",
    )
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "site"]


@pytest.mark.slow  # a tmpfs in a mount namespace
def test_a_real_full_disk(tmp_path: Path, example_logs: Path) -> None:
    """Build into a tmpfs with room for one site, then rebuild: a second site does not fit."""
    disk, before, after = tmp_path / "disk", tmp_path / "before", tmp_path / "after"
    for directory in (disk, before, after):
        directory.mkdir()
    require_mounts(disk)
    site = disk / "site"
    build = f"{q(sys.executable)} -m sitegen build --event-log-dir {q(example_logs)} "
    build += f"--output {q(site)}"
    run = in_mount_namespace(
        # The example site takes about 4.3 MB of tmpfs pages: one fits, not two.
        f"mount -t tmpfs -o size=6000k tmpfs {q(disk)} && {build} -q && "
        f"cp -a {q(site)}/. {q(before)}/ && "
        f"{{ {build} --title New; echo exit=$?; }} && "
        f"ls -A {q(disk)} && cp -a {q(site)}/. {q(after)}/"
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == f"Error: {site}: the build stopped: No space left on device\n"
    assert run.stdout.splitlines() == ["exit=1", "site"]  # no staging dir left behind
    assert len(tree(before)) > 100
    assert tree(after) == tree(before)


def test_parts_dir_that_cannot_be_removed_fails_the_build(
    tmp_path: Path, example_logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sitegen.builder.options import BuildOptions
    from sitegen.builder.pipeline import build
    from sitegen.errors import PublishError
    from sitegen.layout import PARTS_DIR
    from sitegen.publish import writer

    site = tmp_path / "site"
    build(BuildOptions(example_logs, site))
    before = tree(site)
    real = writer.shutil.rmtree

    def stuck(path: Path, *args: object, **kwargs: object) -> None:
        if Path(path).name == PARTS_DIR:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(writer.shutil, "rmtree", stuck)
    # Published, the part dirs would be served: the build fails and the site stays as it was.
    with pytest.raises(PublishError, match="Permission denied"):
        build(BuildOptions(example_logs, site, clean=True))
    assert tree(site) == before
    assert not (site / PARTS_DIR).exists()
    assert [p.name for p in tmp_path.iterdir() if "staging" in p.name] == []
