"""Hear inotify's queue overflow, which the watcher's own events never tell of.

When a watcher cannot drain its inotify queue (a burst of thousands of renames while it is
busy, stopped or starved), the kernel drops every further event and queues one
``IN_Q_OVERFLOW`` instead. ``watchfiles`` 1.3 keeps only events that carry a path, so the
overflow (notify's path-less rescan event) never reaches the watcher, and the names it missed
would wait for the next listing (``RELIST_SECONDS``). An ``OverflowAlarm`` is a second inotify
descriptor of its own on the same dirs, with the same event mask, drained only when the
watcher's loop asks: never more often than watchfiles drains its own (a thread that reads
all the time), so it overflows whenever that one does, and sometimes when it did not (a
burst during a long build): then a publish lists the dirs once without need.

Linux only (inotify, through libc): elsewhere, or when inotify refuses (too many instances
or watches), ``open_alarm`` returns None and the periodic listing is what remains.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import struct
from collections.abc import Iterable
from pathlib import Path

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_ISDIR = 0x40000000
IN_ONLYDIR = 0x01000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
# notify's inotify mask: the same events fill this queue as fast as they fill watchfiles'.
MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
)
HEADER = struct.Struct("iIII")  # wd, mask, cookie, len: struct inotify_event before its name
READ_SIZE = 1 << 20


class OverflowAlarm:
    """An inotify descriptor on the watched dirs that only tells whether its queue overflowed."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self.libc, self.fd = libc, fd
        # Each watch's dir: a dir made in one is watched too, as watchfiles watches it.
        self.dirs: dict[int, bytes] = {}

    def add(self, top: bytes) -> bool:
        """Watch ``top`` and every dir below it; False when inotify refuses (out of watches)."""
        for here, _subdirs, _files in os.walk(top):
            wd = self.libc.inotify_add_watch(self.fd, here, MASK | IN_ONLYDIR)
            if wd >= 0:
                self.dirs[wd] = here
            elif ctypes.get_errno() not in (errno.ENOENT, errno.ENOTDIR):  # not gone meanwhile
                return False
        return True

    def overflowed(self) -> bool:
        """Read every queued event; return whether the kernel dropped any since the last read."""
        lost = False
        while True:
            try:
                data = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                return lost
            except OSError:
                return True  # cannot tell: list rather than miss a log
            if not data:
                return lost
            offset = 0
            while offset + HEADER.size <= len(data):
                wd, mask, _, length = HEADER.unpack_from(data, offset)
                lost = lost or bool(mask & IN_Q_OVERFLOW)
                if mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO) and wd in self.dirs:
                    name = data[offset + HEADER.size : offset + HEADER.size + length]
                    # Out of watches: the dir's events are not counted, and the listing
                    # every RELIST_SECONDS stays.
                    self.add(os.path.join(self.dirs[wd], name.rstrip(b"\0")))
                offset += HEADER.size + length

    def close(self) -> None:
        """Close the descriptor (its watches go with it)."""
        os.close(self.fd)


def _libc() -> ctypes.CDLL | None:
    """Return the C library when it has inotify (Linux); None elsewhere."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None
    return libc if hasattr(libc, "inotify_init1") else None


def open_alarm(dirs: Iterable[Path]) -> OverflowAlarm | None:
    """Watch ``dirs`` and every directory below them (as watchfiles does, recursively).

    None: no inotify here, or it refused (a directory gone meanwhile is skipped).
    """
    libc = _libc()
    if libc is None:
        return None
    fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
    if fd < 0:
        return None
    alarm = OverflowAlarm(libc, fd)
    if not all(alarm.add(os.fsencode(top)) for top in dirs) or not alarm.dirs:
        alarm.close()  # out of watches: the watcher lists every RELIST_SECONDS
        return None
    return alarm
