"""Bounded reading: how many bytes one log and one line may hold, and lines read within them.

A log is untrusted: a 331 KB zstd file can inflate to 10 GiB, a gzip file can hold one
line of 10 GiB or 256 MiB of empty lines. Lines are read with their length bounded (a
line past the limit is never held whole), runs of blank lines are skipped at C speed,
and every byte a log yields counts against the log's limit.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

# Far above any real Ballista log: a job of 2 million task attempts writes about 600 MB,
# and its longest line (a JobEnd with every plan) a few MB.
MAX_LOG_BYTES = 4 << 30
MAX_LINE_BYTES = 256 << 20


@dataclass(frozen=True)
class LogLimits:
    """The most one log may hold once decompressed, one of its lines, and a running log's age."""

    max_log_bytes: int = MAX_LOG_BYTES
    max_line_bytes: int = MAX_LINE_BYTES
    # A .running log not written to for longer than this (ns) is abandoned, a finished one
    # without JobEnd ended unrecorded; 0: never. ``now_ns`` is the build's clock
    # (SOURCE_DATE_EPOCH honoured), as retention takes it.
    stale_after_ns: int = 0
    now_ns: int = 0
    # The key prefixes ("" for one dir) of the log dirs whose scheduler renames a log from
    # ``.eventlog.running`` to ``.eventlog`` when its job ends (Ballista #2405): there a
    # ``.eventlog`` without JobEnd ended unrecorded (eventlog.classify; the build tells them).
    renaming: frozenset[str] = frozenset()

    def stale(self, mtime_ns: int) -> str | None:
        """Return how long ago a log was last written (``mtime_ns``) if past the age, else None."""
        age = self.now_ns - mtime_ns
        if not self.stale_after_ns or age <= self.stale_after_ns:
            return None
        return age_text(age)

    def abandoned(self, mtime_ns: int) -> str | None:
        """Return why a running log last written at ``mtime_ns`` is abandoned, else None."""
        age = self.stale(mtime_ns)
        if age is None:
            return None
        return f"last written {age} ago; the scheduler stopped before the job ended"


def age_text(ns: int) -> str:
    """Return an age in its largest whole unit: ``3 days``, ``5 hours``, ``1 minute``."""
    seconds = ns // 1_000_000_000
    for unit, size in (("day", 86_400), ("hour", 3_600), ("minute", 60)):
        if seconds >= size:
            n = seconds // size
            return f"{n} {unit}{'s' if n != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


DEFAULT_LIMITS = LogLimits()


class OverLimit(Exception):
    """A log or one of its lines is past its limit; the message says which."""

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def size_text(size: int) -> str:
    """Return a limit as people write it: ``256 MiB``, ``4 GiB``, ``1.5 MiB``, ``100 bytes``."""
    for shift, unit in ((30, "GiB"), (20, "MiB"), (10, "KiB")):
        if size >= 1 << shift:
            value = size / (1 << shift)
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{size} bytes"


def log_too_big(limits: LogLimits, line: int | None = None) -> OverLimit:
    """Return the problem of a log past ``max_log_bytes``."""
    return OverLimit(
        f"the log holds more than {size_text(limits.max_log_bytes)} once decompressed "
        "(the limit, --max-log-size); it was not read further",
        line,
    )


def line_too_long(limits: LogLimits, line: int) -> OverLimit:
    """Return the problem of a line past ``max_line_bytes``."""
    return OverLimit(
        f"line {line} is longer than {size_text(limits.max_line_bytes)} "
        "(the limit, --max-line-size); it was not read further",
        line,
    )


# The first byte of a non-blank line (Ballista's reader skips blank lines).
_NOT_BLANK = re.compile(rb"[^\n\r\t ]")
_OPEN_BRACE = 0x7B  # "{": every record starts so


class Counted(io.RawIOBase):
    """A stream of a log's bytes that stops once the log has yielded more than its limit."""

    def __init__(self, source: io.RawIOBase | io.BufferedIOBase, limits: LogLimits) -> None:
        self._source = source
        self._limits = limits
        self._budget = limits.max_log_bytes
        self.total = 0

    def readable(self) -> bool:
        """Say that this stream can be read."""
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        """Fill ``buffer`` from the source; raise ``OverLimit`` past the log's limit."""
        source = self._source
        if isinstance(source, io.BufferedIOBase):
            # One step of the decompressor at a time (read1): what came out before a
            # truncated or corrupt stream breaks is still read, with its line numbers.
            data = source.read1(len(memoryview(buffer)))
            n = len(data)
            memoryview(buffer).cast("B")[:n] = data
        else:
            n = source.readinto(buffer)
        if n:
            self.total += n
            if self.total > self._budget:
                raise log_too_big(self._limits)
        return int(n or 0)

    def close(self) -> None:
        """Close the source too."""
        self._source.close()
        super().close()


class Held(io.BytesIO):
    """A held log's bytes as a stream that can be peeked at, as a buffered reader can."""

    def __init__(self, held: bytes) -> None:
        super().__init__(held)
        self.held = held  # sliced by peek: getbuffer() would copy the bytes

    def peek(self, size: int = 0) -> bytes:
        """Return up to 1 MiB of the bytes ahead, without moving on."""
        pos = self.tell()
        return self.held[pos : pos + PEEK]


PEEK = 1 << 20


class Lines:
    """The non-blank lines of a stream, read within the line limit, numbered as in the file.

    The stream must have ``peek`` (a buffered reader, or ``Held``); the log's limit is kept
    by ``Counted`` below the buffer, or by the size of a held log.
    """

    def __init__(self, stream: IO[bytes], limits: LogLimits) -> None:
        self.stream = stream
        self.limits = limits
        # The number of the last line read.
        self.lineno = 0

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        """Yield ``(line number, line)`` of every non-blank line.

        Raises ``OverLimit`` at the first line past ``max_line_bytes``, having read no more
        of it than the limit, or when the stream does (the log's limit).
        """
        stream, limits = self.stream, self.limits
        peek = getattr(stream, "peek")  # noqa: B009  # IO has no peek in its type
        longest = limits.max_line_bytes
        lineno = 0
        # A held log no longer than a line may be: its lines need no bound (faster).
        held = isinstance(stream, Held) and len(stream.held) <= longest
        each = iter(stream) if held else iter(functools.partial(stream.readline, longest + 1), b"")
        try:
            for line in each:
                lineno += 1
                if line[0] == _OPEN_BRACE and len(line) <= longest:
                    yield lineno, line  # nearly every line: a record
                    continue
                if len(line) > longest:
                    raise line_too_long(limits, lineno)
                if _NOT_BLANK.search(line) is not None:
                    yield lineno, line  # not a record: the reader says what it is
                    continue
                # A blank line: skip the run of blank lines after it without a step per line.
                while line.endswith(b"\n"):
                    buffered = peek(1)
                    found = _NOT_BLANK.search(buffered)
                    end = len(buffered) if found is None else found.start()
                    cut = buffered.rfind(b"\n", 0, end) + 1  # whole blank lines only
                    if cut == 0:
                        break
                    lineno += buffered.count(b"\n", 0, cut)
                    stream.read(cut)
                    if found is not None:
                        break
        except OverLimit as exc:
            if exc.line is None:
                exc.line = lineno + 1
            raise
        finally:
            self.lineno = lineno

    def drain(self) -> None:
        """Read the rest of the stream (to check it whole); the log's limit still holds."""
        read = self.stream.read
        while read(1 << 20):
            pass
