"""Write one SQL table of many jobs as a Parquet file, and describe every table for the manifest.

pyarrow is imported only here, when a file is written: a site built without the ``sql``
extra has no ``data/`` (docs/data.md).
"""

from __future__ import annotations

import importlib
import struct
from collections.abc import Sequence
from itertools import chain
from typing import Any

from sitegen.errors import UsageError
from sitegen.render.tables import (
    BY_ROW,
    DOUBLE,
    INT64,
    NULL,
    NUMBER_NAMES,
    STRING,
    TABLES,
    TIMESTAMP,
    JobTables,
    Part,
)

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
    """Return pyarrow, its ``call_function`` and pyarrow.parquet; say how to install them."""
    try:
        pa = importlib.import_module("pyarrow")
        pq = importlib.import_module("pyarrow.parquet")
    except ImportError:
        raise UsageError(
            "the SQL tables (data/) need pyarrow: pip install 'sitegen[sql]'"
        ) from None
    try:
        # The compute functions without pyarrow.compute, whose import (a wrapper made for each
        # function) took 78 ms of CPU, 40 us a job of a build of 2,000.
        call = importlib.import_module("pyarrow._compute").call_function
    except (ImportError, AttributeError):
        call = importlib.import_module("pyarrow.compute").call_function
    return pa, call, pq


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
    pa, call, pq = _pyarrow()
    columns = TABLES[table]
    parts = [job.parts[table] for job in jobs]
    rows = sum(part.rows for part in parts)
    # Each column's parts of every job joined in one call (a call per job and column was most
    # of the reduce's time on small jobs); the numbers of a table BY_ROW, all in one.
    texts = iter(zip(*[part.texts for part in parts], strict=True))
    if table in BY_ROW:
        numbers = iter(_by_row(pa, call, table, parts, rows))
    else:
        numbers = (b"".join(p) for p in zip(*[part.numbers for part in parts], strict=True))
    arrays = [_job_ids(pa, call, jobs, parts, rows)]
    for column in columns[1:]:
        kind = arrow_type(pa, column.type)
        if column.type == STRING:
            arrays.append(pa.array(list(chain.from_iterable(next(texts, ()))), kind))
            continue
        data = next(numbers, b"")
        if len(data) != rows * 8:
            raise ValueError(f"{table}.{column.name}: {len(data)} bytes for {rows} rows")
        arrays.append(_numbers(pa, call, kind, data, rows, column.type != DOUBLE))
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


def _by_row(pa: Any, call: Any, table: str, parts: list[Part], rows: int) -> list[Any]:
    """Return the number columns of parts kept row by row, each as a buffer of its items."""
    width = len(NUMBER_NAMES[table])
    items = pa.py_buffer(b"".join([part.numbers[0] for part in parts]))
    if len(items) != rows * width * 8:
        raise ValueError(f"{table}: {len(items)} bytes for {rows} rows of {width} numbers")
    matrix = pa.FixedSizeListArray.from_arrays(
        pa.Array.from_buffers(pa.int64(), rows * width, [None, items]), width
    )
    found = []
    for k in range(width):
        column = call("list_element", [matrix, pa.scalar(k, pa.int32())])
        found.append(memoryview(column.buffers()[1])[column.offset * 8 :][: rows * 8])
    return found


def _job_ids(pa: Any, call: Any, jobs: Sequence[JobTables], parts: list[Part], rows: int) -> Any:
    """Return the job_id column: each job's id once a row, taken in C from the list of ids."""
    # Each job's position once per row (4 bytes each), then the ids taken at them: a
    # pyarrow.repeat per job and table took 4 us.
    index = b"".join([_INDEX(n) * part.rows for n, part in enumerate(parts)])
    positions = pa.Array.from_buffers(pa.int32(), rows, [None, pa.py_buffer(index)])
    return call("take", [pa.array([job.job_id for job in jobs], pa.string()), positions])


def _numbers(pa: Any, call: Any, kind: Any, data: Any, count: int, nullable: bool) -> Any:
    """Return an Arrow array of ``kind`` over ``data`` (``NULL`` as null when ``nullable``)."""
    buffer = pa.py_buffer(data)
    plain = pa.Array.from_buffers(kind, count, [None, buffer])
    if not nullable:
        return plain
    numbers = pa.Array.from_buffers(pa.int64(), count, [None, buffer])
    valid = call("not_equal", [numbers, pa.scalar(NULL, pa.int64())])
    if valid.false_count == 0:
        return plain
    return pa.Array.from_buffers(kind, count, [valid.buffers()[1], buffer])


# A job's position in the file's list of jobs, as an int32 in the machine's order.
_INDEX = struct.Struct("=i").pack
