from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from sitegen.errors import WriteError
from sitegen.publish.writer import SiteWriter


def test_paths_are_normalised_like_pure_posix_paths(tmp_path: Path) -> None:
    writer = SiteWriter(tmp_path / "out", fresh=True)
    writer.write("a//b/./c.txt", b"1")
    writer.write(PurePosixPath("a/d.txt"), b"22")
    writer.write("top.txt", b"333")
    assert (tmp_path / "out/a/b/c.txt").read_bytes() == b"1"
    assert writer.written_names() == ["a/b/c.txt", "a/d.txt", "top.txt"]
    assert writer.written == {PurePosixPath(n) for n in writer.written_names()}
    assert writer.bytes_written == 6
    assert writer.target("x/y") == tmp_path / "out/x/y"
    with pytest.raises(WriteError, match="same file"):
        writer.write("a/b//c.txt", b"again")


@pytest.mark.parametrize("rel", ["../x", "a/../../x", "/etc/x", "", ".", "a\\b", "a\x00b"])
def test_unsafe_paths_are_refused(tmp_path: Path, rel: str) -> None:
    writer = SiteWriter(tmp_path / "out", fresh=True)
    with pytest.raises(WriteError):
        writer.write(rel, b"x")
    assert writer.files_written == 0
