"""Run contexts of recurring jobs: foreseen before the map, checked after it.

A job page shows the runs of its name before it (the previous run, a regression, the
comparison with the previous successful run). Before the map step, each log to map is peeked
at (``builder.contexts.peek``) and the contexts of the pages it will render are foreseen from the
peeked runs and the published ones (``foresee``): each page is rendered once, with its
context. After selection, the trends of the names this build touched are recomputed from the
state (``update_trends``); a page whose context is not the one it was rendered with is
rendered again: a run the map step told otherwise than its peek, a run selection left out
or published anew, a run removed or come in out of order (docs/code-layout.md).
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, NamedTuple

import msgspec

from sitegen.builder.state.store import State
from sitegen.diagnose import recurring
from sitegen.diagnose.recurring import ContextKey, Run, RunContext
from sitegen.finding import Finding
from sitegen.model import JobSummary
from sitegen.publish.writer import SiteWriter
from sitegen.render import trend_pages
from sitegen.render.pages import PageRenderer
from sitegen.render.trend_pages import NameRecord, decode_record, encode_record, name_record

if TYPE_CHECKING:
    from pathlib import Path

    from sitegen.builder.map.mapped import MapResults


class NameUpdate(NamedTuple):
    """What recomputing one touched name's trend found."""

    name: str
    # Each published run: its log key, its context key (None: the name's first run), and
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
        update = NameUpdate(name, [], set())
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


class Foreseen(Mapping[int, RunContext]):
    """The run context each peeked log's page is to be rendered with, by log index.

    Made a name at a time as the map step asks (``get``), from the peeked runs (each taken to
    be published) and those the state publishes, but the logs mapped again (those peeked at,
    and ``unpeeked``, by key); a baseline's figures come from its peek, or from the state's
    summary of a published run. Only the name asked for last is held: the map asks for a
    name's runs together (``State.peeked_in_name_order``).
    """

    def __init__(self, state: State, unpeeked: AbstractSet[str]) -> None:
        self.state = state
        self.unpeeked = unpeeked
        self.name: str | None = None
        self.made: dict[int, RunContext] = {}

    def __getitem__(self, n: int) -> RunContext:
        """Return the ``n``-th log's foreseen context (KeyError: none, or not peeked)."""
        if n not in self.made:
            name = self.state.peeked_name(n)
            if name and name != self.name:
                self.name, self.made = name, self._contexts(name)
        return self.made[n]

    def __iter__(self) -> Iterator[int]:
        """Yield the logs with a foreseen context (making every name's: the map asks by ``get``)."""
        for name in self.state.peeked_names():
            yield from self._contexts(name)

    def __len__(self) -> int:
        """Return how many logs have a foreseen context."""
        return sum(1 for _ in self)

    def _contexts(self, name: str) -> dict[int, RunContext]:
        """Return the foreseen contexts of the peeked runs of ``name``."""
        state = self.state
        peeked = list(state.peeked_runs(name))
        runs = [Run(*row) for row, key, _ in state.runs(name, True) if key not in self.unpeeked]
        runs += [Run(*row) for _, row, _ in peeked]
        keys = recurring.context_keys(recurring.trend(name, runs))
        figures = {row[0]: summary for _, row, summary in peeked}
        wanted = {k.baseline for k in keys.values() if k.baseline and k.baseline not in figures}
        figures.update(state.summaries(sorted(wanted)) if wanted else {})
        made: dict[int, RunContext] = {}
        for n, row, _ in peeked:
            key = keys.get(row[0])
            baseline = figures.get(key.baseline) if key and key.baseline else None
            # A baseline with no figures here (ids that collide): none foreseen, and the
            # check after the map renders the page again with the state's.
            if key is not None and (baseline is not None or not key.baseline):
                made[n] = recurring.run_context(key, baseline)
        return made


def forecast(run: Run, summary: JobSummary) -> int:
    """Return a fingerprint of what the runs after ``run`` take from it (a peek's check)."""
    # The run carries its counting too (``Run.counting``): a later run's rows excuse and
    # comparison depend on it, so a peek that misread it must not pass the check.
    told = (
        run,
        summary.tasks,
        summary.input_rows,
        summary.output_rows,
        summary.counting,
        summary.stages,
        summary.config,
        summary.config_dropped,
    )
    digest = hashlib.blake2b(msgspec.msgpack.encode(told), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1 | 1  # an int64, never 0 (``BuildSteps.forecasts``)


def stored_records(state: State, names: Iterable[str] | None = None) -> list[NameRecord]:
    """Return the stored figures of ``names`` (default: every name), most runs first."""
    return [decode_record(data) for _, data in state.name_trends(names)]


def discard_renders(
    pages: PageRenderer, staging: Path, logs: Iterable[int], results: MapResults
) -> None:
    """Remove what this build's map step wrote for ``logs``, to render them again."""
    from sitegen.builder.map.jobs import job_roots, part_dir

    for n in logs:
        done = results.pop(n)
        if done.parted:
            shutil.rmtree(part_dir(staging, n))
        elif done.job_id is not None:
            for root in job_roots(pages, done.job_id):
                shutil.rmtree(staging / root)


def regressed(records: Iterable[NameRecord]) -> dict[str, Finding]:
    """Return every regression finding, by job id."""
    return {job_id: f for r in records for job_id, f in r.regressions.items()}
