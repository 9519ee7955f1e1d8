"""Which files sitegen reads: regular files only, and links only to files inside the log dirs.

A FIFO would block a build forever, a link to ``/dev/zero`` never ends, and a link to
``/etc/hostname`` would put a file of the build machine on a page. The rule, for logs and
operator notes alike: a log dir entry is read when it is a regular file, or a symbolic
link to a regular file inside one of the event-log dirs; ``--follow-links`` lifts the second
condition (never the first). What is not read is reported, with why.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from collections.abc import Sequence

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def not_regular(mode: int) -> str | None:
    """Say what a file of this ``st_mode`` is when it is not a regular file, else None."""
    if stat.S_ISREG(mode):
        return None
    for test, what in _KINDS:
        if test(mode):
            return what
    return "not a regular file"


def inside(path: str, roots: Sequence[str]) -> bool:
    """Tell whether ``path``, links resolved, lies inside one of ``roots`` (real paths)."""
    real = os.path.realpath(path)
    return any(real.startswith(root.rstrip("/") + "/") for root in roots)


def skip_reason(path: str, is_link: bool, roots: Sequence[str], follow_links: bool) -> str | None:
    """Say why the file at ``path`` is not read (see the module's rule), or None to read it."""
    try:
        st = os.stat(path)
    except OSError:
        return None  # dangling or unreadable: reading it says why
    what = not_regular(st.st_mode)
    if what is not None:
        via = "a symbolic link to " if is_link else ""
        return f"skipped: {via}{what}, not a regular file"
    if is_link and not follow_links and not inside(path, roots):
        return (
            "skipped: a symbolic link to a file outside the event-log dirs "
            "(--follow-links reads it)"
        )
    return None


def _open_regular_fd(path: str | os.PathLike[str]) -> tuple[int, int]:
    """Open a regular file's descriptor for reading; return it and the file's size."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        what = not_regular(st.st_mode)
        if what is not None:
            raise OSError(errno.EINVAL, f"{what}, not a regular file", os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def open_regular(path: str | os.PathLike[str]) -> io.BufferedReader:
    """Open a file for reading only if it is a regular file (a FIFO swapped in never blocks)."""
    return open_regular_sized(path)[0]


def open_regular_sized(path: str | os.PathLike[str]) -> tuple[io.BufferedReader, int]:
    """Open a regular file as ``open_regular`` does; return it and its size when opened."""
    fd, size = _open_regular_fd(path)
    try:
        return os.fdopen(fd, "rb"), size
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """Return a regular file's bytes (open_regular's rule), read without a file object."""
    # A file object costs a stat, an ioctl and two seeks more per log than these reads.
    fd, size = _open_regular_fd(path)
    try:
        # One read of it all, and one more that finds the end (or what was appended since).
        pieces: list[bytes] = []
        while piece := os.read(fd, 1 << 16 if pieces else size + 1):
            pieces.append(piece)
        return b"".join(pieces)  # of one piece, that piece itself: no copy
    finally:
        os.close(fd)
