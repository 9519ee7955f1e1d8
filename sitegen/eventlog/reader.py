"""Stream one event log line by line and classify it.

Reading stops at the first JobEnd, as Ballista's own reader does: a scheduler from before
Ballista #2405 could append a late TaskEnd after it, which no reader reads (a compressed log
is still read to its end, to see damage, but nothing after JobEnd is taken).
"""

from __future__ import annotations

import io
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import IO, Any

import msgspec

from sitegen.eventlog import compression, damage, schema
from sitegen.eventlog.limits import (
    DEFAULT_LIMITS,
    Counted,
    Held,
    Lines,
    LogLimits,
    OverLimit,
    log_too_big,
)
from sitegen.eventlog.sources import (
    LogObject,
    LogPath,
    SourceReadError,
    as_log_path,
    open_source,
    source_size,
)
from sitegen.model import Classification


@dataclass
class LogRead:
    """Everything one pass over a log yields; payloads stay raw bytes."""

    path: LogPath
    classification: Classification
    message: str = ""
    line: int | None = None
    job_start: schema.JobStart | None = None
    job_end: schema.JobEnd | None = None
    config: dict[str, str] = field(default_factory=dict)
    tasks: list[schema.TaskEnd] = field(default_factory=list)
    stage_starts: list[schema.StageStart] = field(default_factory=list)
    stage_ends: list[schema.StageEnd] = field(default_factory=list)
    skipped_lines: int = 0
    # Every one of ``tasks`` carries its launch time and metrics (``schema.MeasuredTaskEnd``):
    # the SQL tables need not read the log again (``eventlog.taskmetrics``).
    measured: bool = False
    binary_line: int | None = None
    unknown_kinds: Counter[str] = field(default_factory=Counter)
    # Whole lines that did not decode, by the kind they name ("": none): the first line
    # numbers, and how many (see ``damage``).
    damaged: dict[str, list[int]] = field(default_factory=dict)
    damaged_counts: Counter[str] = field(default_factory=Counter)

    def damage_message(self) -> str | None:
        """Say which lines did not decode (``3 of 36 TaskEnd lines unreadable: …``), or None."""
        if not self.damaged_counts:
            return None
        counts = self.damaged_counts
        totals = {
            "TaskEnd": len(self.tasks) + counts["TaskEnd"],
            "StageStart": len(self.stage_starts) + counts["StageStart"],
            "StageEnd": len(self.stage_ends) + counts["StageEnd"],
            "JobStart": (self.job_start is not None) + counts["JobStart"],
        }
        return damage.message(self.damaged, counts, totals)


TASK_END_PREFIX = b'{"ev":"TaskEnd","version":1,'
JOB_END_PREFIX = b'{"ev":"JobEnd","version":1,'
READ_BUFFER = 1 << 20


def open_log(path: LogPath, limits: LogLimits = DEFAULT_LIMITS) -> IO[bytes]:
    """Open a log for binary streaming, decompressing ``.gz`` and ``.zst`` on the fly.

    Reading past ``limits.max_log_bytes`` of plain bytes raises ``OverLimit``.
    """
    # Only regular files: a FIFO or device put in a log's place must not block the build.
    kind = compression.compression_of(path)
    if kind is None:
        raw = open_source(path)
        plain = raw.detach() if isinstance(raw, io.BufferedReader) else raw
        return io.BufferedReader(Counted(plain, limits), READ_BUFFER)  # type: ignore[arg-type]
    # Only a regular file (see filekind) is decompressed: open_compressed opens it so.
    return io.BufferedReader(Counted(compression.open_compressed(path, kind), limits), READ_BUFFER)


def refused(path: LogPath, why: str) -> LogRead:
    """Return what a log that is not read at all amounts to (see ``filekind``): unreadable."""
    return LogRead(path=path, classification=Classification.UNREADABLE, message=why)


def _is_binary(line: bytes) -> bool:
    """Tell whether an undecodable line is binary garbage rather than a cut-off record."""
    if b"\x00" in line:
        return True
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        # A record cut off mid-character only fails at its very end.
        return exc.start < len(line.rstrip(b"\r\n")) - 3
    return False


def read_log(
    path: str | os.PathLike[str] | LogObject,
    held: bytes | None = None,
    limits: LogLimits = DEFAULT_LIMITS,
    measured: bool = False,
) -> LogRead:
    """Read and classify one log; never raises for what is inside the file.

    ``held`` is the plain log's bytes when the caller already read them; ``limits`` bound
    the bytes the log and each of its lines may hold (see ``limits``). ``measured``: decode
    each TaskEnd's launch time and metrics too, where the log is held (``LogRead.measured``).
    """
    path = as_log_path(path)
    result = LogRead(path=path, classification=Classification.INCOMPLETE)
    records = lineno = 0
    tasks = result.tasks
    # A streamed log's TaskEnd records stay lean: 100 bytes more a task is 80 MB at 800,000.
    measuring = result.measured = measured and held is not None
    plain_task = schema.TASK_END_RECORD_DECODER.decode
    decode_task = schema.MEASURED_TASK_END_RECORD_DECODER.decode if measuring else plain_task
    decode_envelope = schema.ENVELOPE_DECODER.decode
    # Executor ids and statuses: a handful of values repeated in every TaskEnd. In a log too
    # big to hold (the streamed ones), sharing one string each as soon as a record is
    # decoded keeps 100 bytes a task off the peak: 100 MB at 800,000 tasks. In small logs
    # it would only cost time (a quarter of the reading).
    sharing = held is None
    shared: dict[str, str] = {}
    share = shared.setdefault
    compressed = compression.compression_of(path) is not None
    reading: Lines | None = None
    try:
        if not compressed:
            _check_size(path, held, limits)
        with open_log(path, limits) if held is None else Held(held) as stream:
            reading = Lines(stream, limits)
            for lineno, line in reading:
                # Fast path: TaskEnd is nearly every line; decode it in one pass.
                if line.startswith(TASK_END_PREFIX):
                    task: schema.TaskEnd | None
                    try:
                        task = decode_task(line).data
                    except msgspec.DecodeError:
                        # Cut off, or an unexpected shape: the general path decides. A
                        # measured one whose extras are of another shape is read as usual,
                        # and its extras read again (eventlog.taskmetrics) as any other's.
                        task = _plain_task(line) if measuring else None
                        if task is not None:
                            result.measured = measuring = False
                            decode_task = plain_task
                    if task is not None:
                        if sharing:
                            task.executor_id = share(task.executor_id, task.executor_id)
                            if task.status.__class__ is str:
                                task.status = share(task.status, task.status)
                        tasks.append(task)
                        records += 1
                        continue
                elif line.startswith(JOB_END_PREFIX):
                    # Decoded in one pass, not as an envelope and then its data again.
                    try:
                        job_end = schema.JOB_END_RECORD_DECODER.decode(line).data
                        config = _validated_config(job_end)
                    except msgspec.DecodeError:
                        pass  # the general path classifies it and says why
                    else:
                        result.line = lineno
                        if damage.duplicate_kind(line):
                            return _malformed(result, damage.DUPLICATE_EV, lineno)
                        _completed(result, job_end, config)
                        _check_rest(reading, compressed)
                        return result
                try:
                    env = decode_envelope(line)
                except msgspec.DecodeError as exc:
                    if _damaged_job_end(line):
                        return _malformed(result, f"damaged JobEnd record: {exc}", lineno)
                    _skip(result, line, lineno)
                    continue
                records += 1
                if env.ev != "JobEnd" and _damaged_job_end(line) and damage.duplicate_kind(line):
                    # {"ev":"JobEnd",…,"ev":"X"}: the last "ev" wins, and the job would look
                    # as if it were still running.
                    return _malformed(result, damage.DUPLICATE_EV, lineno)
                if _take(result, env, line, lineno):
                    if result.classification is Classification.COMPLETED and damage.duplicate_kind(
                        line
                    ):
                        return _malformed(result, damage.DUPLICATE_EV, lineno)
                    _check_rest(reading, compressed)
                    return result
    except RecursionError:
        # msgspec recurses once per nesting level: a record nested thousands of levels deep
        # exhausts the stack. No Ballista record nests that deep; the line is damage.
        return _malformed(result, "a record is nested too deeply to decode", lineno)
    except OverLimit as exc:
        return _damaged(result, exc.message, exc.line)
    except compression.DAMAGE_ERRORS as exc:
        # Checked before OSError: a bad gzip header is an OSError too, but it is damage.
        where = reading.lineno if reading is not None else lineno
        return _damaged(result, compression.damage_message(exc), where + 1)
    except SourceReadError:
        raise  # the store's failure, not the log's: the caller reads it again another time
    except OSError as exc:
        result.classification = Classification.UNREADABLE
        result.message = exc.strerror or str(exc)
        return result
    if result.binary_line is not None:
        result.classification = Classification.UNREADABLE
        result.message = "not UTF-8 text (binary data)"
        result.line = result.binary_line
    elif compressed and reading is not None and reading.lineno == 0:
        # Compressed logs are finished files: one that holds nothing is a failed compression.
        kind = compression.compression_of(path)
        result.classification = Classification.UNREADABLE
        result.message = f"the {kind} data holds nothing (an empty log)"
    elif records == 0 and result.skipped_lines > 0:
        result.classification = Classification.NOT_A_LOG
        result.message = "no event-log records in the file"
    else:
        result.message = "no JobEnd record yet (running, or its scheduler stopped)"
    return result


def _plain_task(line: bytes) -> schema.TaskEnd | None:
    """Return a TaskEnd line's record as the plain fast path reads it, None if it does not."""
    try:
        return schema.TASK_END_RECORD_DECODER.decode(line).data
    except msgspec.DecodeError:
        return None


def _check_size(path: LogPath, held: bytes | None, limits: LogLimits) -> None:
    """Refuse a plain log past the log limit before reading any of it."""
    try:
        size = len(held) if held is not None else source_size(path)
    except OSError:
        return  # opening it says why
    if size > limits.max_log_bytes:
        raise log_too_big(limits)


def _check_rest(reading: Lines, compressed: bool) -> None:
    """Decompress what follows JobEnd, so a truncated or corrupt archive cannot pass."""
    if compressed:
        reading.drain()


_JOB_END_KIND = re.compile(rb'"ev"\s*:\s*"JobEnd"')


def _damaged_job_end(line: bytes) -> bool:
    """Tell whether an undecodable line is a whole JobEnd record that got damaged."""
    # A last line without its newline is a JobEnd still being written (the log is running);
    # a whole line that names itself JobEnd but does not decode (a flipped byte, NaN, a lone
    # surrogate) would otherwise leave the job silently unpublished, as if still running.
    return line.endswith(b"\n") and b"JobEnd" in line and _JOB_END_KIND.search(line) is not None


def _malformed(result: LogRead, message: str, line: int) -> LogRead:
    """Classify a log with a damaged record that decides it: nothing from it is served."""
    _damaged(result, message, line)
    result.classification = Classification.MALFORMED
    return result


def _damaged(result: LogRead, message: str, line: int | None) -> LogRead:
    """Classify a log whose compressed stream broke: nothing from it is served."""
    result.classification = Classification.UNREADABLE
    result.message = message
    result.line = line
    result.job_end = None
    result.config = {}
    return result


def _skip(result: LogRead, line: bytes, lineno: int, kind: str | None = None) -> None:
    """Count an unreadable line, remembering the first one that is binary garbage.

    A whole line is damage, counted by the kind it names (``kind``, else read from it);
    a last line without its newline is a record still being written.
    """
    result.skipped_lines += 1
    if result.binary_line is None and _is_binary(line):
        result.binary_line = lineno
    if line.endswith(b"\n"):
        if kind is None:
            kind = damage.kind_of(line)
        result.damaged_counts[kind] += 1
        kept = result.damaged.setdefault(kind, [])
        if len(kept) < damage.LINES_KEPT:
            kept.append(lineno)


_PROGRESS: dict[str, tuple[msgspec.json.Decoder[Any], str]] = {
    "TaskEnd": (schema.TASK_END_DECODER, "tasks"),
    "StageStart": (schema.STAGE_START_DECODER, "stage_starts"),
    "StageEnd": (schema.STAGE_END_DECODER, "stage_ends"),
}


def _take(result: LogRead, env: schema.Envelope, line: bytes, lineno: int) -> bool:
    """Fold one record into the result; return True once the log is decided."""
    kind = env.ev
    progress = _PROGRESS.get(kind)
    if progress is not None:
        decoder, attr = progress
        try:
            getattr(result, attr).append(decoder.decode(env.data))
        except msgspec.DecodeError:
            _skip(result, line, lineno, kind)
        else:
            if kind == "TaskEnd":
                result.measured = False  # a record of another layout: its extras read again
    elif kind == "JobEnd":
        return _take_job_end(result, env, lineno)
    elif kind == "JobStart":
        try:
            result.job_start = schema.JOB_START_DECODER.decode(env.data)
        except msgspec.DecodeError:
            _skip(result, line, lineno, kind)
    else:
        # Forward compatibility: kinds from later schedulers are skipped, never fatal.
        result.unknown_kinds[kind] += 1
    return False


def _take_job_end(result: LogRead, env: schema.Envelope, lineno: int) -> bool:
    """Decode the terminal record, or classify why it cannot be served."""
    result.line = lineno
    if env.version > schema.SCHEMA_VERSION:
        result.classification = Classification.NEWER_VERSION
        result.message = (
            f"JobEnd written with schema version {env.version} by a newer Ballista "
            f"(this sitegen reads up to {schema.SCHEMA_VERSION}); upgrade sitegen"
        )
        return True
    try:
        job_end = schema.JOB_END_DECODER.decode(env.data)
        config = _validated_config(job_end)
    except msgspec.DecodeError as exc:
        result.classification = Classification.MALFORMED
        result.message = f"malformed JobEnd: {exc}"
        return True
    _completed(result, job_end, config)
    return True


def _validated_config(job_end: schema.JobEnd) -> dict[str, str]:
    """Return a decoded JobEnd's config; raise DecodeError unless its payloads are usable."""
    config = schema.CONFIG_DECODER.decode(job_end.config)
    for name, raw in (("job", job_end.job), ("stages", job_end.stages)):
        if not bytes(raw).lstrip().startswith(b"{"):
            raise msgspec.ValidationError(f"Expected `object` for `$.{name}`")
    return config


def _completed(result: LogRead, job_end: schema.JobEnd, config: dict[str, str]) -> None:
    """Record a valid JobEnd: the log is completed."""
    result.job_end = job_end
    result.config = config
    result.classification = Classification.COMPLETED
    result.message = ""
