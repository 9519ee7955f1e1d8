"""Map a function over logs: in this process when few, else in a pool of forked workers."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from sitegen.builder.map.chunks import guided

if TYPE_CHECKING:
    from concurrent.futures import Executor, Future

T = TypeVar("T")
R = TypeVar("R")

# prctl option from <linux/prctl.h>: the signal a process gets when its parent dies.
PR_SET_PDEATHSIG = 1
# Below this many items, starting workers costs more than they save.
MIN_ITEMS = 8


def tie_to_parent(parent: int) -> None:
    """Make this forked worker die with the build that forked it, and not hold its lock."""
    # A kill -9 of the build alone would leave workers blocked on their pipe, holding the
    # build lock they inherited: every later build would wait for them forever.
    from sitegen.publish.buildlock import forget_inherited

    forget_inherited()
    if sys.platform == "linux":
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    # The build may have died before prctl took effect: then this worker is already orphaned.
    if os.getppid() != parent:
        os._exit(1)


def _fork_pool(workers: int) -> Executor:
    """Return a pool of ``workers`` forked processes (forked at its first task)."""
    # Imported here: a build of a few logs (the usual incremental one) needs no pool.
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    # fork: workers inherit the loaded modules instead of importing them again.
    return ProcessPoolExecutor(
        workers,
        mp_context=get_context("fork"),
        initializer=tie_to_parent,
        initargs=(os.getpid(),),
    )


class EarlyWorkers:
    """Workers forked when a build learns it maps every log, before it lists them.

    A forked worker's resident memory starts as all of its parent's: forked before a build
    lists 100,000 logs, each worker of a full build stays at about half the size.
    """

    def __init__(self, workers: int | None) -> None:
        self.workers = workers or os.cpu_count() or 1
        self.pool: Executor | None = None

    def fork(self) -> Executor | None:
        """Fork the workers now (once), while this process holds little; None for one worker."""
        if self.pool is None and self.workers > 1:
            self.pool = _fork_pool(self.workers)
            self.pool.submit(int).result()  # the first task forks every worker (fork method)
        return self.pool

    def close(self) -> None:
        """Stop the workers (a later ``fork`` forks new ones)."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None


@contextlib.contextmanager
def pool_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    workers: int | None,
    pool: Executor | None = None,
    killed: Callable[[T, str], R] | None = None,
    forget: Callable[[T], None] | None = None,
    weights: Sequence[int] | None = None,
) -> Iterator[Iterator[R]]:
    """Yield ``fn``'s results over ``items`` in order, in parallel when it pays.

    Items go to the workers in chunks that shrink towards the end (``chunks.guided``; at most
    ``CHUNK`` items, and ``CHUNK_BYTES`` by ``weights``, each item's bytes).

    ``pool``: workers started earlier (``EarlyWorkers``), used and left running. ``killed``:
    the result of an item whose process died (the kernel's OOM killer sends SIGKILL, which
    no ``except`` sees), given how it died; without it, a dead worker fails the map. When
    a worker dies, the items of every chunk in flight without a result are done again, each
    in a process of its own (the one that killed its worker dies alone); ``forget`` first
    undoes what a dead worker may have left of each.
    """
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(items) < MIN_ITEMS:
        yield map(fn, items)
        return
    if pool is not None and getattr(pool, "_broken", False):
        pool = None  # a worker of it died earlier: start afresh
    lengths = guided(weights or [0] * len(items), workers, CHUNK, CHUNK_BYTES)
    run = _Windowed(
        fn, items, list(itertools.accumulate(lengths, initial=0)), workers, killed, forget
    )
    own = None
    if pool is None:
        pool = own = _fork_pool(workers)
    results = run.results(pool, 0)
    try:
        yield results
    finally:
        # Stopped early (a full disk, say): no chunk of it may still be writing when this
        # returns, into a staging dir the build then removes.
        results.close()
        if own is not None:
            own.shutdown(cancel_futures=True)


# The most items of a chunk, and the most bytes (a round trip costs about 0.1 ms: a chunk of
# 16 small logs makes it 2 % of their map step).
CHUNK = 16
CHUNK_BYTES = 8 << 20
# Chunks in flight per worker. ``Executor.map`` submits every chunk at once: at 100,000 logs
# the work items (and their arguments, made for all) were tens of MB of the build's memory.
WINDOW = 4


class _Windowed(Generic[T, R]):
    """Results of a function over items, a window of chunks in flight in a pool of workers.

    Not the Dask mapper's window (``dask_mapper._windowed``): a dead worker breaks the whole
    pool, so the rescue needs every chunk in flight at once, then a new pool for the rest; and
    a map stopped early waits for the chunks running, which write into a staging dir the build
    is about to remove, in a pool that outlives the map.
    """

    def __init__(
        self,
        fn: Callable[[T], R],
        items: Sequence[T],
        cuts: list[int],
        workers: int,
        killed: Callable[[T, str], R] | None,
        forget: Callable[[T], None] | None = None,
    ) -> None:
        self.fn = fn
        self.items = items
        self.cuts = cuts  # each chunk's first item, then the end: chunk k is [cuts[k], cuts[k + 1])
        self.workers = workers
        self.killed = killed
        self.forget = forget

    def chunk(self, k: int) -> Sequence[T]:
        """Return the items of chunk ``k``."""
        return self.items[self.cuts[k] : self.cuts[k + 1]]

    def results(self, pool: Executor, start: int) -> Generator[R]:
        """Yield the results of the chunks from chunk ``start`` on, in order."""
        from concurrent.futures import Future
        from concurrent.futures.process import BrokenProcessPool

        fn = self.fn
        starts = iter(range(start, len(self.cuts) - 1))

        def submit(at: int) -> tuple[int, Future[list[R]]]:
            try:
                return at, pool.submit(_apply, fn, self.chunk(at))
            except BrokenProcessPool as exc:  # a worker died since the last result
                lost: Future[list[R]] = Future()
                lost.set_exception(exc)
                return at, lost

        window = WINDOW * self.workers
        pending = deque(submit(at) for at in itertools.islice(starts, window))
        try:
            while pending:
                at, future = pending.popleft()
                try:
                    results = future.result()
                except BrokenProcessPool:
                    if self.killed is None:
                        raise
                    yield from self._rescue(at, future, pending)
                    rest = next(starts, None)
                    if rest is not None:
                        yield from self._afresh(rest)
                    return
                pending.extend(submit(at) for at in itertools.islice(starts, 1))
                yield from results
        finally:
            _settle(future for _, future in pending)

    def _rescue(
        self, at: int, future: Future[list[R]], pending: deque[tuple[int, Future[list[R]]]]
    ) -> Iterator[R]:
        """Yield the results of the chunks in flight when a worker died, each item alone."""
        from concurrent.futures.process import BrokenProcessPool

        killed = self.killed
        assert killed is not None
        chunks: list[tuple[int, list[R] | None]] = []
        for start, done in [(at, future), *pending]:
            try:
                chunks.append((start, done.result()))
            except BrokenProcessPool:
                chunks.append((start, None))
        pending.clear()
        if self.forget is not None:
            for k, results in chunks:
                if results is None:
                    for item in self.chunk(k):
                        self.forget(item)
        for k, results in chunks:
            if results is None:
                results = [alone(self.fn, item, killed) for item in self.chunk(k)]
            yield from results

    def _afresh(self, start: int) -> Iterator[R]:
        """Yield the results of the chunks from chunk ``start`` on, in a new pool."""
        pool = _fork_pool(self.workers)
        try:
            yield from self.results(pool, start)
        finally:
            pool.shutdown(cancel_futures=True)


def _settle(futures: Iterable[Future[Any]]) -> None:
    """Cancel the chunks not started and wait for those running (a pool outlives a map)."""
    from concurrent.futures import wait

    running = [future for future in futures if not future.cancel()]
    wait(running)


def alone(fn: Callable[[T], R], item: T, killed: Callable[[T, str], R]) -> R:
    """Return ``fn(item)`` computed in a forked process of its own, or ``killed`` if it dies."""
    import pickle

    parent = os.getpid()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns, never runs the parent's cleanup
        code = 70
        try:
            os.close(read)
            tie_to_parent(parent)
            data = memoryview(pickle.dumps(fn(item)))
            while data:
                data = data[os.write(write, data) :]
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        got = answer.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = "an unknown signal"
        out_of_memory = " (out of memory?)" if number == signal.SIGKILL else ""
        return killed(item, f"killed by signal {number} ({name}){out_of_memory}")
    if os.waitstatus_to_exitcode(status) != 0 or not got:
        return killed(item, f"exited with status {os.waitstatus_to_exitcode(status)}")
    result: R = pickle.loads(got)
    return result


def _apply(fn: Callable[[T], R], chunk: Sequence[T]) -> list[R]:
    """Return ``fn`` of each item of a chunk (in a worker)."""
    return [fn(item) for item in chunk]
