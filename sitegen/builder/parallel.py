"""Map a function over logs: in this process when few, else in a pool of forked workers."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from typing import TypeVar

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


@contextlib.contextmanager
def pool_map(
    fn: Callable[[T], R], items: Sequence[T], workers: int | None
) -> Iterator[Iterator[R]]:
    """Yield ``fn``'s results over ``items`` in order, in parallel when it pays."""
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(items) < MIN_ITEMS:
        yield map(fn, items)
        return
    # Imported here: a build of a few logs (the usual incremental one) needs no pool.
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    # fork: workers inherit the loaded templates and modules instead of re-importing them.
    pool = ProcessPoolExecutor(
        workers,
        mp_context=get_context("fork"),
        initializer=tie_to_parent,
        initargs=(os.getpid(),),
    )
    try:
        chunk = max(1, min(16, len(items) // (workers * 8)))
        yield _windowed(pool, fn, items, chunk, WINDOW * workers)
    finally:
        pool.shutdown(cancel_futures=True)


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
