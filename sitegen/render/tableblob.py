"""One job's rows of the SQL tables as the build state keeps them: a compact blob.

msgpack of each table's ``Part``: its number columns as little-endian bytes (a column of
``tasks`` of ``SHUFFLE_FROM`` items or more byte-shuffled, so that zstd finds the bytes that
vary little together; a table ``BY_ROW`` in one buffer), then its text columns;
zstd-compressed. The map step encodes it; the reduce decodes the blobs of the segments it
writes (builder/reduce/datafiles.py) and ``render.parquet`` joins their parts.
"""

from __future__ import annotations

import sys
import threading
from array import array
from typing import Any

import msgspec
import zstandard

from sitegen.render.tables import (
    BY_ROW,
    NUMBER_NAMES,
    ROW_FORMAT,
    TABLES,
    TEXT_NAMES,
    Buffer,
    JobTables,
    Part,
)

# The blob's layout (3: a table is its number columns, then its text columns, the numbers of
# a table ``BY_ROW`` in one buffer; 2: every column in schema order). A blob of another
# layout does not decode: the build takes its state for damaged and builds afresh.
BLOB_FORMAT = 3


class _Table(msgspec.Struct, array_like=True, gc=False):
    """One table of a job's blob: its number columns' bytes and its text columns."""

    numbers: list[bytes]
    texts: list[list[str | None]]


class _Blob(msgspec.Struct, array_like=True, gc=False):
    """One job's tables as kept in the build state, in ``TABLES`` order."""

    format: int
    job_id: str
    tables: list[_Table]


_BIG_ENDIAN = sys.byteorder == "big"
# The bytes of an item of every number column (int64, float64).
_ITEM = 8
# Columns shorter than this are not shuffled: on a small job's 55 short columns the shuffle
# was a quarter of encoding its rows, for a few bytes of a blob of about 1 kB.
SHUFFLE_FROM = 64


def _shuffled(raw: bytes) -> bytes:
    """Return a column's bytes shuffled: each item's first byte, then each one's second, ….

    Shuffled, the bytes that vary little (the high bytes of times and counts) stand together,
    and zstd makes a blob a quarter smaller than of the plain bytes (docs/data.md).
    """
    return b"".join([raw[k::_ITEM] for k in range(_ITEM)])


def _unshuffled(data: bytes, count: int) -> bytearray:
    """Return the plain bytes of a column of ``count`` items ``_shuffled`` shuffled."""
    raw = bytearray(len(data))
    for k in range(_ITEM):
        raw[k::_ITEM] = data[k * count : (k + 1) * count]
    return raw


def _compressor() -> zstandard.ZstdCompressor:
    """Return this thread's compressor (made once: a new one per blob took 20 of 45 us)."""
    try:
        return _LOCAL.compressor  # type: ignore[no-any-return]
    except AttributeError:
        _LOCAL.compressor = zstandard.ZstdCompressor(level=_LEVEL)
        return _LOCAL.compressor  # type: ignore[no-any-return]


def _decompressor() -> zstandard.ZstdDecompressor:
    """Return this thread's decompressor (made once: a new one per blob took 4 of 15 us)."""
    try:
        return _LOCAL.decompressor  # type: ignore[no-any-return]
    except AttributeError:
        _LOCAL.decompressor = zstandard.ZstdDecompressor()
        return _LOCAL.decompressor  # type: ignore[no-any-return]


def encode_tables(tables: JobTables) -> bytes:
    """Return one job's tables as a zstd-compressed msgpack blob (``decode_tables`` reads it)."""
    found = []
    for name in TABLES:
        part = tables.parts[name]
        numbers: list[Any] = part.numbers
        if _BIG_ENDIAN:
            numbers = [_swapped(v) for v in numbers]
        if name in BY_ROW or part.rows < SHUFFLE_FROM:
            numbers = [memoryview(v) for v in numbers]  # no copy: msgspec reads each
        else:
            numbers = [_shuffled(bytes(v)) for v in numbers]
        found.append([numbers, part.texts])
    # Not a _Blob: msgspec encodes the lists as it would the struct.
    return _compressor().compress(_ENCODER.encode([BLOB_FORMAT, tables.job_id, found]))


def decode_tables(data: bytes) -> JobTables:
    """Return the tables of a blob ``encode_tables`` made.

    Any other blob raises ``msgspec.DecodeError`` (a ValueError): to the build, a damaged state,
    which it builds afresh (another sitegen's blobs, a blob of an older layout).
    """
    try:
        blob = _DECODER.decode(_decompressor().decompress(data))
    except (msgspec.DecodeError, zstandard.ZstdError) as exc:
        raise msgspec.DecodeError(f"not a job's tables: {exc}") from exc
    if blob.format != BLOB_FORMAT or len(blob.tables) != len(TABLES):
        raise msgspec.DecodeError(f"job tables of another layout ({blob.format})")
    parts: dict[str, Part] = {}
    for name, table in zip(TABLES, blob.tables, strict=True):
        numbers, texts = table.numbers, table.texts
        rows = len(texts[0]) if texts else 0
        if len(texts) != len(TEXT_NAMES[name]) or set(map(len, texts)) != {rows}:
            raise msgspec.DecodeError(f"job tables of another layout ({name})")
        if name in BY_ROW:
            sizes = [rows * ROW_FORMAT[name].size]
        else:
            sizes = [rows * _ITEM] * len(NUMBER_NAMES[name])
        if list(map(len, numbers)) != sizes:
            raise msgspec.DecodeError(f"job tables of another layout ({name})")
        found: list[Buffer] = list(numbers)
        if name not in BY_ROW and rows >= SHUFFLE_FROM:
            found = [_unshuffled(v, rows) for v in numbers]
        if _BIG_ENDIAN:
            found = [_swapped(v) for v in found]
        parts[name] = Part(rows, found, texts)
    return JobTables(blob.job_id, parts=parts)


def _swapped(data: Buffer) -> array[int]:
    """Return a column's items with their bytes the other way round (a big-endian machine)."""
    values = array("q", bytes(data))
    values.byteswap()
    return values


_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(_Blob)
# zstd's default level: 9 makes a blob of 800,000 attempts 0.5 % smaller in twice the time.
_LEVEL = 3
# A compressor and a decompressor per thread: one is not safe to share between the threads
# of a (Dask) worker.
_LOCAL = threading.local()
