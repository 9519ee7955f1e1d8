"""Read the SQL tables (``data/``) a build wrote, as the query page's answers are checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"


def read(site: Path, table: str) -> Any:
    """Return one table of a site's ``data/`` as a pyarrow Table, its files read in order."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = site / "data"
    manifest = json.loads((data / MANIFEST).read_text())
    parts = [pq.read_table(data / f["path"]) for f in manifest["tables"][table]["files"]]
    return pa.concat_tables(parts)


def rows(site: Path, table: str) -> list[dict[str, Any]]:
    """Return every row of one table of a site's ``data/``, in the files' order."""
    found: list[dict[str, Any]] = read(site, table).to_pylist()
    return found
