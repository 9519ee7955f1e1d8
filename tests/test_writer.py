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
