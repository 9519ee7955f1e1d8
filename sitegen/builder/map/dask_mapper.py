"""The map step on a Dask cluster (``--dask-scheduler``): workers read logs and write jobs.

Logs go in chunks of a few (one task each: a round trip per log cost more than its map). When
every worker can reach the staging directory (a ``LocalCluster``, a shared file system: a
probe each worker runs says so), a worker maps each log exactly as a local worker does,
writing the job's files straight into the staging directory under the claims protocol, and
returns only the outcome with its state row. Else it renders the job into a scratch
directory of its own and returns the files' bytes, which this process writes through the one
writer. Either way the site is the local build's, byte for byte. ``distributed`` is imported
only when a scheduler is given.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import tempfile
from collections import deque
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from concurrent.futures import CancelledError
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import msgspec

from sitegen.builder.map.chunks import GUIDE, guided
from sitegen.builder.map.jobs import (
    OnResult,
    Progress,
    Task,
    claim,
    died_outcome,
    first_attempt,
    forget_claim,
    job_roots,
    killed_outcome,
    part_dir,
    process_log,
    root_parents,
    task_of,
)
from sitegen.builder.state.records import LogOutcome
from sitegen.errors import ClusterError, UsageError
from sitegen.eventlog.logfiles import LogFile, LogList
from sitegen.layout import PARTS_DIR
from sitegen.publish.writer import SiteWriter

if TYPE_CHECKING:
    from sitegen.builder.map.context import MapContext
    from sitegen.builder.map.mapper import Uploads
    from sitegen.diagnose.recurring import RunContext
    from sitegen.publish.bucket import Uploader

# Tasks in flight per worker thread: enough to keep each busy while results come back.
WINDOW = 4
# The most logs in one task, and the most bytes of logs: a task costs the scheduler about 5 ms
# of CPU, so a chunk of small logs is worth 64 of them; 64 big ones would keep one worker busy
# long after the others.
CHUNK = 64
CHUNK_BYTES = 8 << 20
# The most items of one task of ``DaskMapper.each`` (peeks): its results come back whole.
EACH_CHUNK = 1024
S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")
# One client per scheduler address for the life of the process (a watcher builds often).
_clients: dict[str, Any] = {}
# The probe's marker files, in the staging dir's parts dir (never part of the site).
PROBE = "probe-"

# What a worker returns for one log: its outcome, and its job's files (path, bytes) for this
# process to write, or None when the worker wrote them itself, then whether into its part dir.
Mapped = tuple[LogOutcome, list[tuple[str, bytes]] | None, bool]
# A chunk's results travel as one MessagePack document: Dask's client unpickles results in its
# event-loop thread, and unpickling a job's outcome (its summary's nested structs) cost this
# process four times msgspec's typed decoding, and the worker 15 times the encoding.
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder(list[Mapped])
# One log of a chunk: its place in the build's list, the log, its run context.
Item = tuple[int, LogFile, "RunContext | None"]


def map_remote(log: LogFile, map_context: MapContext, context: RunContext | None) -> Mapped:
    """Map one log in a worker that cannot reach the output: its outcome and its files' bytes."""
    with tempfile.TemporaryDirectory(prefix="sitegen-map-") as scratch:
        staging = Path(scratch)
        for parent in root_parents(map_context.pages):
            os.makedirs(staging / parent, exist_ok=True)
        outcome, _ = process_log(log, staging, staging / PARTS_DIR / "0", map_context, context)
        files = []
        for root in outcome.roots:
            for directory, _, names in os.walk(staging / root):
                for name in names:
                    path = Path(directory) / name
                    files.append((path.relative_to(staging).as_posix(), path.read_bytes()))
    files.sort()
    return outcome, files, False


def _tasks(chunk: list[Item], staging: Path, map_context: MapContext) -> list[Task]:
    """Return the map step's arguments of each log of a chunk, as a local worker gets them."""
    return [task_of(n, log, staging, map_context, ctx) for n, log, ctx in chunk]


class Opaque(Generic[T]):
    """A task's argument the scheduler passes on whole.

    A list of tuples is walked item by item for futures to resolve: 0.3 ms of this process's
    CPU a log. Nothing in a chunk is a future.
    """

    __slots__ = ("value",)

    def __init__(self, value: T) -> None:
        self.value = value

    def __getstate__(self) -> T:
        """Pickle the value alone."""
        return self.value

    def __setstate__(self, value: T) -> None:
        """Unpickle the value."""
        self.value = value


def map_chunk(
    opaque: Opaque[list[Item]],
    map_context: MapContext,
    staging: str | None,
    uploader: Uploader | None = None,
) -> bytes:
    """Map a chunk of logs in a worker, in order: into ``staging`` if given, else as bytes.

    With ``uploader`` (a bucket target), a new job's objects go straight to their keys too.
    Returns the ``Mapped`` of each log, encoded (``decode_mapped``).
    """
    return _ENCODER.encode(_map_chunk(opaque.value, map_context, staging, uploader))


def decode_mapped(data: bytes) -> list[Mapped]:
    """Return the results of a chunk that ``map_chunk`` encoded."""
    return _DECODER.decode(data)


def _map_chunk(
    chunk: list[Item], map_context: MapContext, staging: str | None, uploader: Uploader | None
) -> list[Mapped]:
    """Map a chunk of logs (``map_chunk``)."""
    if staging is None:
        return [map_remote(log, map_context, context) for _, log, context in chunk]
    root = Path(staging)
    tasks = _tasks(chunk, root, map_context)
    if not first_attempt(root, f"{chunk[0][0]}+{len(chunk)}"):
        # The scheduler runs a chunk again when its worker died: undo what that one claimed.
        for task in tasks:
            forget_claim(task)
    mapped: list[Mapped] = []
    for task in tasks:
        # process_log by this module's name, not jobs._process_encoded: a test's worker preload
        # (tests/helpers/dask_poison.py) replaces it here.
        outcome, parted = process_log(*task)
        # A job in its part dir shares its id with another log's: the reduce settles which
        # is published, so it goes up through the sync.
        if uploader is not None and outcome.roots and not parted and uploader.is_new(outcome.roots):
            outcome.uploaded = uploader.upload(root, outcome.roots)
        mapped.append((outcome, None, parted))
    return mapped


def _probe_worker(staging: str, token: str) -> str | None:
    """Read the command's marker and write this worker's own (in a worker); its name, or None."""
    parts = Path(staging) / PARTS_DIR
    try:
        if (parts / f"{PROBE}{token}").read_text(encoding="ascii") != token:
            return None
        mine = parts / f"{PROBE}{token}-{os.getpid()}-{secrets.token_hex(4)}"
        mine.write_text(token, encoding="ascii")
    except OSError:
        return None
    return mine.name


def shares_output(dask: Any, staging: Path, timeout: float | None = None) -> bool:
    """Tell whether every worker reads and writes the same staging dir as this process.

    This process writes a marker there; each worker reads it back and writes its own, which
    this process reads back. A worker that sees another directory (no shared file system, a
    container without the volume) fails one of the two, and the map sends bytes instead.
    """
    token = secrets.token_hex(8)
    parts = staging / PARTS_DIR
    parts.mkdir(parents=True, exist_ok=True)
    marker = parts / f"{PROBE}{token}"
    marker.write_text(token, encoding="ascii")
    try:
        answers = dask.run(_probe_worker, str(staging), token, callback_timeout=timeout)
        names = list(answers.values())
        shared = bool(names) and all(
            name is not None
            and (parts / name).is_file()
            and (parts / name).read_text(encoding="ascii") == token
            for name in names
        )
    finally:
        for leftover in parts.glob(f"{PROBE}{token}*"):
            leftover.unlink(missing_ok=True)
    return shared


def _let_go(made: Any) -> None:
    """Close a client and stop its IO loop thread.

    A client that lost its scheduler is "closed" already, and its ``close`` then returns before
    stopping the thread its loop runs in: a long-lived ``--watch`` kept one such thread per lost
    scheduler (and a process with other threads may not fork: eventlog/localdir._may_fork).
    """
    with contextlib.suppress(Exception):
        made.close(timeout=5)
    runner = getattr(made, "_loop_runner", None)  # distributed's own; no public way to stop it
    if runner is not None:
        with contextlib.suppress(Exception):
            runner.stop()


def close_clients() -> None:
    """Let go of every client this process made."""
    for made in _clients.values():
        _let_go(made)
    _clients.clear()


def client(address: str) -> Any:
    """Return a client of the scheduler at ``address`` (one per process)."""
    found = _clients.pop(address, None)
    if found is not None:
        if found.status == "running":
            _clients[address] = found
            return found
        _let_go(found)
    try:
        from distributed import Client
    except ImportError:
        raise UsageError(
            "--dask-scheduler needs distributed: pip install 'sitegen[dask]'"
        ) from None
    try:
        made = Client(address, set_as_default=False, timeout="30s")  # type: ignore[no-untyped-call]
    except OSError as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    _clients[address] = made
    return made


class DaskMapper:
    """The map step on the Dask cluster at ``address`` (the ``Mapper`` of ``--dask-scheduler``)."""

    def __init__(self, address: str, timeout: float = 1800.0) -> None:
        self.address = address
        # The longest one chunk's result or one answer of the cluster is waited for (seconds).
        self.timeout = timeout

    def prepare(self, maps_every_log: bool) -> None:
        """Nothing to start here: the workers are the cluster's."""

    def map(
        self,
        logs: LogList,
        which: Sequence[int],
        staging: Path,
        map_context: MapContext,
        on_result: OnResult,
        progress: Progress | None = None,
        contexts: Mapping[int, RunContext] | None = None,
        uploads: Uploads | None = None,
    ) -> None:
        """Map the logs at ``which`` on the cluster, handing each outcome on in order.

        Workers that reach the staging dir put new jobs where the site goes with ``uploads``'
        uploader (a bucket target's); else the target publishes them from the staging dir.
        """
        if not which:
            return
        with _cluster_faults(self.address, self.timeout):
            self._map(logs, which, staging, map_context, on_result, progress, contexts, uploads)

    def _map(
        self,
        logs: LogList,
        which: Sequence[int],
        staging: Path,
        map_context: MapContext,
        on_result: OnResult,
        progress: Progress | None,
        contexts: Mapping[int, RunContext] | None,
        uploads: Uploads | None,
    ) -> None:
        """Map the logs at ``which`` (``map``), a cluster's fault raised as it comes."""
        dask = client(self.address)
        direct = str(staging) if shares_output(dask, staging, self.timeout) else None
        contexts = {} if contexts is None else contexts
        # The renderer goes to the workers once, not with each task: as the result of a task,
        # not scattered, so that when the workers holding it die (a log that kills every
        # worker mapping it) the scheduler makes it again; scattered data is lost for good
        # and every task needing it was cancelled.
        shared = dask.submit(_unwrap, Opaque(map_context), pure=False)
        # Workers that reach the output put new jobs where the site goes themselves.
        uploader = None
        if uploads is not None and direct is not None:
            uploader = dask.submit(_unwrap, Opaque(uploads.uploader()), pure=False)
        else:
            uploads = None
        chunks = _Chunks(
            dask,
            logs,
            contexts,
            staging,
            map_context,
            shared,
            direct,
            uploader,
            uploads,
            self.timeout,
        )
        threads = _threads(dask)
        cut = _chunks(list(which), threads, logs.sizes)
        for numbers, task in _windowed(cut, chunks.submit, threads):
            results = chunks.results(task, numbers)
            self._hand_on(results, numbers, staging, on_result, progress, uploads)

    def _hand_on(
        self,
        results: Iterator[Mapped],
        numbers: list[int],
        staging: Path,
        on_result: OnResult,
        progress: Progress | None,
        uploads: Uploads | None,
    ) -> None:
        """Hand one chunk's outcomes on, writing the jobs workers returned as bytes."""
        for n, (outcome, files, parted) in zip(numbers, results, strict=True):
            if files is not None:
                parted = write_job(staging, n, outcome, files)
            if uploads is not None and outcome.uploaded:
                uploads.note(outcome.uploaded)
            on_result(n, outcome, parted)
            if progress:
                progress.advance()

    def each(
        self, fn: Callable[[S, T], R], shared: S, items: Sequence[T], alone_below: int = 0
    ) -> Generator[R]:
        """Yield ``fn(shared, item)`` in order, on the workers (they reach the logs)."""
        if not items:
            return
        with _cluster_faults(self.address, self.timeout):
            yield from self._each(fn, shared, items)

    def _each(self, fn: Callable[[S, T], R], shared: S, items: Sequence[T]) -> Generator[R]:
        """Yield ``fn(shared, item)`` in order (``each``), a cluster's fault raised as it comes."""
        dask = client(self.address)

        def chunk_of(numbers: list[int]) -> Any:
            chunk = Opaque([items[n] for n in numbers])
            return dask.submit(_each_chunk, fn, shared, chunk, pure=False)

        threads = _threads(dask)
        for _, task in _windowed(_even_chunks(len(items), threads), chunk_of, threads):
            try:
                yield from task.result(timeout=self.timeout)
            finally:
                task.release()

    def rest(self) -> None:
        """Nothing to stop: the workers are the cluster's, and hold nothing between maps."""

    def close(self) -> None:
        """Keep the client: a watcher builds again on the same cluster."""


@contextmanager
def _cluster_faults(address: str, timeout: float) -> Iterator[None]:
    """Turn a lost scheduler, or a cluster silent past ``timeout``, into a ``ClusterError``.

    The client cancels every future when it loses its scheduler (a restart, a pre-empted
    machine), and a worker that hangs (stopped, stuck in one log) holds its chunk for ever: a
    Dask heartbeat only drops a worker whose process stops answering, after five minutes,
    and never one whose thread is stuck. Either way the build stops before it publishes, so
    the site stays as it was, and the next build maps what this one did not.
    """
    from distributed.comm.core import CommClosedError

    try:
        yield
    except TimeoutError:
        raise ClusterError(
            f"the Dask cluster at {address} returned nothing for {timeout:g} s "
            "(--dask-timeout): a worker hangs, or a chunk of logs takes longer; "
            "nothing was published"
        ) from None
    except (CancelledError, CommClosedError) as exc:
        raise ClusterError(
            f"lost the Dask scheduler at {address} mid-build ({type(exc).__name__}: "
            f"{exc}); nothing was published"
        ) from None


def _unwrap(opaque: Opaque[T]) -> T:
    """Return what ``opaque`` holds (a task whose result the workers share)."""
    return opaque.value


def _each_chunk(fn: Callable[[S, T], R], shared: S, items: Opaque[list[T]]) -> list[R]:
    """Return ``fn(shared, item)`` for each item of a chunk (in a worker)."""
    return [fn(shared, item) for item in items.value]


def _chunks(
    numbers: list[int], threads: int, weights: Sequence[int] | None = None
) -> list[list[int]]:
    """Cut ``numbers`` into chunks that shrink towards the end (``chunks.guided``).

    A chunk holds at most ``CHUNK`` logs and ``CHUNK_BYTES`` of them (``weights``: each log's
    bytes, by number); the last chunks are a log or two.
    """
    sizes = [0] * len(numbers) if weights is None else [weights[n] for n in numbers]
    cut: list[list[int]] = []
    at = 0
    for length in guided(sizes, threads, CHUNK, CHUNK_BYTES):
        cut.append(numbers[at : at + length])
        at += length
    return cut


def _even_chunks(count: int, threads: int) -> list[list[int]]:
    """Cut ``range(count)`` into ``GUIDE`` chunks a worker thread, of at most ``EACH_CHUNK``.

    For work as light and even as a peek, where a task's own cost counts most: cut as the
    map step's logs are (64 at most, then shrinking), the peeks of 1,000 small logs were
    30 tasks and took 0.25 s on 2 workers (the local pool's: 0.10 s); in 4 chunks, 0.15 s.
    """
    size = max(1, min(EACH_CHUNK, -(-count // (GUIDE * threads))))
    return [list(range(at, min(at + size, count))) for at in range(0, count, size)]


def _threads(dask: Any) -> int:
    """Return the cluster's worker threads (at least 1)."""
    return sum(dask.nthreads().values()) or 1


def _windowed(
    chunks: list[list[int]], submit: Callable[[list[int]], Any], threads: int
) -> Iterator[tuple[list[int], Any]]:
    """Yield each chunk with its task, ``WINDOW`` a worker thread in flight, in order.

    Not the local pool's window (``pool._Windowed``): a Dask task is handed on unresolved,
    since a chunk that killed its workers is retried by the caller, log by log, and only that
    chunk; when a local worker dies, every chunk in flight is lost with the pool and is redone
    there. Stopped early, a task not run is cancelled, and one running is left to the cluster.
    """
    pending: deque[tuple[list[int], Any]] = deque()
    cut = iter(chunks)
    for chunk in itertools.islice(cut, WINDOW * threads):
        pending.append((chunk, submit(chunk)))
    try:
        while pending:
            now, task = pending.popleft()
            more = next(cut, None)
            if more is not None:
                pending.append((more, submit(more)))
            yield now, task
    finally:
        for _, task in pending:  # stopped early: cancel what has not run
            task.cancel()


@dataclass
class _Chunks:
    """One map on the cluster: what each chunk's task is given, and how its results come back."""

    dask: Any
    logs: Sequence[LogFile]
    contexts: Mapping[int, RunContext]
    staging: Path
    map_context: MapContext
    # The map's context (and the uploader) as tasks' results the workers share; the staging
    # dir when the workers write into it, else None (they return bytes).
    shared: Any
    direct: str | None
    uploader: Any
    # Where the uploader's target hears of the job directories of logs whose chunk killed
    # its workers: objects a worker may have put up before it died.
    uploads: Uploads | None
    # The longest a chunk's result is waited for (seconds).
    timeout: float

    def submit(self, numbers: list[int], retries: int | None = None) -> Any:
        """Submit one chunk of logs."""
        chunk = Opaque([(n, self.logs[n], self.contexts.get(n)) for n in numbers])
        args = (map_chunk, chunk, self.shared, self.direct, self.uploader)
        if retries is None:
            return self.dask.submit(*args, pure=False)
        return self.dask.submit(*args, pure=False, retries=retries)

    def results(self, task: Any, numbers: list[int]) -> Iterator[Mapped]:
        """Return a chunk's results; a chunk that killed its workers again and again, by log.

        The scheduler runs a chunk again on another worker when its worker dies; past its limit
        it gives up (``KilledWorker``). Then each of its logs runs alone, so that only the log
        that kills its worker becomes a problem row, as with a local pool.
        """
        from distributed import KilledWorker

        try:
            return iter(decode_mapped(task.result(timeout=self.timeout)))
        except KilledWorker:
            pass
        finally:
            task.release()
        out: list[Mapped] = []
        for n in numbers:
            one = task_of(n, self.logs[n], self.staging, self.map_context, None)
            if self.uploads is not None:
                self.uploads.suspect(job_roots(self.map_context.pages, self.logs[n].name_id))
            if self.direct is not None:
                forget_claim(one)  # what the chunk's dead attempts claimed of this log
            alone = self.submit([n], retries=0)
            try:
                out.extend(decode_mapped(alone.result(timeout=self.timeout)))
            except KilledWorker:
                how = "killed on every Dask worker that ran it"
                if self.direct is not None:
                    out.append((killed_outcome(one, how)[0], None, False))
                else:
                    out.append((died_outcome(self.logs[n], how), [], False))
            finally:
                alone.release()
        return iter(out)


def write_job(staging: Path, n: int, outcome: LogOutcome, files: list[tuple[str, bytes]]) -> bool:
    """Write one mapped job's files into the staging dir; say whether into its part dir."""
    if not outcome.roots:
        return False
    claimed: list[Path] = []
    target = claim(staging, outcome.roots, part_dir(staging, n), claimed)
    existing = outcome.roots if target == staging else ()
    writer = SiteWriter(target, fresh=True, existing=existing)
    for rel, data in files:
        writer.write(rel, data)
    return target != staging
