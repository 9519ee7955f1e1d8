"""``sitegen build --watch``: build once, then publish each change of the log dirs as it comes.

The watcher waits for file events in the log dirs (inotify, through ``watchfiles``; or polling
with ``--poll``, for NFS and other file systems that raise no events here), groups a burst of
them into one publish, and runs an incremental build for it: the build state on disk is what
it knows between publishes, and each build takes the build lock only while it runs, so a
cron ``sitegen build`` on the same output takes its turn. Growing ``.running`` logs refresh
the site at most every ``running_interval`` seconds, and on that timer running logs are judged
again against the clock even without an event. A log dir that vanishes is waited for; a
failed publish is reported once and retried every ``RETRY_SECONDS`` and on each change
until one goes through (a full disk frees no event). Events lost to an inotify queue that
overflowed are heard by a descriptor of the watcher's own (builder/overflow.py), and the
dirs are listed at once. A prefix in object storage raises no events: it is listed every
``--poll`` seconds (``OBJECT_POLL`` without it), and an object new, gone, or of another size
or ETag is a change.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

from sitegen.builder.options import BuildOptions
from sitegen.builder.overflow import OverflowAlarm, open_alarm
from sitegen.builder.plan.events import RELIST_SECONDS, Hint, KeptLogs
from sitegen.builder.report import BuildReport
from sitegen.errors import SitegenError, UsageError

if TYPE_CHECKING:
    from watchfiles import Change
    from watchfiles._rust_notify import RustNotify

    from sitegen.eventlog.sources import LogSource

# A change is published once no other came for STEP_MS, or after DEBOUNCE_MS of a burst.
STEP_MS = 50
DEBOUNCE_MS = 1000
# How often the loop wakes without an event: the running timer, SIGHUP, a dir come back.
TICK_MS = 500
RUNNING_INTERVAL = 10.0
# How often a failed publish is tried again without a change: space freed on a full disk, a
# template fixed, raise no event in the log dirs.
RETRY_SECONDS = 10.0
# How often a prefix in object storage is listed when --poll does not say (a LIST request
# per 1,000 objects each time).
OBJECT_POLL = 10.0
# The publishes whose build is handed the paths the events named: a dir come back, new
# settings or the first build list the dirs.
HINTED = frozenset({"changed", "running logs"})


@dataclass
class Publish:
    """One publish of the watcher: why, how many files changed, what the build did."""

    number: int
    reason: str
    changes: int
    seconds: float
    report: BuildReport | None = None
    error: str | None = None
    # A failure that repeats the one said last (the same error, no publish went through
    # between): the watcher says each such episode once.
    repeated: bool = False


def watched_paths(options: BuildOptions, extra: Iterable[Path] = ()) -> list[Path]:
    """Return what a build depends on: every directory option but the output, and ``extra``.

    Of the log dirs, the directories whose file events tell of them (a prefix in object
    storage raises none: it is polled).
    """
    paths = list(extra)
    for f in fields(options):
        value = getattr(options, f.name)
        items = value if isinstance(value, tuple) else (value,)
        if f.name == "log_dirs":
            items = tuple(p for d in options.log_dirs for p in d.event_dirs())
        for item in items:
            if isinstance(item, Path) and item != options.output and item not in paths:
                paths.append(item)
    return paths


def _identity(paths: list[Path]) -> list[tuple[int, int] | None]:
    """Return each path's (device, inode), None where it is gone: a dir replaced is seen."""
    found: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            found.append(None)
            continue
        found.append((st.st_dev, st.st_ino))
    return found


def _is_growth(change: tuple[Change, str]) -> bool:
    """Tell whether a file event is a running job's log being written (or started)."""
    import watchfiles  # imported by the watcher only

    kind, path = change
    grows = (watchfiles.Change.added, watchfiles.Change.modified)
    return kind in grows and path.endswith(".eventlog.running")


class Watcher:
    """Publish the site once, then on every change of what it is built from, until stopped.

    ``build`` publishes with the given options and returns the report; ``on_publish`` hears of
    each publish (and of each failure); ``reload`` returns options read afresh (SIGHUP);
    ``retry`` is how long after a failed publish it tries again without a change (None: not).
    """

    def __init__(
        self,
        options: BuildOptions,
        build: Callable[[BuildOptions, Hint], BuildReport],
        on_publish: Callable[[Publish], None],
        poll: float | None = None,
        running_interval: float = RUNNING_INTERVAL,
        reload: Callable[[], BuildOptions] | None = None,
        extra_paths: Iterable[Path] = (),
        retry: float | None = RETRY_SECONDS,
    ) -> None:
        self.options = options
        self.build = build
        self.on_publish = on_publish
        self.poll = poll
        self.running_interval = running_interval
        self.reload = reload
        self.extra_paths = list(extra_paths)
        self.retry = retry
        self.stop = threading.Event()
        self.reload_asked = threading.Event()
        self.publishes = 0
        self._paths: list[Path] = []
        self._seen: list[tuple[int, int] | None] = []
        self._notify: RustNotify | None = None
        self._alarm: OverflowAlarm | None = None
        # The error of the failures since the last publish that went through (None: none).
        self._failing: str | None = None
        # Each polled log dir's logs as last listed (name -> size and identity time).
        self._objects: dict[LogSource, dict[str, tuple[int, int]]] = {}
        self._listed_at = 0.0
        # Whether the last publish left running logs to judge again on the timer.
        self.running = False
        # Whether a build is running now (a stop signal then ends it: see commands/watch.py).
        self.busy = False
        # Every path the events named since the last build, handed to it (builder/plan/events.py)
        # once a build has listed the dirs and none failed since; and when one last listed.
        self._heard: set[str] = set()
        self._hint_ok = False
        self._listed_at_build = 0.0
        # The logs the last build ended with: the next one's listing diff starts from them.
        self._kept = KeptLogs()

    def publish(self, reason: str, changes: int = 0) -> Publish:
        """Run one build and tell ``on_publish``; a failure is reported, not raised."""
        began = time.perf_counter()
        self.publishes += 1
        done = Publish(self.publishes, reason, changes, 0.0)
        self.busy = True
        heard, self._heard = frozenset(self._heard), set()
        # Listed again when the events may not tell all: see builder/plan/events.py.
        fresh = time.monotonic() - self._listed_at_build < RELIST_SECONDS
        paths = heard if self._hint_ok and fresh and reason in HINTED else None
        self._hint_ok = False  # until this build is known to have gone through
        try:
            done.report = self.build(self.options, Hint(paths, self._kept))
        except SitegenError as exc:
            done.error = str(exc)
        except Exception:  # a broken template or a bug: say so, and go on watching
            done.error = traceback.format_exc(limit=3)
        finally:
            self.busy = False
        done.repeated = done.error is not None and done.error == self._failing
        self._failing = done.error
        if done.report is not None:
            self._hint_ok = True
            if not done.report.listed_from_events:
                self._listed_at_build = time.monotonic()
        done.seconds = time.perf_counter() - began
        if done.report is not None:
            # Runs still running (not abandoned, not ended unrecorded) are judged again on
            # the timer.
            self.running = any(r.abandoned is None and r.ended is None for r in done.report.running)
        self.on_publish(done)
        return done

    def run(self) -> None:
        """Publish once, then each change, until ``stop`` is set."""
        self.begin()
        self.publish("first build")
        self.loop()

    def begin(self) -> None:
        """Start watching; call before the first build, so a log written meanwhile is seen."""
        self._paths, self._seen, self._notify = self._watch()
        if self._notify is not None and self.poll is None:
            there = [p for p, ident in zip(self._paths, self._seen, strict=True) if ident]
            self._alarm = open_alarm(there)
        self._poll_objects()

    def loop(self) -> None:
        """Publish each change until ``stop`` is set (after ``begin`` and a first build)."""
        last_timer = time.monotonic()
        pending_growth = 0
        while not self.stop.is_set():
            for changes in self._events(self._notify):
                self._heard.update(path for _, path in changes)
                if self.reload_asked.is_set():
                    self.reload_asked.clear()
                    if self._reload():
                        self._rewatch()
                        break  # watch the new options' paths
                if _identity(self._paths) != self._seen:
                    # A watched dir vanished, came back or was replaced: watch afresh, and
                    # publish what it holds now (its own events are part of that publish).
                    self._rewatch()
                    self.publish("log dir changed", len(changes) + pending_growth)
                    pending_growth, last_timer = 0, time.monotonic()
                    break
                now = time.monotonic()
                if self._reads_objects() and now - self._listed_at >= (self.poll or OBJECT_POLL):
                    changes = changes | self._poll_objects()
                urgent = [c for c in changes if not _is_growth(c)]
                pending_growth += len(changes) - len(urgent)
                now = time.monotonic()
                if self._alarm is not None and self._alarm.overflowed():
                    # The kernel dropped events: names came or went unheard. List the dirs.
                    self.publish("events lost", len(urgent) + pending_growth)
                    pending_growth, last_timer = 0, time.monotonic()
                elif urgent:
                    self.publish("changed", len(urgent) + pending_growth)
                    pending_growth, last_timer = 0, time.monotonic()
                elif self._retry_due(now - last_timer):
                    self.publish("retry", pending_growth)
                    pending_growth, last_timer = 0, time.monotonic()
                elif now - last_timer >= self.running_interval:
                    if pending_growth or self.running:
                        self.publish("running logs", pending_growth)
                    pending_growth, last_timer = 0, time.monotonic()
        self._close()

    def _retry_due(self, waited: float) -> bool:
        """Tell whether the last publish failed and it is time to try again."""
        return self._failing is not None and self.retry is not None and waited >= self.retry

    def _close(self) -> None:
        """Stop watching: close the watch and the overflow alarm."""
        if self._notify is not None:
            self._notify.close()
        if self._alarm is not None:
            self._alarm.close()
            self._alarm = None

    def _reads_objects(self) -> bool:
        """Tell whether any log dir raises no file events (a prefix in object storage)."""
        return any(self._polled())

    def _polled(self) -> Iterator[LogSource]:
        """Yield the log dirs that raise no file events: the watcher lists them itself."""
        return (d for d in self.options.log_dirs if not d.event_dirs())

    def _poll_objects(self) -> set[tuple[Change, str]]:
        """List each polled log dir; return what changed since the last listing."""
        from watchfiles import Change

        self._listed_at = time.monotonic()
        changes: set[tuple[Change, str]] = set()
        for log_dir in self._polled():
            try:
                now = log_dir.snapshot()  # a listing of its own: the build lists its own
            except SitegenError:
                continue  # unreachable now: the next poll (or the build) says why
            before = self._objects.get(log_dir)
            self._objects[log_dir] = now
            if before is None:
                continue
            for name in now.keys() | before.keys():
                if now.get(name) != before.get(name):
                    kind = (
                        Change.added
                        if name not in before
                        else Change.deleted
                        if name not in now
                        else Change.modified
                    )
                    changes.add((kind, str(log_dir / name)))
        return changes

    def _rewatch(self) -> None:
        """Watch the paths there are now, instead of those watched so far."""
        self._close()
        self.begin()

    def _watch(self) -> tuple[list[Path], list[tuple[int, int] | None], RustNotify | None]:
        """Start watching the paths there are now; return them, their identity, the watch."""
        from watchfiles._rust_notify import RustNotify

        paths = watched_paths(self.options, self.extra_paths)
        seen = _identity(paths)
        there = [str(p) for p, ident in zip(paths, seen, strict=True) if ident is not None]
        if not there:
            return paths, seen, None
        try:
            notify = RustNotify(
                there,
                False,  # debug
                self.poll is not None,  # force polling
                int((self.poll or 0.3) * 1000),
                True,  # recursive
                True,  # ignore permission denied
            )
        except (FileNotFoundError, OSError):
            # A dir went away between the look and the watch: the loop looks again.
            return paths, [None] * len(paths), None
        return paths, seen, notify

    def _events(self, notify: RustNotify | None) -> Iterator[set[tuple[Change, str]]]:
        """Yield each group of file events, and an empty group every tick without any."""
        from watchfiles import Change

        while not self.stop.is_set():
            if notify is None:
                # Nothing to watch (every dir gone): look again each tick.
                self.stop.wait(TICK_MS / 1000)
                yield set()
                continue
            raw = notify.watch(DEBOUNCE_MS, STEP_MS, TICK_MS, self.stop)
            if raw == "stop":
                return
            if isinstance(raw, str):  # "timeout", or "signal" (a handler set ``stop``)
                yield set()
            else:
                yield {(Change(kind), path) for kind, path in raw}

    def _reload(self) -> bool:
        """Read the settings again (SIGHUP); keep the old ones on any error. True if taken."""
        if self.reload is None:
            return False
        began = time.perf_counter()
        try:
            options = self.reload()
            if options.output.resolve() != self.options.output.resolve() or [
                d.resolve() for d in options.log_dirs
            ] != [d.resolve() for d in self.options.log_dirs]:
                raise UsageError(
                    "the output or the log dirs changed: restart the watcher to use them; "
                    "the old settings stay"
                )
        except SitegenError as exc:
            self.publishes += 1
            self.on_publish(
                Publish(self.publishes, "settings", 0, time.perf_counter() - began, error=str(exc))
            )
            return False
        self.options = options
        self.publish("settings reloaded")
        return True
