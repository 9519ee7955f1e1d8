"""Map a function over logs: in this process when few, else in a pool of forked workers."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
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
        yield pool.map(fn, items, chunksize=max(1, min(16, len(items) // (workers * 8))))
    finally:
        pool.shutdown(cancel_futures=True)
