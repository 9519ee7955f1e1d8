"""A ``dask worker --preload``: the worker dies (SIGKILL) when it maps one log.

The log's key is in ``SITEGEN_TEST_POISON``. A test's way to make a log kill every worker that
maps it, in worker processes a test cannot monkeypatch.
"""

from __future__ import annotations

import os
import signal
from typing import Any


def dask_setup(worker: Any) -> None:
    """Make the map step of this worker kill it on the poisoned log."""
    from sitegen.builder.map import dask_mapper

    poisoned = os.environ["SITEGEN_TEST_POISON"]
    original = dask_mapper.process_log

    def process_log(log: Any, *args: Any) -> Any:
        if log.key == poisoned:
            os.kill(os.getpid(), signal.SIGKILL)
        return original(log, *args)

    dask_mapper.process_log = process_log  # type: ignore[assignment]
