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
        yield
    finally:
        os.close(fd)  # closing the last descriptor releases the lock
