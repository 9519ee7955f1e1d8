"""Keep the cyclic garbage collector off the build's long-lived records.

A 100,000-log manifest decodes into hundreds of thousands of lists and dicts that live
for the whole build. The collector would scan them again at every full collection and
find no cycle: that cost more than decoding them. (The records themselves are structs
the collector never tracks, see ``model.py``.)
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterator


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Run the body with the cyclic collector off, then restore it as it was."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextlib.contextmanager
def freezer() -> Iterator[Callable[[], None]]:
    """Yield a function that hides every live object from the collector until the body ends."""
    # An embedding program that froze objects itself keeps them frozen: leave its state be.
    ours = gc.get_freeze_count() == 0
    try:
        yield gc.freeze
    finally:
        if ours:
            gc.unfreeze()
