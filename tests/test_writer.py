from __future__ import annotations

import os
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


def test_directories_swap_with_libc_looked_up_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ctypes.util

    from sitegen.publish import writer as writer_module

    lookups: list[str] = []
    real = ctypes.util.find_library

    def counting(name: str) -> str | None:
        lookups.append(name)
        return real(name)

    monkeypatch.setattr(ctypes.util, "find_library", counting)
    writer_module._renameat2.cache_clear()
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "mark").write_text("a")
    for swaps in (1, 2, 3):
        assert writer_module._exchange(a, b)
        assert (b if swaps % 2 else a).joinpath("mark").read_text() == "a"
    assert lookups == ["c"]
    writer_module._renameat2.cache_clear()


def test_a_fresh_root_links_a_copy_and_replaces_a_rewrite_alone(tmp_path: Path) -> None:
    writer = SiteWriter(tmp_path / "site", fresh=True)
    writer.write("api/job/a/index.json", b'{"a":1}')
    writer.write_copy("api/job/a/index.html", "api/job/a/index.json", b'{"a":1}')
    first, copy = tmp_path / "site/api/job/a/index.json", tmp_path / "site/api/job/a/index.html"
    assert copy.read_bytes() == b'{"a":1}'
    assert copy.stat().st_ino == first.stat().st_ino  # one file, two names
    assert writer.files_written == 2 and writer.bytes_written == 14
    # Written again (a page spliced anew): through a rename, so its link keeps the old bytes.
    SiteWriter(tmp_path / "site", fresh=True).write("api/job/a/index.json", b'{"a":2}')
    assert first.read_bytes() == b'{"a":2}' and copy.read_bytes() == b'{"a":1}'
    assert not list((tmp_path / "site/api/job/a").glob(".*"))  # no temporary name left


def test_a_copy_into_a_published_tree_is_a_file_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "site").mkdir()
    writer = SiteWriter(tmp_path / "site")
    writer.write("a.json", b"[1]")
    writer.write_copy("a.html", "a.json", b"[1]")
    assert (tmp_path / "site/a.html").read_bytes() == b"[1]"
    assert (tmp_path / "site/a.html").stat().st_ino != (tmp_path / "site/a.json").stat().st_ino


def test_a_copy_is_a_file_where_links_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", refuse)
    writer = SiteWriter(tmp_path / "site", fresh=True)
    writer.write("a.json", b"[1]")
    writer.write_copy("a.html", "a.json", b"[1]")
    assert (tmp_path / "site/a.html").read_bytes() == b"[1]"
    assert writer.files_written == 2
