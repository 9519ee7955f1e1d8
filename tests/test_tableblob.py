"""A job's rows as the build state keeps them: blobs made and read in threads, damaged ones."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import pytest
import zstandard

from sitegen.diagnose.analysis import analyse
from sitegen.eventlog.reader import read_log
from sitegen.render.tableblob import BLOB_FORMAT, decode_tables, encode_tables
from sitegen.render.tables import TABLES, JobTables, job_tables
from tests.helpers.logs import job_lines, write


@pytest.fixture(scope="module")
def tables(tmp_path_factory: pytest.TempPathFactory) -> list[JobTables]:
    """The rows of a few small jobs, each with a retried task."""
    found = []
    for n in range(6):
        path = write(tmp_path_factory.mktemp("logs") / f"j{n}.eventlog", job_lines(f"j{n}"))
        read = read_log(path)
        found.append(job_tables(read, analyse(read, path.name), path.name))
    return found


def test_blobs_made_and_read_in_threads_are_those_of_one(tables: list[JobTables]) -> None:
    # Each thread has its own compressor and decompressor (one is not safe to share).
    alone = [encode_tables(t) for t in tables]
    with ThreadPoolExecutor(4) as pool:
        assert list(pool.map(encode_tables, tables * 20)) == alone * 20
        back = list(pool.map(decode_tables, alone * 20))
    for job, again in zip(tables * 20, back, strict=True):
        assert all(again.as_lists(name) == job.as_lists(name) for name in TABLES)


def _blob(layout: list[object]) -> bytes:
    return zstandard.ZstdCompressor().compress(msgspec.msgpack.encode(layout))


def test_a_blob_of_columns_of_other_lengths_does_not_decode(tables: list[JobTables]) -> None:
    raw = zstandard.ZstdDecompressor().decompress(encode_tables(tables[0]))
    layout = msgspec.msgpack.decode(raw)
    assert layout[0] == BLOB_FORMAT
    decode_tables(_blob(layout))  # as made, it decodes
    for table in range(len(TABLES)):
        for cut in ("numbers", "texts", "columns"):
            damaged = msgspec.msgpack.decode(raw)
            numbers, texts = damaged[2][table]
            if cut == "numbers":
                numbers[0] = numbers[0] + bytes(8)  # one item more
            elif cut == "texts":
                texts[-1] = [*texts[-1], "one more"]
            else:
                numbers.pop()
            with pytest.raises(ValueError):
                decode_tables(_blob(damaged))


def test_a_blob_of_the_older_layout_does_not_decode(tables: list[JobTables]) -> None:
    # Layout 2: every column in schema order, numbers as bytes.
    job = tables[0]
    older = [
        2,
        job.job_id,
        [[bytes(v) if not isinstance(v, list) else v for v in job.table(name)] for name in TABLES],
    ]
    with pytest.raises(ValueError):
        decode_tables(_blob(older))


def test_a_job_of_no_rows_in_a_table_round_trips(tmp_path: Path) -> None:
    path = write(tmp_path / "quiet.eventlog", job_lines("quiet", stages=1, tasks_per_stage=1))
    read = read_log(path)
    job = job_tables(read, analyse(read, path.name), path.name)
    back = decode_tables(encode_tables(job))
    assert all(back.as_lists(name) == job.as_lists(name) for name in TABLES)
