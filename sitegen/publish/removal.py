"""Remove a replaced site's tree in bounded memory, never following a link."""

from __future__ import annotations

import itertools
import os
from pathlib import Path

# Names of one directory held at a time. ``shutil.rmtree`` lists a directory whole before it
# removes any entry: the old site's ``jobs/`` and ``api/job/`` hold one entry per job, and
# removing a site of 100,000 jobs made the build that replaced it 56 MB larger at its end.
BATCH = 4096
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: Path) -> None:
    """Remove a directory and everything in it, by descriptors (a link is removed, not followed)."""
    # Each frame: a directory's descriptor, its name in its parent, and the subdirectories of
    # its last batch still to remove. A batch's files go first, then its subdirectories one
    # by one; the directory is read again for its next batch (its removed names are gone).
    stack: list[tuple[int, str, list[str]]] = [(os.open(path, _DIR_FLAGS), "", [])]
    try:
        while stack:
            fd, _, subdirs = stack[-1]
            if subdirs:
                name = subdirs.pop()
                try:
                    stack.append((os.open(name, _DIR_FLAGS, dir_fd=fd), name, []))
                except NotADirectoryError:  # replaced by a link or a file meanwhile
                    os.unlink(name, dir_fd=fd)
                continue
            with os.scandir(fd) as entries:
                batch = [
                    (e.name, e.is_dir(follow_symlinks=False))
                    for e in itertools.islice(entries, BATCH)
                ]
            for name, is_dir in batch:
                if is_dir:
                    subdirs.append(name)
                else:
                    os.unlink(name, dir_fd=fd)
            if not batch:
                os.close(fd)
                _, name, _ = stack.pop()
                if stack:
                    os.rmdir(name, dir_fd=stack[-1][0])
    finally:
        for fd, _, _ in stack:
            os.close(fd)
    os.rmdir(path)
