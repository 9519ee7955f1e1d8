"""Errors the core raises; the CLI turns them into messages and exit codes."""

from __future__ import annotations

from pathlib import Path


class SitegenError(Exception):
    """A problem the user can fix, with the file (and line) it concerns."""

    def __init__(self, message: str, path: Path | str | None = None, line: int | None = None):
        self.message = message
        self.path = path
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        return where + self.message


class UsageError(SitegenError):
    """Options that cannot work together (bad directories, unsafe output)."""


class WriteError(SitegenError):
    """A write the writer refuses: outside the output, or a target written twice."""


class TemplateError(SitegenError):
    """A page template that cannot be compiled or rendered (an override, usually)."""


class PublishError(SitegenError):
    """The system stopped the build: a full or read-only disk, a permission."""


class ClusterError(SitegenError):
    """The Dask cluster stopped the build: its scheduler went away, or no answer in time."""
