"""Map a function over logs: in this process when few, else in a pool of forked workers."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")

# Below this many items, starting workers costs more than they save.
MIN_ITEMS = 8


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
    pool = ProcessPoolExecutor(workers, mp_context=get_context("fork"))
    try:
        yield pool.map(fn, items, chunksize=max(1, min(16, len(items) // (workers * 8))))
    finally:
        pool.shutdown(cancel_futures=True)
