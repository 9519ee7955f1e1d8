"""Operator notes: ``<log dir>/notes/<job_id>.md``, tracked per job for incremental builds."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sitegen.eventlog.filekind import inside, open_regular

NOTES_DIR = "notes"


@dataclass(frozen=True)
class Note:
    """One job's note as read for a build: its Markdown text and the digest of its bytes."""

    text: str
    sha256: str


def notes_dirs(log_dirs: Sequence[Path]) -> list[Path]:
    """Return where notes live, in the order of the log dirs (the first note found wins)."""
    return [d / NOTES_DIR for d in log_dirs]


def readable(path: Path, follow_links: bool = False) -> bool:
    """Tell whether a note file may be read: a regular file inside its event-log dir.

    The rule of ``filekind`` for logs: a note linked out of the log dirs (to
    ``/etc/hostname``, say) is not rendered unless ``--follow-links``.
    """
    if not path.is_file():
        return False
    return follow_links or inside(str(path), [os.path.realpath(path.parent.parent)])


def note_path(dirs: Sequence[Path], job_id: str, follow_links: bool = False) -> Path | None:
    """Return the file holding a job's note, if the operator wrote one."""
    for directory in dirs:
        path = directory / f"{job_id}.md"
        if readable(path, follow_links):
            return path
    return None


def read_note(dirs: Sequence[Path], job_id: str, follow_links: bool = False) -> Note | None:
    """Read a job's note once: the text the page shows and the digest the manifest keeps."""
    path = note_path(dirs, job_id, follow_links)
    return None if path is None else _load(path)


def _load(path: Path) -> Note | None:
    """Read one note file; None when it cannot be read."""
    try:
        with open_regular(path) as f:
            data = f.read()
    except OSError:
        return None
    return Note(data.decode("utf-8", errors="replace"), hashlib.sha256(data).hexdigest())


class NoteIndex:
    """Every note file of a build, listed once: which jobs' notes changed since the last one."""

    def __init__(self, dirs: Sequence[Path], follow_links: bool = False) -> None:
        self.dirs = list(dirs)
        # Listing each directory once costs less than a stat per job (100,000 of them).
        self.paths: dict[str, Path] = {}
        for directory in reversed(self.dirs):  # earlier dirs win: they overwrite later ones
            if directory.is_dir():
                notes = directory.glob("*.md")
                self.paths.update((p.stem, p) for p in notes if readable(p, follow_links))

    def digest(self, job_id: str) -> str:
        """Return the digest of a job's note now, or "" when it has none."""
        path = self.paths.get(job_id)
        note = _load(path) if path is not None else None
        return note.sha256 if note else ""
