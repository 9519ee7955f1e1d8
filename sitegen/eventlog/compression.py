"""Stream compressed logs (``.gz``, ``.zst``) like plain ones, never unpacking them to disk."""

from __future__ import annotations

import gzip
import io
import zlib
from typing import IO, TYPE_CHECKING

from sitegen.eventlog.sources import LogPath, open_sized

if TYPE_CHECKING:
    import zstandard
    from _typeshed import WriteableBuffer

# File-name suffix of a compressed log -> the name used in messages.
COMPRESSIONS = {".gz": "gzip", ".zst": "zstd"}
# Compressed bytes read per step. A step holds this times the compression ratio in memory
# (event logs compress about 10:1), as reading a plain log holds its longest line.
CHUNK = 64 * 1024
# Lines are read from a buffer this large, so short lines cost no per-line system call.
BUFFER = 1024 * 1024
# Compressed bytes inflated per step. zstd inflates at most 128 KiB per 4-byte block
# (32,768:1): one step never makes more than 8 MiB, whatever the file (a 64 KiB chunk of a
# bomb made 2 GiB at once). gzip is bounded by its reader (at most 1,032:1, asked for in
# small reads).
ZSTD_STEP = 256


class DamagedStream(Exception):
    """The compressed data is truncated or corrupt; the message says which."""


def compression_of(path: LogPath) -> str | None:
    """Return the compression a log's name announces ("gzip", "zstd"), or None."""
    return COMPRESSIONS.get(path.suffix)


def open_compressed(path: LogPath, compression: str) -> io.RawIOBase | io.BufferedIOBase:
    """Open a compressed log as a stream of its plain bytes (a local one: a regular file)."""
    source, size = open_sized(path)
    if size == 0:
        source.close()
        # A plain empty log is a job that just started; an empty archive is a failed compression.
        raise DamagedStream(f"the file is empty (no {compression} data)")
    return unpack(source, compression)


def unpack(source: IO[bytes], compression: str) -> io.RawIOBase | io.BufferedIOBase:
    """Return a stream of the plain bytes of compressed ``source`` (closed with it)."""
    if compression == "gzip":
        unpacked = gzip.GzipFile(fileobj=source, mode="rb")
        unpacked.myfileobj = source  # type: ignore[assignment]  # closed with it
        return unpacked
    return _ZstdStream(source)  # raw: the caller buffers it


# Everything a damaged compressed stream can raise while it is read.
DAMAGE_ERRORS = (DamagedStream, EOFError, gzip.BadGzipFile, zlib.error)


def damage_message(exc: BaseException) -> str:
    """Say in words what is wrong with a compressed stream that raised ``exc``."""
    if isinstance(exc, DamagedStream):
        return str(exc)
    if isinstance(exc, EOFError):
        return "gzip data is truncated (the file ends mid-stream)"
    if isinstance(exc, gzip.BadGzipFile):
        return f"not valid gzip data: {exc}"
    return f"corrupt gzip data: {exc}"


# Not zstandard's own stream_reader: it ends quietly when the input stops mid-frame,
# which would pass a truncated log off as a short one.
class _ZstdStream(io.RawIOBase):
    """Decompress zstd frames one after another and notice a stream cut off mid-frame."""

    def __init__(self, source: IO[bytes]) -> None:
        import zstandard

        self._source = source
        self._error: type[Exception] = zstandard.ZstdError
        self._dctx = zstandard.ZstdDecompressor()
        self._frame: zstandard.ZstdDecompressionObj = self._dctx.decompressobj()
        self._in_frame = False
        self._out = b""
        self._pos = 0
        self._done = False
        self._in = memoryview(b"")
        self._in_pos = 0

    def readable(self) -> bool:
        """Say that this stream can be read."""
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        """Fill ``buffer`` with plain bytes; 0 only at the clean end of the last frame."""
        while self._pos >= len(self._out) and not self._done:
            if self._in_pos >= len(self._in):
                chunk = self._source.read(CHUNK)
                if not chunk:
                    self._done = True
                    if self._in_frame:
                        raise DamagedStream("zstd data is truncated (the file ends mid-frame)")
                    break
                self._in, self._in_pos = memoryview(chunk), 0
            step = self._in[self._in_pos : self._in_pos + ZSTD_STEP]
            self._in_pos += ZSTD_STEP
            self._feed(step)
        view = memoryview(buffer).cast("B")
        n = min(len(view), len(self._out) - self._pos)
        view[:n] = memoryview(self._out)[self._pos : self._pos + n]
        self._pos += n
        return n

    def _feed(self, data: bytes | memoryview) -> None:
        """Decompress ``data``, starting a new frame wherever one ends."""
        out = []
        try:
            while data:
                self._in_frame = True
                out.append(self._frame.decompress(data))
                if not self._frame.eof:
                    break
                data = self._frame.unused_data
                self._frame = self._dctx.decompressobj()
                self._in_frame = False
        except self._error as exc:
            raise DamagedStream(f"corrupt zstd data: {exc}") from exc
        # Only called once everything decompressed before was handed out.
        self._out = b"".join(out)
        self._pos = 0

    def close(self) -> None:
        """Close the compressed file too."""
        self._source.close()
        super().close()
