"""Tell whether a directory is a mount point: a volume the build cannot rename or replace."""

from __future__ import annotations

import os
import re
from pathlib import Path

MOUNTINFO = "/proc/self/mountinfo"
_ESCAPE = re.compile(r"\\([0-7]{3})")


def _unescape(field: str) -> str:
    """Decode the octal escapes mountinfo writes for spaces, tabs, newlines and backslashes."""
    return _ESCAPE.sub(lambda m: chr(int(m.group(1), 8)), field)


def is_mount_point(path: Path) -> bool:
    """Tell whether a filesystem is mounted at ``path`` (a Docker or Kubernetes volume)."""
    if not path.is_dir():
        return False
    real = os.path.realpath(path)
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as f:
            # The fifth field is the mount point. Unlike os.path.ismount, this also finds
            # bind mounts of a directory of the same filesystem, which cannot be renamed either.
            return any(_unescape(line.split()[4]) == real for line in f)
    except OSError:  # no /proc (macOS, BSD)
        return os.path.ismount(path)
