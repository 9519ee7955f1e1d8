"""Read a built site as a dict of path -> bytes, to compare two sites byte for byte."""

from __future__ import annotations

from pathlib import Path


def tree(root: Path) -> dict[str, bytes]:
    """Return every file below ``root`` by its relative path."""
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }
