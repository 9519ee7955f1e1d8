"""One job's rows of the SQL tables as the build state keeps them: a compact blob.

msgpack of the columns, numbers as little-endian bytes (long columns byte-shuffled, so that
zstd finds the bytes that vary little together), zstd-compressed. The map step encodes it; the
reduce decodes the blobs of the segments it writes (builder/datafiles.py).
"""

from __future__ import annotations

import sys
from array import array
from typing import Any

import msgspec
import zstandard

from sitegen.render.tables import DOUBLE, STRING, TABLES, JobTables, Values

# The blob's layout (2: number columns under SHUFFLE_FROM items are not shuffled). A blob of
# another layout does not decode: the build takes its state for damaged and builds afresh.
BLOB_FORMAT = 2


class _Blob(msgspec.Struct, array_like=True):
    """One job's tables as kept in the build state: numbers as shuffled little-endian bytes."""

    format: int
    job_id: str
    tables: list[list[bytes | list[str | None]]]


_BIG_ENDIAN = sys.byteorder == "big"


def _bytes(values: array[int] | array[float]) -> bytes:
    """Return an array's items as little-endian bytes, shuffled: each item's first, then second.

    Shuffled, the bytes that vary little (the high bytes of times and counts) stand together,
    and zstd makes a blob a quarter smaller than of the plain bytes (docs/data.md).
    """
    if _BIG_ENDIAN:
        values = array(values.typecode, values)
        values.byteswap()
    raw = values.tobytes()
    if len(values) < SHUFFLE_FROM:
        return raw
    return b"".join(raw[k::_ITEM] for k in range(_ITEM))


def _array(typecode: str, data: bytes) -> array[Any]:
    """Return the array of shuffled little-endian ``data`` (``_bytes``)."""
    if len(data) % _ITEM:
        raise msgspec.DecodeError("a number column of a partial item")
    count = len(data) // _ITEM
    if count < SHUFFLE_FROM:
        values = array(typecode, data)
    else:
        raw = bytearray(len(data))
        for k in range(_ITEM):
            raw[k::_ITEM] = data[k * count : (k + 1) * count]
        values = array(typecode, raw)
    if _BIG_ENDIAN:
        values.byteswap()
    return values


# The bytes of an item of every number column (int64, float64).
_ITEM = 8
# Columns shorter than this are not shuffled: on a small job's 55 short columns the shuffle
# was a quarter of encoding its rows, for a few bytes of a blob of about 1 kB.
SHUFFLE_FROM = 64


def encode_tables(tables: JobTables) -> bytes:
    """Return one job's tables as a zstd-compressed msgpack blob (``decode_tables`` reads it)."""
    blob = _Blob(
        BLOB_FORMAT,
        tables.job_id,
        [[v if isinstance(v, list) else _bytes(v) for v in tables.tables[name]] for name in TABLES],
    )
    # A compressor per call: one shared would not be safe in a threaded (Dask) worker.
    return zstandard.ZstdCompressor(level=_LEVEL).compress(msgspec.msgpack.encode(blob))


def decode_tables(data: bytes) -> JobTables:
    """Return the tables of a blob ``encode_tables`` made.

    Any other blob raises ``msgspec.DecodeError`` (a ValueError): to the build, a damaged state,
    which it builds afresh (another sitegen's blobs, a blob of an older layout).
    """
    try:
        blob = _DECODER.decode(zstandard.ZstdDecompressor().decompress(data))
    except (msgspec.DecodeError, zstandard.ZstdError) as exc:
        raise msgspec.DecodeError(f"not a job's tables: {exc}") from exc
    if blob.format != BLOB_FORMAT or len(blob.tables) != len(TABLES):
        raise msgspec.DecodeError(f"job tables of another layout ({blob.format})")
    found: dict[str, list[Values]] = {}
    for (name, columns), values in zip(TABLES.items(), blob.tables, strict=True):
        if len(values) != len(columns) - 1:
            raise msgspec.DecodeError(f"job tables of another layout ({name})")
        found[name] = [
            _column(column.type, value) for column, value in zip(columns[1:], values, strict=True)
        ]
    return JobTables(blob.job_id, found)


def _column(kind: str, value: bytes | list[str | None]) -> Values:
    """Return one decoded column of type ``kind``."""
    if kind == STRING:
        if not isinstance(value, list):
            raise msgspec.DecodeError("a text column held numbers")
        return value
    if not isinstance(value, bytes):
        raise msgspec.DecodeError("a number column held text")
    return _array("d" if kind == DOUBLE else "q", value)


_DECODER = msgspec.msgpack.Decoder(_Blob)
# zstd's default level: 9 makes a blob of 800,000 attempts 0.5 % smaller in twice the time.
_LEVEL = 3
