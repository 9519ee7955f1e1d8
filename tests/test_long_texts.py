"""Text from a log cannot amplify: pages cap it with a mark, /api and the raw log keep it whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.builder.options import BuildOptions
from sitegen.builder.pipeline import build
from sitegen.layout import STATE_NAME
from sitegen.text.shorten import MAX_SHOWN_TEXT
from tests.helpers.logs import job_lines, write

LONG = 1 << 20  # characters: far past the cap, small enough for a quick test


def long_log(path: Path, job_id: str, start_ms: int) -> Path:
    """Write a failed job whose name, error, executor ids and config value are 1 MiB each."""
    lines = job_lines(job_id, name="@NAME@", stages=3, start_ms=start_ms)
    out = []
    for line in lines:
        record = json.loads(line)
        data = record["data"]
        if record["ev"] == "TaskEnd":
            data["executor_id"] = "e" * LONG
            data["status"] = {"Failed": {"reason": "ExecutionError", "error": "r" * LONG}}
        if record["ev"] == "JobEnd":
            data["status"] = {"Failed": "f" * LONG}
            data["config"]["datafusion.long"] = "c" * LONG
        out.append(json.dumps(record).replace("@NAME@", "n" * LONG).encode() + b"\n")
    return write(path, out)


@pytest.mark.slow
def test_long_texts_are_shortened_on_pages_and_whole_in_the_api(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for n in range(3):  # a recurring name: its page, the front page, the listings
        long_log(logs / f"long{n}.eventlog", f"long{n}", 1_000_000 * (n + 1))
    site = tmp_path / "site"
    report = build(BuildOptions(logs, site, workers=1))
    assert report.published == 3
    log_bytes = sum(p.stat().st_size for p in logs.iterdir())
    files = {str(p.relative_to(site)): p.stat().st_size for p in site.rglob("*") if p.is_file()}
    pages = {f: size for f, size in files.items() if f.endswith(".html") and "api/" not in f}
    # The job page's plans hold the name too: cut at their own cap (200,000 characters).
    assert max(pages.values()) < 300_000, sorted(pages.items(), key=lambda i: -i[1])[:3]
    without_state = sum(size for f, size in files.items() if f != STATE_NAME)
    assert without_state <= 4 * log_bytes + 200_000 * 3
    job_page = (site / "jobs/long0/index.html").read_text()
    shortened = "n" * MAX_SHOWN_TEXT + "… (shortened: 1,046,576 more characters in the API"
    assert f"<h1>{shortened}" in job_page and f"<title>{shortened}" in job_page
    api = json.loads((site / "api/job/long0/index.json").read_bytes())
    assert api["job_name"] == "n" * LONG
    assert json.loads((site / "api/job/long0/config").read_bytes())["datafusion.long"] == "c" * LONG
