"""Read a built site as a dict of path -> bytes, to compare two sites byte for byte."""

from __future__ import annotations

from pathlib import Path

from sitegen.layout import BOOKKEEPING


def tree(root: Path) -> dict[str, bytes]:
    """Return every file below ``root`` by its relative path, the build's state aside."""
    # The state database is SQLite: the same rows written in another order are other bytes,
    # and no host serves it. What it holds is checked by what the next build publishes.
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and str(p.relative_to(root)) not in BOOKKEEPING
    }
