"""Stream a log's original bytes gzip-compressed, for the job page's download link."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from isal import isal_zlib

from sitegen.eventlog import compression
from sitegen.eventlog.reader import open_log
from sitegen.eventlog.sources import LogPath, open_source, read_source

CHUNK = 1 << 20
# ISA-L level 1: about 890 MB/s on event logs here (zlib level 1: 230 MB/s, level 6: 80),
# and a smaller file than zlib level 1. Any gzip reader opens it.
LEVEL = 1
# A gzip member with a zero timestamp: the same bytes from every fresh process (a loaded,
# long-lived one has twice made another valid encoding: docs/configuration.md, Raw logs).
GZIP_WBITS = 31
# A plain log up to this size is read into memory once: its pages, its hash and its
# download then come from the same bytes (a log still being appended to cannot differ
# between them), and reading it a second and third time is saved.
HOLD_LIMIT = 64 << 20


def hold(path: LogPath, size: int) -> bytes | None:
    """Return a plain log's bytes when it is small enough to hold; None: stream it."""
    if size > HOLD_LIMIT or compression.compression_of(path) is not None:
        return None
    try:
        return read_source(path)  # an object in one GET, not a stream of ranged ones
    except OSError:
        return None  # the reader opens it again and says why it cannot


def _pieces(held: bytes) -> Iterator[memoryview]:
    """Yield ``held`` in ``CHUNK``-sized pieces (views: no copies)."""
    view = memoryview(held)
    for start in range(0, len(view), CHUNK):
        yield view[start : start + CHUNK]


def full_reads(stream: IO[bytes]) -> Iterator[bytes]:
    """Yield ``stream`` in ``CHUNK``-sized pieces, however short its reads come back."""
    # A decompressing reader (or a network file system) may return less than asked for:
    # the pieces fed to the compressor must not depend on that.
    while True:
        piece = stream.read(CHUNK)
        if not piece:
            return
        while len(piece) < CHUNK and (more := stream.read(CHUNK - len(piece))):
            piece += more
        yield piece


def gzip_chunks(path: LogPath, held: bytes | None = None) -> Iterator[bytes]:
    """Yield the log as gzip: a ``.gz`` log as it is, anything else compressed on the fly.

    ``held`` is the plain log's bytes when they are already in memory (see ``hold``).
    The compressor is fed the same ``CHUNK``-sized pieces whether the log was held or
    streamed: ISA-L's output depends on where its input is cut, and a site's bytes must
    depend only on the log's.
    """
    if held is None and compression.compression_of(path) == "gzip":
        with open_source(path) as raw:
            while chunk := raw.read(CHUNK):
                yield chunk
        return
    packer = isal_zlib.compressobj(LEVEL, isal_zlib.DEFLATED, GZIP_WBITS)
    if held is not None:
        for view in _pieces(held):
            yield packer.compress(view)
    else:
        with open_log(path) as stream:
            for piece in full_reads(stream):
                yield packer.compress(piece)
    yield packer.flush()
