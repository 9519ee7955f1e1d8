"""An open state database: its connection, transactions, meta rows and the site's files."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path


class Base:
    """An open state database; every change is one transaction, committed by ``commit``."""

    def __init__(self, path: Path, connection: sqlite3.Connection) -> None:
        self.path = path
        self.db = connection
        self.fingerprint = ""
        self.closed = False

    def _meta(self, values: dict[str, str]) -> None:
        """Record the state's layout, sitegen version and fingerprint."""
        self.db.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", values.items())

    def begin(self) -> None:
        """Start the build's one write transaction (others wait: builds take turns anyway)."""
        self.db.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        """Commit the build's changes: the site and its state now agree."""
        if self.db.in_transaction:
            self.db.execute("COMMIT")

    def close(self) -> None:
        """Close the database (again is fine); an uncommitted transaction rolls back."""
        if self.closed:
            return
        self.closed = True
        try:
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")
        finally:
            self.db.close()

    def site_bytes(self, root: Path) -> int:
        """Return the bytes of the site at ``root``: its published jobs' and site-wide files."""
        return self.jobs_bytes() + self.site_files_bytes(root)

    def jobs_bytes(self) -> int:
        """Return the bytes of the published jobs' files."""
        (jobs,) = self.db.execute(
            "SELECT coalesce(sum(bytes), 0) FROM log WHERE published"
        ).fetchone()
        return int(jobs)

    def site_files_bytes(self, root: Path) -> int:
        """Return the bytes of the site-wide files at ``root``."""
        return sum(file_size(root, path) for path in self.site_files())

    def site_files(self) -> set[str]:
        """Return the site-wide files (not job directories) the site holds."""
        return {path for (path,) in self.db.execute("SELECT path FROM site_file")}

    def meta_value(self, name: str) -> str | None:
        """Return one meta row's value (None when it is not recorded)."""
        row = self.db.execute("SELECT value FROM meta WHERE name = ?", (name,)).fetchone()
        return None if row is None else str(row[0])


def file_size(root: Path, path: str) -> int:
    """Return the size of a file of the site (0: not there)."""
    try:
        return os.stat(f"{root}/{path}").st_size
    except OSError:  # listed but gone: a site being updated; count what is there
        return 0
