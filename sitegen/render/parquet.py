"""Write one SQL table of many jobs as a Parquet file, and describe every table for the manifest.

pyarrow is imported only here, when a file is written: a site built without the ``sql``
extra has no ``data/`` (docs/data.md).
"""

from __future__ import annotations

import importlib
from array import array
from collections.abc import Sequence
from typing import Any

from sitegen.errors import UsageError
from sitegen.render.tables import DOUBLE, INT64, NULL, STRING, TABLES, TIMESTAMP, JobTables

# data/manifest.json's layout.
MANIFEST_FORMAT = 1
# Rows per row group: each is a column chunk per column, the unit a reader over HTTP fetches
# (one range request) or skips by its statistics. At 64 Ki rows a tasks chunk is 0.2-230 kB
# compressed: a query of one job or one hour reads a few, and a file of 800,000 attempts has
# 13 groups and a 22 kB footer (docs/data.md has the figures).
ROW_GROUP_ROWS = 1 << 16
# zstd's own default level: 9 writes 7 % fewer bytes in twice the time.
ZSTD_LEVEL = 3
# Integer columns are written with delta encoding (times in log order differ by little), text
# with a dictionary (ids, statuses and executors repeat): 12 % fewer bytes than a dictionary
# for every column, in half the time.
_ENCODING = {INT64: "DELTA_BINARY_PACKED", TIMESTAMP: "DELTA_BINARY_PACKED"}


def schema_json() -> dict[str, Any]:
    """Return ``data/manifest.json`` without its files: every table's columns (name, type, doc).

    The builder fills each table's ``files`` (``{"path", "rows", "bytes"}``, the path from
    ``data/``).
    """
    return {
        "format": MANIFEST_FORMAT,
        "tables": {
            name: {
                "columns": [{"name": c.name, "type": c.type, "doc": c.doc} for c in columns],
                "files": [],
            }
            for name, columns in TABLES.items()
        },
    }


def _pyarrow() -> tuple[Any, Any, Any]:
    """Return pyarrow, pyarrow.compute and pyarrow.parquet; say how to install them if missing."""
    try:
        return (
            importlib.import_module("pyarrow"),
            importlib.import_module("pyarrow.compute"),
            importlib.import_module("pyarrow.parquet"),
        )
    except ImportError:
        raise UsageError(
            "the SQL tables (data/) need pyarrow: pip install 'sitegen[sql]'"
        ) from None


def arrow_type(pa: Any, name: str) -> Any:
    """Return the pyarrow type of a column type name of ``TABLES``."""
    types = {
        STRING: pa.string(),
        INT64: pa.int64(),
        DOUBLE: pa.float64(),
        TIMESTAMP: pa.timestamp("ms", tz="UTC"),
    }
    return types[name]


def table_parquet(table: str, jobs: Sequence[JobTables]) -> bytes:
    """Return the Parquet file of ``table`` holding the rows of ``jobs``, in that order.

    The same rows give the same bytes (with the same pyarrow): no write time, no pandas metadata.
    """
    pa, pc, pq = _pyarrow()
    columns = TABLES[table]
    # job_id is held once a job: repeated here, in C.
    ids = [pa.repeat(pa.scalar(job.job_id, pa.string()), job.rows(table)) for job in jobs]
    arrays = [pa.concat_arrays(ids) if ids else pa.array([], pa.string())]
    for n, column in enumerate(columns[1:]):
        kind = arrow_type(pa, column.type)
        parts = [job.tables[table][n] for job in jobs]
        if column.type == STRING:
            arrays.append(pa.array(parts[0] if len(parts) == 1 else _chained(parts), kind))
            continue
        joined = array("d" if column.type == DOUBLE else "q")
        for part in parts:
            joined.extend(part)  # type: ignore[arg-type]  # one typecode per column
        arrays.append(_numbers(pa, pc, kind, joined, column.type != DOUBLE))
    schema = pa.schema([pa.field(c.name, arrow_type(pa, c.type)) for c in columns])
    data = pa.Table.from_arrays(arrays, schema=schema)
    sink = pa.BufferOutputStream()
    pq.write_table(
        data,
        sink,
        row_group_size=ROW_GROUP_ROWS,
        compression="zstd",
        compression_level=ZSTD_LEVEL,
        write_statistics=True,
        use_dictionary=[c.name for c in columns if c.type == STRING],
        column_encoding={c.name: _ENCODING[c.type] for c in columns if c.type in _ENCODING},
        # The Arrow schema is not stored: Parquet's own types say all (timestamps in UTC).
        store_schema=False,
    )
    return bytes(sink.getvalue())


def _chained(parts: list[Any]) -> list[Any]:
    """Return the values of several jobs' text columns as one list."""
    joined: list[Any] = []
    for part in parts:
        joined += part
    return joined


def _numbers(pa: Any, pc: Any, kind: Any, values: array[Any], nullable: bool) -> Any:
    """Return an Arrow array of ``kind`` over ``values`` (``NULL`` as null when ``nullable``)."""
    data = pa.py_buffer(values)
    plain = pa.Array.from_buffers(kind, len(values), [None, data])
    if not nullable:
        return plain
    valid = pc.not_equal(pa.Array.from_buffers(pa.int64(), len(values), [None, data]), NULL)
    if valid.false_count == 0:
        return plain
    return pa.Array.from_buffers(kind, len(values), [valid.buffers()[1], data])
