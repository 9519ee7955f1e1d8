"""Stream a log's original bytes gzip-compressed, for the job page's download link."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import IO, NamedTuple

from zlib_ng import zlib_ng

from sitegen.eventlog import compression
from sitegen.eventlog.limits import DEFAULT_LIMITS, LogLimits
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


class HeldLog(NamedTuple):
    """A log read into memory once: its bytes as stored, and as plain lines."""

    # As stored (a ``.gz`` log's gzip bytes): its digest and its download come from these.
    stored: bytes
    # Decompressed (the same object for a plain log): the reader and the peek read these.
    plain: bytes


def hold_log(path: LogPath, size: int, limits: LogLimits = DEFAULT_LIMITS) -> HeldLog | None:
    """Return a log's bytes, read once, when small enough to hold; None: stream it.

    A compressed log is held when its stored bytes are within ``HOLD_LIMIT`` and its plain
    ones within ``HOLD_LIMIT`` and ``limits.max_log_bytes``: it is then decompressed once,
    for every step that reads it. A damaged one, or one past the limits, is not held: the
    reader streams it and says what is wrong, as it always did.
    """
    kind = compression.compression_of(path)
    if kind is None:
        plain = hold(path, size)
        return None if plain is None else HeldLog(plain, plain)
    if size > HOLD_LIMIT:
        return None
    try:
        stored = read_source(path)
        if not stored:
            return None  # an empty archive: the reader says it is damaged
        cap = min(HOLD_LIMIT, limits.max_log_bytes)
        # Read through the streams the reader uses (gzip's bound, the zstd step): a bomb
        # makes at most ``cap`` bytes before it is let go.
        with compression.unpack(io.BytesIO(stored), kind) as unpacked:
            plain = _read_upto(unpacked, cap + 1)
    except (OSError, *compression.DAMAGE_ERRORS):
        return None
    return None if len(plain) > cap else HeldLog(stored, plain)


def _read_upto(stream: io.RawIOBase | io.BufferedIOBase, most: int) -> bytes:
    """Return ``stream``'s bytes up to ``most`` of them (a raw stream gives a step a read)."""
    pieces: list[bytes] = []
    got = 0
    while got < most and (piece := stream.read(min(CHUNK, most - got))):
        pieces.append(piece)
        got += len(piece)
    return b"".join(pieces)


def reads(stream: IO[bytes]) -> Iterator[bytes]:
    """Yield ``stream`` in reads of up to ``CHUNK`` bytes, until it ends."""
    while chunk := stream.read(CHUNK):
        yield chunk


def gzip_chunks(
    path: LogPath, held: bytes | None = None, stored: bytes | None = None
) -> Iterator[bytes]:
    """Yield the log as gzip: a ``.gz`` log as it is, anything else compressed on the fly.

    ``held`` is the plain log's bytes when they are already in memory (see ``hold``), and
    ``stored`` its bytes as stored (``HeldLog.stored``), which a ``.gz`` log is yielded from.
    Held or streamed, in whatever pieces, the same log gives the same bytes.
    """
    if compression.compression_of(path) == "gzip":
        if stored is not None:
            yield stored  # as it is, in one write
            return
        with open_source(path) as raw:
            yield from reads(raw)
        return
    if held is not None:
        # In one call: a compressor object cost a small job's log a third more (74 us
        # against 50 for 15 kB), and its bytes are the same whatever the pieces.
        yield zlib_ng.compress(held, LEVEL, GZIP_WBITS)
        return
    packer = zlib_ng.compressobj(LEVEL, zlib_ng.DEFLATED, GZIP_WBITS)
    with open_log(path) as stream:
        for piece in reads(stream):
            yield packer.compress(piece)
    yield packer.flush()
