"""Stream a log's original bytes gzip-compressed, for the job page's download link."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO

from zlib_ng import zlib_ng

from sitegen.eventlog import compression
from sitegen.eventlog.reader import open_log
from sitegen.eventlog.sources import LogPath, open_source, read_source

CHUNK = 1 << 20
# zlib-ng level 2 (deflate_fast): about 640 MB/s on event logs here (zlib level 1: 195 MB/s)
# and files as small as ISA-L's level 1. Unlike ISA-L (whose bytes changed with where its
# input was cut, and twice in a loaded long-lived process) and zlib-ng's level 1, its bytes
# are a function of the log's alone, on every CPU (one hash function): docs/configuration.md.
# Any gzip reader opens it.
LEVEL = 2
# A gzip member with a zero timestamp: no clock in the file.
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
    """Yield ``held`` in ``CHUNK``-sized pieces (views: no copies), to stream the output."""
    view = memoryview(held)
    for start in range(0, len(view), CHUNK):
        yield view[start : start + CHUNK]


def reads(stream: IO[bytes]) -> Iterator[bytes]:
    """Yield ``stream`` in reads of up to ``CHUNK`` bytes, until it ends."""
    while chunk := stream.read(CHUNK):
        yield chunk


def gzip_chunks(path: LogPath, held: bytes | None = None) -> Iterator[bytes]:
    """Yield the log as gzip: a ``.gz`` log as it is, anything else compressed on the fly.

    ``held`` is the plain log's bytes when they are already in memory (see ``hold``).
    Held or streamed, in whatever pieces, the same log gives the same bytes.
    """
    if held is None and compression.compression_of(path) == "gzip":
        with open_source(path) as raw:
            yield from reads(raw)
        return
    packer = zlib_ng.compressobj(LEVEL, zlib_ng.DEFLATED, GZIP_WBITS)
    if held is not None:
        for view in _pieces(held):
            yield packer.compress(view)
    else:
        with open_log(path) as stream:
            for piece in reads(stream):
                yield packer.compress(piece)
    yield packer.flush()
