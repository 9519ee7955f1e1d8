from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest
import zstandard

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.builder.report import BuildReport
from sitegen.eventlog.discover import discover
from sitegen.eventlog.logfiles import split_name
from sitegen.eventlog.reader import read_log
from sitegen.model import Classification
from tests.helpers.logs import job_lines, write
from tests.helpers.sitetree import tree


def gz(data: bytes) -> bytes:
    return gzip.compress(data, mtime=0)


def zst(data: bytes) -> bytes:
    # With a content checksum, as the zstd command line writes by default.
    return zstandard.ZstdCompressor(level=3, write_checksum=True).compress(data)


COMPRESSORS = {".gz": gz, ".zst": zst}


def compressed_copy(src: Path, dst: Path, suffix: str) -> None:
    """Copy every log, compressed; ``.eventlog.running`` stays plain (no such compressed name)."""
    dst.mkdir()
    for log in src.iterdir():
        if log.name.endswith(".eventlog"):
            (dst / (log.name + suffix)).write_bytes(COMPRESSORS[suffix](log.read_bytes()))
        else:
            shutil.copy(log, dst / log.name)


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_compressed_logs_publish_byte_identical_api(
    tmp_path: Path, example_logs: Path, suffix: str, example_site: tuple[Path, BuildReport]
) -> None:
    packed = tmp_path / "packed"
    compressed_copy(example_logs, packed, suffix)
    plain_site, plain = example_site  # the same logs, uncompressed
    report = build(BuildOptions(packed, tmp_path / "packed-site", workers=1))
    assert report.published == plain.published == 25
    assert sorted(j.job_id for j in report.jobs) == sorted(j.job_id for j in plain.jobs)
    for job in plain.jobs:
        rel = Path("api/job") / job.job_id
        expected = tree(plain_site / rel)
        assert len(expected) == 5 + job.num_stages  # 5 job files, one DOT per stage
        assert tree(tmp_path / "packed-site" / rel) == expected
    jobs = "api/jobs"
    assert (tmp_path / "packed-site" / jobs).read_bytes() == (plain_site / jobs).read_bytes()
    # The damaged example stays damaged, with the same line, through compression.
    malformed = [(p.kind, p.line) for p in report.problems if p.kind == "malformed"]
    assert malformed == [(p.kind, p.line) for p in plain.problems if p.kind == "malformed"]


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_several_members_or_frames_read_as_one_log(tmp_path: Path, suffix: str) -> None:
    lines = job_lines("multi")
    half = len(lines) // 2
    compress = COMPRESSORS[suffix]
    data = compress(b"".join(lines[:half])) + compress(b"".join(lines[half:]))
    path = tmp_path / f"multi.eventlog{suffix}"
    path.write_bytes(data)
    plain = read_log(write(tmp_path / "multi.eventlog", lines))
    read = read_log(path)
    assert read.classification is Classification.COMPLETED
    assert read.job_end is not None and plain.job_end is not None
    assert bytes(read.job_end.stages) == bytes(plain.job_end.stages)
    assert len(read.tasks) == len(plain.tasks) == 6


def _cuts(size: int) -> list[int]:
    # Early, middle, and just before the end (only the trailer or last bytes missing).
    return sorted({10, size // 4, size // 2, size - 8, size - 1})


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_truncated_compressed_log_is_unreadable(tmp_path: Path, suffix: str) -> None:
    data = COMPRESSORS[suffix](b"".join(job_lines("cut", tasks_per_stage=200)))
    for cut in _cuts(len(data)):
        path = tmp_path / f"cut.eventlog{suffix}"
        path.write_bytes(data[:cut])
        read = read_log(path)
        assert read.classification is Classification.UNREADABLE, (cut, read.message)
        assert "truncated" in read.message
        assert read.job_end is None
        assert read.line is not None and read.line >= 1


@pytest.mark.parametrize(
    ("suffix", "message"),
    [(".gz", "not valid gzip data: Not a gzipped file"), (".zst", "corrupt zstd data")],
)
def test_plain_text_with_a_compressed_name_is_unreadable(
    tmp_path: Path, suffix: str, message: str
) -> None:
    path = write(tmp_path / f"plain.eventlog{suffix}", job_lines("plain"))
    read = read_log(path)
    assert read.classification is Classification.UNREADABLE
    assert read.message.startswith(message)
    assert read.line == 1


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_corrupt_compressed_data_is_unreadable(tmp_path: Path, suffix: str) -> None:
    data = bytearray(COMPRESSORS[suffix](b"".join(job_lines("bad", tasks_per_stage=50))))
    data[len(data) // 2] ^= 0x55
    path = tmp_path / f"bad.eventlog{suffix}"
    path.write_bytes(bytes(data))
    read = read_log(path)
    assert read.classification is Classification.UNREADABLE
    assert "gzip" in read.message if suffix == ".gz" else "zstd" in read.message


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_empty_compressed_file_is_unreadable(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"empty.eventlog{suffix}"
    path.write_bytes(b"")
    read = read_log(path)
    assert read.classification is Classification.UNREADABLE
    assert read.message == f"the file is empty (no {'gzip' if suffix == '.gz' else 'zstd'} data)"


def test_build_reports_truncated_logs_and_publishes_the_rest(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    data = b"".join(job_lines("whole"))
    (logs / "whole.eventlog.zst").write_bytes(zst(data))
    (logs / "cut-gz.eventlog.gz").write_bytes(gz(b"".join(job_lines("cut-gz")))[:-5])
    (logs / "cut-zst.eventlog.zst").write_bytes(zst(b"".join(job_lines("cut-zst")))[:-5])
    before = tree(logs)
    report = build(BuildOptions(logs, tmp_path / "site"))
    assert [j.job_id for j in report.jobs] == ["whole"]
    kinds = {(p.file, str(p.kind)) for p in report.problems}
    assert kinds == {("cut-gz.eventlog.gz", "unreadable"), ("cut-zst.eventlog.zst", "unreadable")}
    # Logs are streamed, never unpacked or touched: the log dir is exactly as it was.
    assert tree(logs) == before
    assert not (tmp_path / "site/api/job/cut-gz").exists()


def test_discovery_takes_the_id_without_the_compression_suffix(tmp_path: Path) -> None:
    assert split_name("abc.eventlog.gz") == ("abc", False)
    assert split_name("abc.eventlog.zst") == ("abc", False)
    assert split_name(".eventlog.gz") is None
    assert split_name("abc.gz") is None
    assert split_name("abc.eventlog.bz2") is None
    for name in ("a.eventlog.gz", "b.eventlog.zst", "c.gz", "d.eventlog.tar.gz"):
        (tmp_path / name).write_bytes(b"")
    assert [(f.path.name, f.name_id) for f in discover(tmp_path)] == [
        ("a.eventlog.gz", "a"),
        ("b.eventlog.zst", "b"),
    ]


def test_plain_and_compressed_copy_of_one_job_are_duplicates(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    data = b"".join(job_lines("twice"))
    (logs / "twice.eventlog").write_bytes(data)
    (logs / "twice.eventlog.gz").write_bytes(gz(data))
    report = build(BuildOptions(logs, tmp_path / "site"))
    assert [j.file for j in report.jobs] == ["twice.eventlog"]
    assert [(p.file, str(p.kind)) for p in report.problems] == [
        ("twice.eventlog.gz", "duplicate-id")
    ]


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_damage_anywhere_never_raises(tmp_path: Path, suffix: str) -> None:
    # Without a checksum a zstd stream can decode corrupt bytes "successfully": then the
    # damage shows up as it would in a plain log (skipped lines, no JobEnd), never a crash.
    raw = b"".join(job_lines("fuzz", tasks_per_stage=20))
    data = gz(raw) if suffix == ".gz" else zstandard.ZstdCompressor().compress(raw)
    path = tmp_path / f"fuzz.eventlog{suffix}"
    seen = set()
    for pos in range(0, len(data), max(1, len(data) // 60)):
        broken = bytearray(data)
        broken[pos] ^= 0xA5
        path.write_bytes(bytes(broken))
        read = read_log(path)
        seen.add(read.classification)
        if read.classification is Classification.COMPLETED:
            assert read.job_end is not None
    assert Classification.UNREADABLE in seen


# Gzips one log in a process of its own: held, streamed, or streamed through reads that
# come back short (as a decompressing reader's or a network file system's may).
GZIP_ONE_LOG = """
import hashlib, random, sys
from pathlib import Path
from sitegen.eventlog import rawlog
path, mode = Path(sys.argv[1]), sys.argv[2]
rawlog.CHUNK = 1 << 12  # many pieces from a small log: the same code path as 1 MiB ones
if mode == "short-reads":
    real = rawlog.open_log
    class Short:
        def __init__(self, stream): self.stream, self.rng = stream, random.Random(7)
        def read(self, n): return self.stream.read(self.rng.randint(1, n))
        def __enter__(self): return self
        def __exit__(self, *exc): self.stream.close()
    rawlog.open_log = lambda p: Short(real(p))
held = path.read_bytes() if mode == "held" else None
print(hashlib.sha256(b"".join(rawlog.gzip_chunks(path, held))).hexdigest())
"""


def test_raw_log_gzip_bytes_depend_only_on_the_log(tmp_path: Path) -> None:
    import hashlib
    import random
    import subprocess
    import sys

    from zlib_ng import zlib_ng

    from sitegen.eventlog import rawlog
    from tests.helpers.logs import job_lines, write

    # Over two of the reader's pieces, so that where the input is cut could matter.
    log = write(tmp_path / "big.eventlog", job_lines("big", stages=4, tasks_per_stage=1500))
    data = log.read_bytes()
    assert len(data) > 2 * rawlog.CHUNK
    (tmp_path / "x.eventlog.zst").write_bytes(zst(data))
    runs = [
        (mode, subprocess.run(
            [sys.executable, "-c", GZIP_ONE_LOG, str(path), mode],
            capture_output=True, text=True, check=True,
        ).stdout.strip())
        for path, mode in [(log, "held"), (log, "held"), (log, "streamed"),
                           (log, "short-reads"), (tmp_path / "x.eventlog.zst", "short-reads")]
    ]  # fmt: skip
    assert len({digest for _, digest in runs}) == 1, runs
    # Not the pieces: the encoding is the log's alone. One call for the whole log, or the log
    # cut anywhere, in this long-lived process, gives the fresh processes' bytes.
    rng = random.Random(38)
    for cuts in [0, 1, 7, 300]:
        ends = [*sorted(rng.sample(range(1, len(data)), cuts)), len(data)]
        packer = zlib_ng.compressobj(rawlog.LEVEL, zlib_ng.DEFLATED, rawlog.GZIP_WBITS)
        pieces = [packer.compress(data[a:b]) for a, b in zip([0, *ends[:-1]], ends, strict=True)]
        encoded = b"".join([*pieces, packer.flush()])
        assert hashlib.sha256(encoded).hexdigest() == runs[0][1], cuts
    assert gzip.decompress(b"".join(rawlog.gzip_chunks(log, data))) == data
