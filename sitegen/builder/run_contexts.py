"""Run contexts of recurring jobs: which job pages need theirs, and putting it in them.

A job page shows the other runs of its name (previous and next run, a regression, the
comparison with the previous successful run). The map step renders a page before the
other runs are known; the reduce step then updates exactly the pages whose run context
differs from the one they were rendered with (its digest is in the state, as a note's
is): a new run changes its predecessor's "next run" link, and nothing else's. Only the
names whose runs this build changed are looked at, from the state's columns. A page this
build wrote gets the new section spliced in between its markers (no second reading of the
log: in a clean build every recurring run needs it); a page already published is rendered
again. The runs themselves come from the state's summaries, not from summaries held.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from sitegen.builder.state.records import LogOutcome
from sitegen.builder.state.schema import decode_summary
from sitegen.builder.state.store import State
from sitegen.diagnose import recurring
from sitegen.diagnose.diagnosis import findings_json
from sitegen.diagnose.recurring import ContextKey, RunContext
from sitegen.finding import Finding
from sitegen.publish.writer import SiteWriter
from sitegen.render import trend_pages, urls
from sitegen.render.pages import PageRenderer
from sitegen.render.trend_pages import NameRecord, decode_record, encode_record, name_record

if TYPE_CHECKING:
    from sitegen.builder.fresh import FreshLogs
    from sitegen.builder.mappers import Mapper
    from sitegen.eventlog.logfiles import LogList

BEGIN = b"<!--sitegen:runs-->"
END = b"<!--/sitegen:runs-->"


class NameUpdate(NamedTuple):
    """What recomputing one touched name's trend found."""

    # Each published run: its log key, its context key (None: the name has one run), and
    # whether its page was rendered with another context than that key's.
    runs: list[tuple[str, ContextKey | None, bool]]
    # The start times of the runs whose regression finding came, went or changed.
    moments: set[int]


def update_trends(
    state: State, names: Iterable[str], pages: PageRenderer, writer: SiteWriter
) -> Iterator[NameUpdate]:
    """Recompute the trends of ``names`` from the state's runs; record them, write their pages.

    One name at a time: a clean build retrends every name, and holding every run of every
    name (with each run's context key) was the largest part of its memory.
    """
    wanted = sorted(set(names))
    before = {r.entry.name: r.regressions for r in stored_records(state, wanted)}
    for name in wanted:
        rows = [(recurring.Run(*run), key, context) for run, key, context in state.runs(name)]
        if not rows:
            state.set_name_trend(name, 0, None)
            continue
        trend = recurring.trend(name, [r for r, _, _ in rows])
        keys = recurring.context_keys(trend)
        old = before.pop(name, {})
        update = NameUpdate([], set())
        for run, log_key, rendered in rows:
            key = keys.get(run.job_id)
            update.runs.append((log_key, key, rendered != (key.sha256 if key else "")))
            if old.get(run.job_id) != trend.regressions.get(run.job_id):
                update.moments.add(run.start_time)
        state.set_name_trend(name, len(rows), encode_record(name_record(trend)))
        shown = [r.job_id for r in trend_pages.newest_runs(trend)]
        trend_pages.write_name_page(pages, writer, trend, state.summaries(shown))
        yield update


# Baseline summaries decoded at a time. A chunk of contexts has nearly as many baselines as
# runs (each run's previous successful one): decoding a whole chunk's at once grew the main
# process by 15 MB at 100,000 jobs (4 MB at 10,000), for a moment that set its peak.
BASELINES_AT_ONCE = 100


def full_contexts(state: State, keys: Mapping[int, ContextKey]) -> dict[int, RunContext]:
    """Return the whole context of each key (the baselines' figures decoded), by log index."""
    made: dict[int, RunContext] = {}
    runs_of: dict[str, list[int]] = {}  # the runs of each baseline, by log index
    for n, key in keys.items():
        if key.baseline:
            runs_of.setdefault(key.baseline, []).append(n)
        else:
            made[n] = recurring.run_context(key, None)
    wanted = sorted(runs_of)
    for start in range(0, len(wanted), BASELINES_AT_ONCE):
        chunk = wanted[start : start + BASELINES_AT_ONCE]
        baselines = state.summaries(chunk)
        for job_id in chunk:
            for n in runs_of[job_id]:
                made[n] = recurring.run_context(keys[n], baselines[job_id])
    return {n: made[n] for n in keys}


def stored_records(state: State, names: Iterable[str] | None = None) -> list[NameRecord]:
    """Return the stored figures of ``names`` (default: every name), most runs first."""
    return [decode_record(data) for _, data in state.name_trends(names)]


def splice(page: bytes, section: bytes) -> bytes | None:
    """Return ``page`` with ``section`` between its run markers; None when it has none.

    Text from logs is escaped on the page, so the first marker is the template's own.
    """
    start = page.find(BEGIN)
    end = page.find(END, start)
    if start < 0 or end < 0:
        return None  # a page from --templates without the markers: render it again
    return page[: start + len(BEGIN)] + section + page[end:]


# Below this many pages to splice, forking workers (no pool was started for the build) costs
# more than splicing them in this process, at about 1 ms a page.
POOL_PAGES = 200

# One job page to splice in a worker: the dir its files are under, the directories they are
# in, its summary as the state stores it, and its run context (the renderer goes once).
PatchTask = tuple[str, list[str], bytes, RunContext | None]


def spliced_files(job_id: str) -> list[str]:
    """Return the files of a job ``patch_page`` may change: its page and its findings.json."""
    return [str(urls.job_page(job_id)), str(urls.findings_file(job_id))]


def patch_page(pages: PageRenderer, task: PatchTask) -> int | None:
    """Splice the run context into a written job page and rewrite its findings.json.

    Return the change of their size (None: the page has no run markers).
    """
    root, roots, encoded, context = task
    summary = decode_summary(encoded)
    rel = urls.job_page(summary.job_id)
    old = Path(root, rel).read_bytes()
    new = splice(old, pages.runs_section(summary, context))
    if new is None:
        return None
    writer = SiteWriter(Path(root), fresh=True, existing=roots)
    writer.write(rel, new)
    # findings.json lists the run's regression, as the page does.
    regression = context.regression if context else None
    findings = findings_json(summary.job_id, summary.findings, summary.what_if, regression)
    listed = Path(root, urls.findings_file(summary.job_id))
    try:
        before = listed.read_bytes()
    except FileNotFoundError:
        before = b""
    if findings != before:  # most runs have no regression: their list is as the map wrote it
        writer.write(urls.findings_file(summary.job_id), findings)
    return len(new) - len(old) + len(findings) - len(before)


def patch_pages(
    pages: PageRenderer,
    staging: Path,
    state: State,
    logs: LogList,
    written: Iterable[int],
    fresh: FreshLogs,
    contexts: Mapping[int, RunContext],
    mapper: Mapper,
) -> set[int]:
    """Splice the run context into pages this build wrote; return those that had no markers.

    The pages are rendered and written where the map step ran (``mapper.each``: this
    machine's workers, only for ``POOL_PAGES`` or more when none were started early, or the
    Dask workers that wrote them): a clean build splices every recurring run's page, which in
    this one process was a fifth of it.
    Each patched log's new context digest and bytes are recorded in the state, and
    ``fresh`` follows.
    """
    from sitegen.builder.mapstep import part_dir

    order = sorted(written)
    outcomes: list[LogOutcome] = []
    tasks: list[PatchTask] = []
    for n in order:
        outcome, encoded = state.page_inputs(logs.keys[n])
        assert encoded is not None  # a written job page is a completed job's
        root = part_dir(staging, n) if fresh[n].parted else staging
        outcomes.append(outcome)
        tasks.append((str(root), outcome.roots, encoded, contexts.get(n)))
    unpatched = set()
    # Closed however the loop ends: no worker may still be writing when this returns.
    with contextlib.closing(mapper.each(patch_page, pages, tasks, POOL_PAGES)) as changes:
        for n, outcome, change in zip(order, outcomes, changes, strict=True):
            if change is None:
                unpatched.add(n)
                continue
            context = contexts.get(n)
            outcome.context_sha256 = context.sha256 if context else ""
            outcome.bytes += change
            # Its published flag stays as selection set it (a later chunk may read this run
            # as the baseline of another).
            state.set_context(logs.keys[n], outcome)
            fresh[n] = fresh[n]._replace(bytes=outcome.bytes)
    return unpatched


def discard_renders(
    pages: PageRenderer, staging: Path, logs: Iterable[int], fresh: FreshLogs
) -> None:
    """Remove what this build's map step wrote for ``logs``, to render them again."""
    from sitegen.builder.mapstep import job_roots, part_dir

    for n in logs:
        done = fresh.pop(n)
        if done.parted:
            shutil.rmtree(part_dir(staging, n))
        elif done.job_id is not None:
            for root in job_roots(pages, done.job_id):
                shutil.rmtree(staging / root)


def regressed(records: Iterable[NameRecord]) -> dict[str, Finding]:
    """Return every regression finding, by job id."""
    return {job_id: f for r in records for job_id, f in r.regressions.items()}
