"""Operator notes: ``<log dir>/notes/<job_id>.md``, tracked per job for incremental builds."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sitegen.eventlog.filekind import open_regular, skip_reason
from sitegen.eventlog.sources import LogSource
from sitegen.model import Problem, ProblemKind

NOTES_DIR = "notes"


@dataclass(frozen=True)
class Note:
    """One job's note as read for a build: its Markdown text and the digest of its bytes.

    A note that cannot be read has no text and a ``problem`` saying why; its digest is
    that reason, so an incremental build notices when it appears, changes or is fixed.
    """

    text: str
    sha256: str
    path: Path
    problem: str | None = None

    def as_problem(self, job_id: str) -> Problem | None:
        """Return the problem to report for this note (a warning: the job still publishes)."""
        if self.problem is None:
            return None
        # Named from its log dir (notes/<job_id>.md): no path of the build machine on the site.
        shown = f"{self.path.parent.name}/{self.path.name}"
        return Problem(ProblemKind.UNREADABLE_NOTE, shown, self.problem, job_id=job_id)


def notes_dirs(log_dirs: Sequence[LogSource]) -> list[Path]:
    """Return where notes live, in the order of the log dirs (the first note found wins).

    Notes are read from local log dirs only (a prefix in object storage has none).
    """
    return [d.local / NOTES_DIR for d in log_dirs if d.local is not None]


def note_path(dirs: Sequence[Path], job_id: str) -> Path | None:
    """Return the file holding a job's note, if the operator wrote one (readable or not)."""
    for directory in dirs:
        path = directory / f"{job_id}.md"
        if os.path.lexists(path):
            return path
    return None


def read_note(dirs: Sequence[Path], job_id: str, follow_links: bool = False) -> Note | None:
    """Read a job's note once: the text the page shows and the digest the manifest keeps."""
    path = note_path(dirs, job_id)
    return None if path is None else _load(path, follow_links)


def _load(path: Path, follow_links: bool) -> Note:
    """Read one note file; a note that is not read says why in ``problem``.

    The rule of ``filekind`` for logs: a regular file, or a link to one inside the note's
    event-log dir (a note linked to ``/etc/hostname`` is never rendered) unless
    ``--follow-links``; a FIFO or a device is never opened.
    """
    skipped = skip_reason(
        str(path), path.is_symlink(), [os.path.realpath(path.parent.parent)], follow_links
    )
    if skipped is not None:
        return Note("", f"unreadable: {skipped}", path, skipped)
    try:
        with open_regular(path) as f:
            data = f.read()
        text = data.decode("utf-8")
    except OSError as exc:
        reason = f"cannot read the note: {exc.strerror or exc}"
    except UnicodeDecodeError as exc:
        reason = f"the note is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    else:
        return Note(text, hashlib.sha256(data).hexdigest(), path)
    return Note("", f"unreadable: {reason}", path, reason)


class NoteIndex:
    """Every note file of a build, listed once: which jobs' notes changed since the last one."""

    def __init__(self, dirs: Sequence[Path], follow_links: bool = False) -> None:
        self.dirs = list(dirs)
        self.follow_links = follow_links
        # Listing each directory once costs less than a stat per job (100,000 of them).
        # Whatever is named <job_id>.md counts, a directory or a dangling link too: it is
        # reported as unreadable rather than passed over.
        self.paths: dict[str, Path] = {}
        for directory in reversed(self.dirs):  # earlier dirs win: they overwrite later ones
            if directory.is_dir():
                self.paths.update((p.stem, p) for p in directory.glob("*.md"))

    def digest(self, job_id: str) -> str:
        """Return the digest of a job's note now (its reason, if unreadable); "" when none."""
        path = self.paths.get(job_id)
        return _load(path, self.follow_links).sha256 if path is not None else ""
