"""One build at a time per output: an advisory lock on the directory the output lives in.

Two builds into one output (a cron job that overran, or ``sitegen serve`` and a manual
build) would each trust the manifest they read and interleave their in-place updates,
leaving a manifest that no longer describes the site. The lock is on the directory the
published site lives in (beside the output, or beside its symlink's target), not on a
file: each full build replaces the output directory itself (so a lock on it would not
exclude anyone), and a lock file would be a file left outside the output.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from sitegen.publish.writer import published_dir

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows has no flock: builds are not serialised
    fcntl = None  # type: ignore[assignment]


# The descriptor holding the lock while a build runs: forked workers close their copy
# (``forget_inherited``), so that a worker outliving a killed build cannot hold the lock.
_held: set[int] = set()


def forget_inherited() -> None:
    """Close this (forked) process's copies of the lock descriptors; the parent keeps its lock."""
    # Closing a copy does not unlock (flock belongs to the open file, which the parent
    # still has open); only LOCK_UN would, and it must never be called here.
    for fd in list(_held):
        with contextlib.suppress(OSError):
            os.close(fd)
    _held.clear()


def holders(output: Path) -> list[int]:
    """Return the ids of the processes /proc/locks says hold the lock for ``output``."""
    try:
        st = os.stat(published_dir(output).absolute().parent)
        with open("/proc/locks", encoding="ascii", errors="replace") as locks:
            lines = locks.read().splitlines()
    except OSError:
        return []  # not Linux, or no /proc: the wait message names nobody
    # "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF": device in hex, inode in decimal.
    wanted = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    pids: list[int] = []
    for line in lines:
        fields = line.split()
        if len(fields) >= 6 and fields[1:2] == ["FLOCK"] and fields[5] == wanted:
            pids.extend(int(pid) for pid in fields[4:5] if pid.isdigit())
    return pids


@contextlib.contextmanager
def exclusive(output: Path, on_wait: Callable[[], None] | None = None) -> Iterator[None]:
    """Hold the build lock for ``output``; call ``on_wait`` first if another build holds it."""
    parent = published_dir(output).absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    except PermissionError:  # a directory we may write in but not list: build unlocked
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if on_wait is not None:
                on_wait()
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            # Some network filesystems cannot lock a directory: build unlocked, as before.
            if exc.errno not in (errno.EBADF, errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL):
                raise
        _held.add(fd)
        yield
    finally:
        _held.discard(fd)
        os.close(fd)  # closing the last descriptor releases the lock
