"""How many times a full build reads its logs: bytes read from the log dirs / bytes of logs.

Run:  python benchmarks/readonce.py                  (200 jobs x 4 stages x 200 tasks)
      python benchmarks/readonce.py --jobs 20 --tasks 10   (a quick smoke run)

Prints one line per corpus (plain, and the same logs gzipped) and per worker count: the bytes
read of the logs (every process of the build: each read counted at the opener,
``eventlog.sources``, into memory the forked workers share; a stream opened counts the
log's whole size) over the bytes the log dirs hold.
1.00 is each log read once; a ``.gz`` log counts its stored (compressed) bytes.
"""

from __future__ import annotations

import argparse
import gzip
import multiprocessing
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import build  # this directory's benchmark: corpora

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build as sitegen_build
from sitegen.eventlog import sources


def gzipped(plain: Path, directory: Path) -> Path:
    """Return a copy of the corpus with every log gzipped (made once)."""
    marker = directory / ".complete"
    if not marker.exists():
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir(parents=True)
        for path in sorted(plain.glob("*.eventlog")):
            packed = gzip.compress(path.read_bytes(), compresslevel=6, mtime=0)
            (directory / f"{path.name}.gz").write_bytes(packed)
        marker.touch()
    return directory


def bytes_read(log_dir: Path, out: Path, workers: int) -> int:
    """Return the bytes a full build read of the logs in ``log_dir`` (all its processes)."""
    total = multiprocessing.Value("q", 0, lock=True)  # shared with the workers it forks
    prefix = str(log_dir)

    def counted(opener: Callable[..., Any]) -> Callable[..., Any]:
        def open_counted(path: Any, *args: Any, **kwargs: Any) -> Any:
            got = opener(path, *args, **kwargs)
            if not str(path).startswith(prefix):
                return got
            if isinstance(got, bytes):
                with total.get_lock():
                    total.value += len(got)
                return got
            # A stream counts the log's whole size: each step that opens a log reads it to
            # its end (the reader, the digest, the copy), and a read counted at the stream
            # would miss those that go by ``readinto`` below a buffer.
            with total.get_lock():
                total.value += os.path.getsize(path)
            return got

        return open_counted

    names = ("open_regular", "open_regular_sized", "read_regular")
    originals = {name: getattr(sources, name) for name in names}
    for name, opener in originals.items():
        setattr(sources, name, counted(opener))
    try:
        shutil.rmtree(out, ignore_errors=True)
        sitegen_build(BuildOptions((log_dir,), out, workers=workers))  # type: ignore[arg-type]
    finally:
        for name, opener in originals.items():
            setattr(sources, name, opener)
    return int(total.value)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--tasks", type=int, default=200, help="tasks per stage (4 stages)")
    parser.add_argument("--work-dir", type=Path, default=Path(".bench"))
    args = parser.parse_args()
    work = args.work_dir
    plain = build.corpus(work / f"corpus-{args.jobs}x4x{args.tasks}", args.jobs, 4, args.tasks)
    packed = gzipped(plain, work / f"corpus-{args.jobs}x4x{args.tasks}-gz")
    for label, log_dir, pattern in (("plain", plain, "*.eventlog"), ("gzip", packed, "*.gz")):
        size = sum(p.stat().st_size for p in log_dir.glob(pattern))
        for workers in (1, 2):
            read = bytes_read(log_dir, work / "out" / "readonce", workers)
            print(
                f"13 bytes read / bytes of logs, {label}, {args.jobs} jobs, {workers} worker(s): "
                f"{read / size:.2f} ({read / 1e6:.1f} MB of {size / 1e6:.1f} MB)"
            )


if __name__ == "__main__":
    sys.exit(main())
