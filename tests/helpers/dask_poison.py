"""A ``dask worker --preload``: the worker dies (SIGKILL) or hangs when it maps one log.

The log's key is in ``SITEGEN_TEST_POISON``. With ``SITEGEN_TEST_HANG_WHILE`` (a path), the
worker's thread instead sleeps while that file exists, its process answering the scheduler as
ever. A test's way to make a log kill or stall every worker that maps it, in worker processes
a test cannot monkeypatch.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Any


def dask_setup(worker: Any) -> None:
    """Make the map step of this worker kill it, or hang, on the poisoned log."""
    from sitegen.builder.map import dask_mapper

    poisoned = os.environ["SITEGEN_TEST_POISON"]
    hang_while = os.environ.get("SITEGEN_TEST_HANG_WHILE")
    original = dask_mapper.process_log

    def process_log(log: Any, *args: Any) -> Any:
        if log.key == poisoned:
            if hang_while is None:
                os.kill(os.getpid(), signal.SIGKILL)
            while Path(hang_while).exists():
                time.sleep(0.05)
        return original(log, *args)

    dask_mapper.process_log = process_log  # type: ignore[assignment]
