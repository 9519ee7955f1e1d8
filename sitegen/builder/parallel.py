"""Map a function over logs: in this process when few, else in a pool of forked workers."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Executor

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


@contextlib.contextmanager
def early_pool(workers: int | None) -> Iterator[Executor | None]:
    """Fork the workers now, while this process holds little; None for one worker.

    A forked worker's resident memory starts as all of its parent's: forked before a
    build lists 100,000 logs, each worker of a full build stays at about half the size.
    """
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        yield None
        return
    pool = _fork_pool(workers)
    try:
        pool.submit(int).result()  # the first task forks every worker (fork start method)
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)


@contextlib.contextmanager
def pool_map(
    fn: Callable[[T], R], items: Sequence[T], workers: int | None, pool: Executor | None = None
) -> Iterator[Iterator[R]]:
    """Yield ``fn``'s results over ``items`` in order, in parallel when it pays.

    ``pool``: workers started earlier (``early_pool``), used and left running.
    """
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(items) < MIN_ITEMS:
        yield map(fn, items)
        return
    chunk = max(1, min(16, len(items) // (workers * 8)))
    if pool is not None:
        yield _windowed(pool, fn, items, chunk, WINDOW * workers)
        return
    own = _fork_pool(workers)
    try:
        yield _windowed(own, fn, items, chunk, WINDOW * workers)
    finally:
        own.shutdown(cancel_futures=True)


# Chunks in flight per worker. ``Executor.map`` submits every chunk at once: at 100,000 logs
# the work items (and their arguments, made for all) were tens of MB of the build's memory.
WINDOW = 4


def _windowed(
    pool: Executor, fn: Callable[[T], R], items: Sequence[T], size: int, window: int
) -> Iterator[R]:
    """Yield ``fn``'s results over ``items`` in order, keeping ``window`` chunks submitted."""
    chunks = (items[start : start + size] for start in range(0, len(items), size))
    pending = deque(pool.submit(_apply, fn, chunk) for chunk in itertools.islice(chunks, window))
    while pending:
        results = pending.popleft().result()
        pending.extend(pool.submit(_apply, fn, chunk) for chunk in itertools.islice(chunks, 1))
        yield from results


def _apply(fn: Callable[[T], R], chunk: Sequence[T]) -> list[R]:
    """Return ``fn`` of each item of a chunk (in a worker)."""
    return [fn(item) for item in chunk]
