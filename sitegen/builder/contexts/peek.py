"""A log's run as its JobEnd record tells it, read before the map step (``foresight``).

A job page shows the runs before it (``diagnose.recurring.context_keys``), so its context is
known once every run of its name is: before the map, each log to map is peeked at for what a
trend and a comparison need of it (its times, status, rows and stage figures, all in the
``JobEnd`` payloads; its TaskEnd records counted, not decoded; its digest). That skips what
makes the map step dear: decoding the TaskEnd records, the diagnosis, the pages. A peek is a
forecast: the map step's own summary has the last word, and a run it tells otherwise is
rendered again (``modes.BuildSteps.misread``).

A log is read once in a build where the peek and the map step meet in one process: the peek
passes the bytes it read and their digest on (``pass_on``), and the map step takes them
(``taken``) instead of reading and hashing the log again. See ``PASS_ON_BYTES``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import msgspec

from sitegen.builder.state.identity import log_digest
from sitegen.builder.state.schema import run_source
from sitegen.diagnose.analysis import summarize
from sitegen.diagnose.counting import counting
from sitegen.diagnose.figures import failed_attempts, job_rows, stage_figures
from sitegen.diagnose.recurring import Run
from sitegen.eventlog import dotgraph, payload, schema
from sitegen.eventlog.limits import LogLimits
from sitegen.eventlog.logfiles import LogFile
from sitegen.eventlog.rawlog import HeldLog, hold_log, reads
from sitegen.eventlog.reader import TASK_END_PREFIX, LogRead, open_log
from sitegen.eventlog.schema import TaskEnd
from sitegen.model import Classification, JobSummary

# A peeked run: as ``Run.of`` makes it from the map's summary and digest, and the summary's
# figures a later run compares with (times, task attempts, rows, stages).
Peeked = tuple[Run, JobSummary]

# The most bytes of peeked logs a process keeps for its map step (``pass_on``). Every log is
# peeked before any is mapped, so only the process that peeks keeps them (its map step, or
# workers forked after the peek, take them): an incremental build's few logs, up to this
# budget, are read and hashed once. Workers forked before the peek (a full build's) keep
# nothing: they peek thousands of logs and map them in another order and another worker, so
# what they kept would only add to the build's peak memory. 32 MiB is 4% of a full build's
# peak RSS at 1,000 jobs x 800 tasks, and holds the logs of a usual incremental build whole.
PASS_ON_BYTES = 32 << 20
# The process that keeps peeked logs: the build's own (``keep_here``). Forked workers inherit
# the value, not the pid; a Dask worker never sets it (it would keep what another maps).
_keeper: int | None = None
# The peeked logs kept, by key, listed size and modification time: their bytes and digest.
_passed: dict[tuple[str, int, int], tuple[HeldLog, str]] = {}
_passed_bytes = 0


def keep_here() -> None:
    """Let this process keep the logs it peeks at for its map step (the build's process)."""
    global _keeper
    _keeper = os.getpid()


def pass_on(log: LogFile, held: HeldLog) -> str:
    """Keep a peeked log's bytes and digest for the map step in this process, within budget.

    Returns the digest, taken only when kept ("": not kept).
    """
    global _passed_bytes
    size = _held_bytes(held)
    if os.getpid() != _keeper or _passed_bytes + size > PASS_ON_BYTES:
        return ""
    digest = log_digest(log.path, held.stored)
    _passed[log.key, log.size, log.mtime_ns] = held, digest
    _passed_bytes += size
    return digest


def taken(log: LogFile) -> tuple[HeldLog, str] | None:
    """Return the bytes and digest the peek read of ``log`` (None: read it), and let them go."""
    global _passed_bytes
    found = _passed.pop((log.key, log.size, log.mtime_ns), None)
    if found is not None:
        _passed_bytes -= _held_bytes(found[0])
    return found


def _held_bytes(held: HeldLog) -> int:
    """Return the memory a held log takes (a plain log's two fields are one object)."""
    return len(held.stored) + (len(held.plain) if held.plain is not held.stored else 0)


def let_go() -> None:
    """Forget the peeked logs kept (the map step is over: what it did not take is not needed)."""
    global _passed_bytes
    _passed.clear()
    _passed_bytes = 0


def peek(limits: LogLimits, log: LogFile) -> Peeked | None:
    """Return the run a log's JobEnd record tells, None when it cannot tell (the map will)."""
    if log.skip or log.size > limits.max_log_bytes:
        return None
    try:
        held = hold_log(log.path, log.size, limits)
        if held is not None:
            digest = pass_on(log, held)  # a running log too: the map step reads it whole
            last, tasks, failed = _last_line([held.plain], limits.max_line_bytes)
        else:
            digest = ""
            with open_log(log.path, limits) as stream:
                last, tasks, failed = _last_line(reads(stream), limits.max_line_bytes)
        if not last.startswith(b'{"ev":"JobEnd"'):
            return None
        end = schema.JOB_END_RECORD_DECODER.decode(last).data
        stages = payload.stages(end.stages)
        edges = dotgraph.parse(end.dot).stage_edges()
        config = schema.CONFIG_DECODER.decode(end.config)
    except Exception:  # a damaged archive, a bad payload, a vanished log: anything
        return None  # the map step meets it again, and says what is wrong
    read = LogRead(log.path, Classification.COMPLETED, job_end=end, config=config)
    summary = summarize(read, log.key)
    summary.tasks = tasks
    summary.stages = stage_figures(stages, failed)
    summary.input_rows, summary.output_rows = job_rows(summary.stages, edges)
    summary.counting = counting(stages, edges, summary.job_status)
    digest = digest or log_digest(log.path, None if held is None else held.stored)
    return Run.of(summary, run_source(digest, log.key)), summary


def _last_line(chunks: Iterable[bytes], max_line: int) -> tuple[bytes, int, dict[str, int]]:
    """Return the last line (no line end), the TaskEnd records, and failed attempts by stage.

    A line longer than ``max_line`` raises ``ValueError``: the reader refuses it too, and the
    line kept growing chunk by chunk would be copied again with each one (a hostile log's
    256 MiB line took the peek minutes).

    Counted by their prefix, as the reader's fast path knows them: a TaskEnd of another
    spelling is not counted, and the map step's count then tells the run otherwise. Only the
    lines holding ``"Failed"`` are decoded (failed attempts are few).
    """
    count = 0
    failing: list[TaskEnd] = []
    last = b""
    pending: list[bytes] = []  # the line not ended yet, in pieces: joined once it ends
    held = 0
    for chunk in chunks:
        cut = chunk.rfind(b"\n") + 1
        if not cut:
            pending.append(chunk)
            held += len(chunk)
            if held > max_line:
                raise ValueError("a line longer than the reader takes")
            continue
        whole = b"".join([*pending, chunk[:cut]])
        pending, held = [chunk[cut:]], len(chunk) - cut
        count += whole.startswith(TASK_END_PREFIX) + whole.count(b"\n" + TASK_END_PREFIX)
        if _FAILED in whole:
            _tasks_failing(whole, failing)
        # The last line that holds anything, cut out alone: ``rstrip`` copied the whole chunk.
        end = len(whole)
        while end and whole[end - 1] in _LINE_ENDS:
            end -= 1
        if end:
            last = whole[whole.rfind(b"\n", 0, end) + 1 : end]
    rest = b"".join(pending)
    if rest.strip():  # a last line with no line end
        count += rest.startswith(TASK_END_PREFIX)
        _tasks_failing(rest, failing)
        last = rest
    return last.rstrip(b"\r"), count, failed_attempts(failing)


# What ends a line (the reader takes \r\n too): stripped from the end of the last one.
_LINE_ENDS = b"\r\n"
# A failed attempt's status is ``{"Failed":…}``: a line without these bytes holds none. Other
# text may hold them too: each TaskEnd line found is decoded, and judged as the map step does.
_FAILED = b'"Failed"'


def _tasks_failing(lines: bytes, found: list[TaskEnd]) -> None:
    """Add the TaskEnd records of whole ``lines`` that may have failed (they say "Failed")."""
    at = lines.find(_FAILED)
    while at >= 0:
        begin = lines.rfind(b"\n", 0, at) + 1
        end = lines.find(b"\n", at)
        end = len(lines) if end < 0 else end
        if lines.startswith(TASK_END_PREFIX, begin):
            try:
                task = schema.TASK_END_RECORD_DECODER.decode(lines[begin:end]).data
            except msgspec.DecodeError:
                task = None  # the map step says what is wrong with it
            if task is not None:
                found.append(task)
        at = lines.find(_FAILED, end)
