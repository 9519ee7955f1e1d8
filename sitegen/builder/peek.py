"""A log's run as its JobEnd record tells it, read before the map step (``foresight``).

A job page shows the runs before it (``diagnose.recurring.context_keys``), so its context is
known once every run of its name is: before the map, each log to map is peeked at for what a
trend and a comparison need of it (its times, status, rows and stage figures, all in the
``JobEnd`` payloads; its TaskEnd records counted, not decoded; its digest). That skips what
makes the map step dear: decoding the TaskEnd records, the diagnosis, the pages. A peek is a
forecast: the map step's own summary has the last word, and a run it tells otherwise is
rendered again (``foresight.Foresight.misread``).
"""

from __future__ import annotations

from collections.abc import Iterable

from sitegen.builder.state.identity import log_digest
from sitegen.builder.state.schema import run_source
from sitegen.diagnose.analysis import summarize
from sitegen.diagnose.counting import counting
from sitegen.diagnose.figures import job_rows, stage_figures
from sitegen.diagnose.recurring import Run
from sitegen.eventlog import dotgraph, payload, schema
from sitegen.eventlog.limits import LogLimits
from sitegen.eventlog.logfiles import LogFile
from sitegen.eventlog.rawlog import hold, reads
from sitegen.eventlog.reader import TASK_END_PREFIX, LogRead, open_log
from sitegen.model import Classification, JobSummary

# A peeked run: as ``Run.of`` makes it from the map's summary and digest, and the summary's
# figures a later run compares with (times, task attempts, rows, stages).
Peeked = tuple[Run, JobSummary]


def peek(limits: LogLimits, log: LogFile) -> Peeked | None:
    """Return the run a log's JobEnd record tells, None when it cannot tell (the map will)."""
    if log.skip or log.size > limits.max_log_bytes:
        return None
    try:
        held = hold(log.path, log.size)
        if held is not None:
            last, tasks = _last_line([held], limits.max_line_bytes)
        else:
            with open_log(log.path, limits) as stream:
                last, tasks = _last_line(reads(stream), limits.max_line_bytes)
        if not last.startswith(b'{"ev":"JobEnd"'):
            return None
        end = schema.JOB_END_RECORD_DECODER.decode(last).data
        stages = payload.stages(end.stages)
        edges = dotgraph.parse(end.dot).stage_edges()
    except Exception:  # a damaged archive, a bad payload, a vanished log: anything
        return None  # the map step meets it again, and says what is wrong
    summary = summarize(LogRead(log.path, Classification.COMPLETED, job_end=end), log.key)
    summary.tasks = tasks
    summary.stages = stage_figures(stages)
    summary.input_rows, summary.output_rows = job_rows(summary.stages, edges)
    summary.counting = counting(stages, edges, summary.job_status)
    return Run.of(summary, run_source(log_digest(log.path, held), log.key)), summary


def _last_line(chunks: Iterable[bytes], max_line: int) -> tuple[bytes, int]:
    """Return the last line of the bytes (no line end) and how many lines are TaskEnd records.

    A line longer than ``max_line`` raises ``ValueError``: the reader refuses it too, and the
    line kept growing chunk by chunk would be copied again with each one (a hostile log's
    256 MiB line took the peek minutes).

    Counted by their prefix, as the reader's fast path knows them: a TaskEnd of another
    spelling is not counted, and the map step's count then tells the run otherwise.
    """
    count = 0
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
        lines = whole.rstrip(b"\r\n")
        if lines:
            last = lines[lines.rfind(b"\n") + 1 :]
    rest = b"".join(pending)
    if rest.strip():  # a last line with no line end
        count += rest.startswith(TASK_END_PREFIX)
        last = rest
    return last.rstrip(b"\r"), count
