"""Find event logs in a directory and judge job ids as path segments."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from sitegen.errors import UsageError

# Newer schedulers write `<id>.eventlog.running` while a job runs (Ballista #2405).
# Operators and CI compress finished logs; those are streamed, never unpacked (reader.open_log).
SUFFIXES = (".eventlog", ".eventlog.running", ".eventlog.gz", ".eventlog.zst")
MAX_ID_BYTES = 200


@dataclass(frozen=True)
class LogFile:
    """One candidate log: where it is and the job id its name suggests."""

    path: Path
    name_id: str
    running: bool
    size: int
    mtime_ns: int
    # How reports and the manifest name the log: the file name, prefixed with its
    # directory's name when several event-log dirs are read.
    key: str = ""


def split_name(name: str) -> tuple[str, bool] | None:
    """Return (job id from the file name, running?) for a log file name, else None."""
    for suffix in SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)], suffix.endswith(".running")
    return None


def check_log_dir(log_dir: Path) -> None:
    """Refuse an event-log dir that is missing, not a directory, or not readable."""
    if not log_dir.exists():
        raise UsageError("event-log dir does not exist", log_dir)
    if not log_dir.is_dir():
        raise UsageError("event-log dir is not a directory", log_dir)
    if not os.access(log_dir, os.R_OK | os.X_OK):
        raise UsageError("event-log dir is not readable", log_dir)


def discover_all(log_dirs: Sequence[Path]) -> list[LogFile]:
    """List the logs of every dir in order; with several dirs, keys name the dir too."""
    if len(log_dirs) == 1:
        return discover(log_dirs[0])
    found = []
    labels: set[str] = set()
    for n, log_dir in enumerate(log_dirs):
        label = log_dir.resolve().name or f"dir{n + 1}"
        if label in labels:
            label = f"{label}#{n + 1}"
        labels.add(label)
        found += [replace(log, key=f"{label}/{log.key}") for log in discover(log_dir)]
    return found


def discover(log_dir: Path) -> list[LogFile]:
    """List every log in ``log_dir``, sorted by name so builds are deterministic."""
    check_log_dir(log_dir)
    try:
        entries = sorted(log_dir.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise UsageError(f"cannot read event-log dir: {exc.strerror}", log_dir) from exc
    found = []
    for entry in entries:
        parsed = split_name(entry.name)
        if parsed is None:
            continue
        try:
            st = entry.stat()
        except OSError:
            st = None
        if st is not None and not entry.is_file():
            continue
        found.append(
            LogFile(
                path=entry,
                name_id=parsed[0],
                running=parsed[1],
                size=st.st_size if st else 0,
                mtime_ns=st.st_mtime_ns if st else 0,
                key=entry.name,
            )
        )
    return found


def unsafe_id_reason(job_id: str) -> str | None:
    """Say why ``job_id`` cannot be one path segment on disk and in a URL, or None."""
    if job_id == "":
        return "job id is empty"
    if job_id in (".", ".."):
        return f"job id {job_id!r} is a relative path"
    if len(job_id.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        return f"job id is longer than {MAX_ID_BYTES} bytes"
    for ch in job_id:
        if ch in "/\\":
            return f"job id {job_id!r} contains a path separator"
        if ch == "\x00" or unicodedata.category(ch) in ("Cc", "Cs"):
            return f"job id {job_id!r} contains a control character"
    return None
