"""Before a build maps anything: what changed since the last one, or that nothing did.

Compares the logs' identities (or, trusting finished logs, the dirs' listings) and the notes
with the state, and reports a build that has nothing to do from what the state kept.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import msgspec

from sitegen.builder.idcollisions import published_collisions
from sitegen.builder.map.mapper import LocalMapper, Mapper
from sitegen.builder.options import BuildOptions, log_limits
from sitegen.builder.plan.listing import Listed, trusted_logs
from sitegen.builder.plan.renaming import rejudged, renames, renaming_dirs
from sitegen.builder.report import BuildReport
from sitegen.builder.select.selection import Selection, choose
from sitegen.builder.state.identity import (
    changed_logs,
    identity_digest,
    listing_digest,
    log_digest,
    settled,
)
from sitegen.builder.state.records import Chosen, Known
from sitegen.builder.state.store import State
from sitegen.errors import UsageError
from sitegen.eventlog.discover import (
    check_log_dir,
    discover_all,
    discover_keys,
    key_prefixes,
    list_dirs,
)
from sitegen.eventlog.logfiles import LogFile, LogList
from sitegen.eventlog.notes import NoteIndex
from sitegen.eventlog.sources import names_trusted
from sitegen.model import Classification, Problem, RunningJob


class LeanerSite(Exception):
    """Raised when the site should go without raw logs: more jobs would fit in its size."""


def check_paths(options: BuildOptions) -> None:
    """Refuse option combinations that could lose logs or a published site."""
    out = options.output.resolve()
    for log_dir in options.log_dirs:
        check_log_dir(log_dir)
        if log_dir.holds(out):
            message = "output dir must not be the event-log dir or inside it"
            raise UsageError(message, options.output)
        if log_dir.within(out):
            # Publishing swaps the output away and deletes the old one: logs inside would go too.
            raise UsageError("event-log dir must not be inside the output dir", options.output)


def build_timestamp() -> float:
    """Return the build time, honouring SOURCE_DATE_EPOCH for reproducible sites."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    return float(epoch) if epoch else time.time()


def figures(chosen: Selection, run: BuildRun) -> Chosen:
    """Return what the report needs of a selection, as the state keeps it for the next build."""
    return Chosen(
        selection_options(run.options),
        chosen.losers,
        chosen.published,
        chosen.retention_dropped,
        chosen.size_dropped,
        # Logs left unread: no digest the next build could find equal, so it plans (and
        # reads them) rather than finishing as a no-op.
        "" if run.unread else run.identities,
        "" if run.unread else run.listing,
        None if run.unread else settled(run.dir_stamps, run.stamped_ns),
    )


def selection_options(options: BuildOptions) -> list[int | None]:
    """Return the options the selection depends on besides the logs (age aside)."""
    return [options.max_jobs, options.max_site_size]


@dataclass
class BuildRun:
    """One build's inputs, and what it has found out so far."""

    options: BuildOptions
    stamp: float
    notes: NoteIndex
    fingerprint: str
    started: float
    state: State | None = None
    # What the state knew of the logs this build maps, removes, or (un)publishes.
    known: dict[str, Known] = field(default_factory=dict)
    # The logs to map (index into ``logs``): new, changed, or a published job's note changed.
    todo: Sequence[int] = ()
    # The logs the state holds that are gone, and those only touched (same bytes, new time).
    gone: list[str] = field(default_factory=list)
    moved: list[tuple[str, int]] = field(default_factory=list)
    # Where the map step runs (its workers forked before the listing when it maps every log).
    mapper: Mapper = field(default_factory=lambda: LocalMapper(1))
    # The log dirs' stamps (identity.dir_stamps), taken before they are listed, and when.
    dir_stamps: list[list[int]] | None = None
    stamped_ns: int = 0
    # The dirs (key prefixes) that name logs the Ballista #2405 way, and the finished logs
    # found renamed from ``.running`` since the last build (builder/plan/renaming.py).
    renaming: frozenset[str] = frozenset()
    renamed: list[str] = field(default_factory=list)
    # Whether ``listings`` came from a watcher's file events (builder/plan/events.py), and the
    # logs that listing diff found (builder/plan/listing.py): the plan then lists nothing.
    listed_from_events: bool = False
    listed: Listed | None = None
    # The logs the map step could not fetch (key: why): not in the state, read next time.
    unread: dict[str, str] = field(default_factory=dict)

    @functools.cached_property
    def trusting(self) -> bool:
        """Tell whether this build learns what changed from the names listed (decided once).

        Every log dir's names are trusted (``LogSource.trust_names``): a finished log's
        numbers are the state's, and a name listed again is that log.
        """
        return names_trusted(self.options.log_dirs)

    @functools.cached_property
    def listings(self) -> list[list[str]]:
        """Return each log dir's names as listed (discover.list_dirs), listed when first asked.

        A trusted no-op whose dirs have the stamps of the last build's listing lists nothing.
        """
        return list_dirs(self.options.log_dirs)

    @functools.cached_property
    def logs(self) -> LogList:
        """Return every log, stat-ed, in order (made when first needed: see quick_no_op).

        A trusting plan sets it from the state's numbers instead (builder/plan/listing.py).
        """
        options = self.options
        return discover_all(options.log_dirs, options.follow_links, self.listings)

    @property
    def stat_ed(self) -> bool:
        """Tell whether ``logs`` was made (stat-ed, or from the state's numbers when trusted).

        A trusted no-op makes it not.
        """
        return "logs" in vars(self)  # what functools.cached_property (or plan) fills

    @functools.cached_property
    def listing(self) -> str:
        """Return the digest of the log dirs' listings (listing_digest), made once."""
        return listing_digest(self.options.log_dirs, self.listings)

    @functools.cached_property
    def identities(self) -> str:
        """Return the digest of every log's identity (identity_digest), made once."""
        return identity_digest(self.logs)

    @functools.cached_property
    def stale(self) -> set[str]:
        """Return the keys of the running logs the clock now judges otherwise (once).

        A ``.running`` log past ``--stale-after`` is an abandoned run, any other a job that
        ended unrecorded (eventlog.classify).
        """
        assert self.state is not None
        limits = log_limits(self.options, self.stamp)
        return {
            key
            for key, mtime_ns in self.state.running_logs().items()
            if limits.stale(mtime_ns) is not None
        }


def quick_no_op(run: BuildRun) -> BuildReport | None:
    """Finish a build whose logs, notes and selection options are as last built; else None.

    Compares identities and the notes alone, and reports from what the state kept of the last
    selection: at 100,000 logs, loading every log's row and selecting again cost seconds.
    """
    state = run.state
    assert state is not None
    stored = state.chosen()
    options = run.options
    # Retention by age moves on with the clock: the full check decides.
    if stored is None or options.max_age is not None:
        return None
    if stored.options != selection_options(options):
        return None
    trusting = run.trusting
    same_listing = trusting and stored.listing == run.listing
    if same_listing:
        # The same names as last time: only the logs not finished then can have changed.
        if not _unfinished_unchanged(run, state):
            return None
    elif trusting:
        # Names came or went: the plan learns which from the listing, and stats those alone.
        return None
    # One digest of every log's identity, against the one the last selection was made from:
    # reading 100,000 rows back from the state to compare them cost more than the stat calls.
    elif stored.identities != run.identities:
        return None
    if noted_keys(state, run.notes) or run.stale:
        return None
    stamps = settled(run.dir_stamps, run.stamped_ns)
    if same_listing and stamps is not None and stamps != stored.stamps:
        # The dirs have settled since that listing: the next build need not list them.
        state.amend_chosen(msgspec.structs.replace(stored, stamps=stamps))
    return make_report(run, state, stored, rebuilt=0, up_to_date=True)


def _unfinished_unchanged(run: BuildRun, state: State) -> bool:
    """Tell whether every log the state holds as not completed is as it was (by its stat)."""
    had = state.unfinished()
    if not had:
        return True
    logs = discover_keys(run.options.log_dirs, had.keys(), run.options.follow_links)
    return logs is not None and all((log.size, log.mtime_ns) == had[log.key] for log in logs)


def _unchanged(log: LogFile, known: Known | None) -> bool:
    """Tell whether the log is unchanged since the state recorded it."""
    if known is None or known.size != log.size:
        return False
    if known.mtime_ns == log.mtime_ns:
        return True
    # Touched (copied, restored) but maybe not changed: the content hash decides.
    return known.sha256 == log_digest(log.path)


def noted_keys(state: State, notes: NoteIndex) -> set[str]:
    """Return the keys of the published jobs whose operator note was added, edited or removed."""
    had = state.note_digests()
    if not had and not notes.paths:
        return set()  # no note now or then: none can have changed
    ids = had.keys() | state.published_ids(sorted(notes.paths))
    changed = [job_id for job_id in ids if notes.digest(job_id) != had.get(job_id, "")]
    return state.published_keys(changed) if changed else set()


def plan(run: BuildRun) -> None:
    """Find the logs this build maps, the ones gone, and the ones only touched.

    Compares every log's identity with the state's (``changed_logs``), and reads
    the rows of the logs that differ alone: at 100,000 logs, a row apiece cost 1 s.
    """
    state = run.state
    labels = key_prefixes(run.options.log_dirs)
    if state is None:
        run.todo = range(len(run.logs))  # every log: not a list of 100,000 numbers
        run.renaming = renaming_dirs(run.logs, labels)
        return
    listed = run.listed
    if listed is None and run.trusting and not run.stat_ed:
        options = run.options
        listed = trusted_logs(options.log_dirs, run.listings, state, options.follow_links)
    if listed is not None:
        run.logs = listed.logs
        differ, gone = listed.differ, listed.gone
    else:
        differ, gone = changed_logs(state.identities(), run.logs)
    run.renamed = renames(gone, differ)
    run.renaming = renaming_dirs(run.logs, labels, state, run.renamed, gone)
    # Logs to read again though unchanged: a note changed, the clock abandoned a run, or a
    # dir's naming (or the clock) says a job ended unrecorded.
    limits = log_limits(run.options, run.stamp)
    noted = noted_keys(state, run.notes) | run.stale | rejudged(state, run.renaming, limits)
    todo: list[int] = []
    run.gone = sorted(gone)
    run.known = state.known(differ | noted | set(run.gone))
    for n in _positions(run.logs, differ | noted):
        key = run.logs.keys[n]
        log = run.logs[n]
        known = run.known.get(key)
        if key in noted or known is None or not _unchanged(log, known):
            todo.append(n)
        else:
            run.moved.append((key, log.mtime_ns))
    run.todo = todo


def _positions(logs: LogList, keys: set[str]) -> list[int]:
    """Return where the logs of ``keys`` are (those listed), in order."""
    found = []
    for key in keys:
        try:
            found.append(logs.position(key))
        except KeyError:  # gone, or a noted log no dir lists
            continue
    return sorted(found)


def no_op(run: BuildRun) -> BuildReport | None:
    """Finish a build that has nothing to publish; None when there is something."""
    state = run.state
    assert state is not None
    if run.todo or run.gone:
        return None
    chosen = choose(state, run.options, run.stamp)
    # Unchanged logs, but retention by age may have moved on since the last build.
    if chosen.flips:
        return None
    # Only modification times moved (same bytes), or options that chose the same jobs:
    # record them (the next build can then tell nothing changed quickly), publish nothing.
    chose = figures(chosen, run)
    state.begin()
    state.touch(run.moved)
    state.set_chosen(chose)
    state.record_site_bytes(run.options.output)
    state.commit()
    return make_report(run, state, chose, rebuilt=0, up_to_date=True)


def in_log_order(run: BuildRun, keys: Collection[str]) -> list[str]:
    """Return the keys of the logs among ``keys`` in the order the logs are listed."""
    if not keys:
        return []
    if not run.stat_ed:  # a trusted no-op: keys sort as their logs are listed
        labels = {label: n for n, label in enumerate(key_prefixes(run.options.log_dirs))}
        # In one log dir a key is the file name; in several, its dir's label first.
        return sorted(keys, key=lambda key: (labels.get(key[: key.find("/") + 1], 0), key))
    there = []
    for key in keys:
        try:
            there.append((run.logs.position(key), key))
        except KeyError:  # a log the state holds that is gone
            continue
    return [key for _, key in sorted(there)]


def make_report(
    run: BuildRun, state: State, chosen: Chosen, rebuilt: int, up_to_date: bool = False
) -> BuildReport:
    """Assemble the report from the state and the selection: problems, running jobs, counts."""
    flagged = {o.file: o for o in state.flagged()}
    problems: list[Problem] = []
    running: list[RunningJob] = []
    # In log order; only the logs with something to say are looked at.
    named = flagged.keys() | chosen.losers.keys()
    for key in in_log_order(run, named):
        outcome = flagged.get(key)
        if outcome is not None:
            problems.extend(outcome.problems)
            if outcome.running is not None:
                running.append(outcome.running)
        loser = chosen.losers.get(key)
        if loser is not None:
            problems.append(loser)
    problems += published_collisions(state, changed=not up_to_date)
    counts = state.classifications()
    report = BuildReport(
        output=run.options.output,
        # A no-op that trusted finished logs did not stat them: the state holds every log.
        logs=len(run.logs) if run.stat_ed else sum(counts.values()),
        published=chosen.published,
        running=running,
        problems=problems,
        files_written=0,
        bytes_written=0,
        seconds=time.perf_counter() - run.started,
        rebuilt=rebuilt,
        up_to_date=up_to_date,
        classifications={str(k): counts.get(str(k), 0) for k in Classification},
        retention_dropped=chosen.retention_dropped,
        size_dropped=chosen.size_dropped,
        unread=dict(run.unread),
    )
    if up_to_date:
        report.site_bytes = state.site_bytes_as_built(run.options.output)
    return report
