from __future__ import annotations

import gzip
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

import sitegen
from sitegen.model import Classification

ROOT = Path(__file__).resolve().parent.parent


def test_build_from_the_package_top_level(tmp_path: Path, example_logs: Path) -> None:
    report = sitegen.build(str(example_logs), str(tmp_path / "site"), workers=1)
    assert report.published == 25
    assert report.classifications["malformed"] == 1
    assert (tmp_path / "site/api/jobs").is_file()
    report = sitegen.build(example_logs, tmp_path / "site", archive=tmp_path / "site.tar.gz")
    assert report.archive is not None and report.archive.format == "tar.gz"
    with tarfile.open(tmp_path / "site.tar.gz") as tar:
        assert "api/jobs" in tar.getnames()


def test_build_takes_every_build_option_by_name(tmp_path: Path, example_logs: Path) -> None:
    site = tmp_path / "site"
    assert len(list(sitegen.build(example_logs, site, workers=1).output.glob("jobs/*/*.gz"))) == 25
    report = sitegen.build(example_logs, site, workers=1, max_jobs=3, raw_logs=False)
    assert report.published == 3 and report.retention_dropped == 22
    assert not list(site.glob("jobs/*/*.gz"))
    # Sizes as text, as on the command line; an empty dir only with allow_empty.
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(sitegen.UsageError, match="refusing to replace it with an empty site"):
        sitegen.build(empty, site, max_site_size="1GB")
    assert sitegen.build(empty, site, allow_empty=True, max_site_size="1GB").published == 0


def test_build_refuses_an_option_it_does_not_have(tmp_path: Path, example_logs: Path) -> None:
    with pytest.raises(sitegen.UsageError, match="has no option 'max_job'"):
        sitegen.build(example_logs, tmp_path / "site", max_job=3)
    assert not (tmp_path / "site").exists()


def test_read_log_from_the_package_top_level(tmp_path: Path, example_logs: Path) -> None:
    plain = example_logs / "1UXXFWX.eventlog"
    packed = tmp_path / "1UXXFWX.eventlog.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    read = sitegen.read_log(str(packed))
    assert read.classification is Classification.COMPLETED
    assert read.job_end is not None and read.job_end.index.job_id == "1UXXFWX"
    assert read.path == packed
    assert sitegen.read_log(plain).job_end == read.job_end


def test_errors_are_sitegen_errors(tmp_path: Path) -> None:
    with pytest.raises(sitegen.UsageError, match="event-log dir does not exist"):
        sitegen.build(tmp_path / "missing", tmp_path / "site")
    assert issubclass(sitegen.UsageError, sitegen.SitegenError)
    assert not (tmp_path / "site").exists()


def test_public_names_are_listed() -> None:
    assert {"build", "read_log", "SitegenError", "UsageError"} <= set(dir(sitegen))
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        _ = sitegen.nope  # type: ignore[attr-defined]


def _fresh(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_import_sitegen_stays_cheap() -> None:
    loaded = _fresh(
        "import sys, sitegen; "
        "print(sorted(m.split('.')[0] for m in sys.modules if m.split('.')[0] in "
        "('sitegen', 'jinja2', 'msgspec', 'click', 'zstandard', 'markdown', 'nh3', 'orjson')))"
    )
    assert loaded == "['sitegen']"


def test_build_stays_the_function_whatever_was_imported_first() -> None:
    # The pipeline module is named apart from the API function, so no import can shadow it.
    out = _fresh(
        "from sitegen.builder.options import BuildOptions\n"
        "import sitegen\n"
        "from sitegen import build\n"
        "print(build is sitegen.build, callable(build), build.__module__)"
    )
    assert out == "True True sitegen.python_api"
