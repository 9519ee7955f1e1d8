"""The map step on a Dask cluster (``--dask-scheduler``): workers read logs, return files.

Logs go in chunks of a few (one task each: a round trip per log cost more than its map); for
each log a worker reads it (from a shared directory or object storage), renders
the job's files into a scratch directory of its own, and returns their bytes with the log's
outcome. This process writes them through the one writer into the staging directory, as a
local worker would have, so any output works without a shared disk, and the site is the same
byte for byte. ``distributed`` is imported only when a scheduler is given.
"""

from __future__ import annotations

import os
import tempfile
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.builder.mapstep import Progress, claim, part_dir, process_log, root_parents
from sitegen.builder.state.records import LogOutcome
from sitegen.errors import UsageError
from sitegen.eventlog.logfiles import LogFile
from sitegen.layout import PARTS_DIR
from sitegen.publish.writer import SiteWriter

if TYPE_CHECKING:
    from sitegen.diagnose.recurring import RunContext
    from sitegen.render.pages import PageRenderer

# Tasks in flight per worker thread: enough to keep each busy while results come back.
WINDOW = 4
# The most logs in one task (fewer when there are few logs to spread over the workers).
CHUNK = 16
# One client per scheduler address for the life of the process (a watcher builds often).
_clients: dict[str, Any] = {}

# What a worker returns for one log: its outcome and its job's files (path, bytes).
Mapped = tuple[LogOutcome, list[tuple[str, bytes]]]


def map_remote(log: LogFile, pages: PageRenderer, context: RunContext | None) -> Mapped:
    """Map one log in a worker: its outcome, and the bytes of every file of its job."""
    with tempfile.TemporaryDirectory(prefix="sitegen-map-") as scratch:
        staging = Path(scratch)
        for parent in root_parents(pages):
            os.makedirs(staging / parent, exist_ok=True)
        outcome, _ = process_log(log, staging, staging / PARTS_DIR / "0", pages, context)
        files = []
        for root in outcome.roots:
            for directory, _, names in os.walk(staging / root):
                for name in names:
                    path = Path(directory) / name
                    files.append((path.relative_to(staging).as_posix(), path.read_bytes()))
    files.sort()
    return outcome, files


def map_chunk(chunk: list[tuple[LogFile, RunContext | None]], pages: PageRenderer) -> list[Mapped]:
    """Map a chunk of logs in a worker, in order."""
    return [map_remote(log, pages, context) for log, context in chunk]


def client(address: str) -> Any:
    """Return a client of the scheduler at ``address`` (one per process)."""
    found = _clients.get(address)
    if found is not None and found.status == "running":
        return found
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


def cluster_map(
    address: str,
    logs: Sequence[LogFile],
    which: Sequence[int],
    staging: Path,
    pages: PageRenderer,
    on_result: Callable[[int, LogOutcome, bool], None],
    progress: Progress | None = None,
    contexts: Mapping[int, RunContext] | None = None,
) -> None:
    """Map the logs at ``which`` on the cluster; write each job's files here, in order."""
    if not which:
        return
    dask = client(address)
    contexts = contexts or {}
    # The renderer is sent once to every worker, not with each task.
    [shared] = dask.scatter([pages], broadcast=True, hash=False)
    threads = sum(dask.nthreads().values()) or 1
    size = max(1, min(CHUNK, len(which) // (threads * WINDOW)))
    chunks = iter([list(which[at : at + size]) for at in range(0, len(which), size)])
    pending: deque[tuple[list[int], Any]] = deque()

    def submit() -> None:
        numbers = next(chunks, None)
        if numbers is not None:
            chunk = [(logs[n], contexts.get(n)) for n in numbers]
            pending.append((numbers, dask.submit(map_chunk, chunk, shared, pure=False)))

    for _ in range(WINDOW * threads):
        submit()
    while pending:
        numbers, task = pending.popleft()
        results = task.result()
        task.release()
        submit()
        for n, (outcome, files) in zip(numbers, results, strict=True):
            on_result(n, outcome, write_job(staging, n, outcome, files))
            if progress:
                progress.advance()


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
