"""A tiny run of the benchmark script, so it cannot rot (the real run is `python benchmarks/build.py`)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

# A real, if small, benchmark run: about 40 s.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def run_script(name: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run ``benchmarks/<name>`` with ``args``; its output as text."""
    command = [sys.executable, str(ROOT / "benchmarks" / name), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout)


def test_benchmark_smoke_run(tmp_path: Path) -> None:
    run = run_script(
        "build.py",
        "--jobs",
        "6",
        "--tasks",
        "5",
        "--small-jobs",
        "20",
        "--table-rows",
        "2000",
        "--scale-jobs",
        "60,120",
        "--work-dir",
        str(tmp_path),
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("corpus: 6 jobs x 4 stages x 5 tasks")
    assert re.search(r"^disk: creating a small file .* takes \d+ µs", run.stdout, flags=re.M)
    assert "Published 6 jobs from 6 logs" in run.stdout
    assert "1 log read, 6 unchanged" in run.stdout
    assert re.search(
        r"^  findings and trace per job: .* findings \d+\.\d%, trace \d+\.\d%",
        run.stdout,
        flags=re.M,
    )
    assert "is up to date: 7 jobs from 7 logs" in run.stdout
    assert re.search(
        r"^6 peak RSS: \d+ MB \(6-job corpus\), \d+ MB \(20 small jobs, built in [0-9.]+ s\), "
        r"\d+ MB \(2 small jobs\): [0-9.]+x for 10x the jobs$",
        run.stdout,
        flags=re.M,
    )
    change = r"[0-9.]+ s \(CPU [0-9.]+ s\), (\d+) files, \d+ kB, \d+ MB"
    scale = re.findall(
        rf"^8 at (\d+) small jobs: build [0-9.]+ s \(CPU [0-9.]+ s, \d+ MB, site \d+ MB\); "
        rf"new {change}; removed {change}; inserted {change}; max-jobs {change}; "
        rf"no-op --verify-logs [0-9.]+ s \(CPU [0-9.]+ s, \d+ MB\); "
        rf"no-op \(trusting finished logs\) [0-9.]+ s \(CPU [0-9.]+ s, \d+ MB\); "
        rf"--watch: rename to published p50 [0-9.]+ s, p95 [0-9.]+ s, max [0-9.]+ s over 20 logs, "
        rf"RSS \d+ MB after the first publish, \d+ MB after the last$",
        run.stdout,
        flags=re.M,
    )
    assert [s[0] for s in scale] == ["60", "120"]
    assert all(int(n) > 0 for s in scale for n in s[1:])  # each change rewrote something
    assert re.search(
        r"^8 growth 60 -> 120 jobs \(2x\): build [0-9.]+x, peak RSS [0-9.]+x, no-op [0-9.]+x "
        r"\(trusting finished logs [0-9.]+x\), watch p95 [0-9.]+ -> [0-9.]+ s, slowest change "
        r"[0-9.]+ s; files rewritten per change",
        run.stdout,
        flags=re.M,
    )
    assert re.search(
        r"^  sitegen's reading alone \(read, hash, gzip each log; 1 process\): [0-9.]+ s = "
        r"[0-9.]+x floor, of the \d+x floor of CPU that 3/2 <= 3 allows on \d+ cores",
        run.stdout,
        flags=re.M,
    )
    assert re.search(r"^7 task table of 2,000 rows: .* rows/s\); a Jinja loop", run.stdout, re.M)
    assert re.search(
        r"^  user CPU per job in 1 process \(6 logs\): map step [0-9.]+ ms \([0-9.]+x floor\); "
        r"without task rows and timeline [0-9.]+ ms \([0-9.]+x floor\)$",
        run.stdout,
        flags=re.M,
    )
    assert re.search(
        r"^9 trends at 20 small jobs \(reduce step, 1 process\): analysis \d+ ms, "
        r"pages and JSON \d+ ms: [0-9.]+ of that build$",
        run.stdout,
        flags=re.M,
    )
    ratios = dict(re.findall(r"^(\d/\d) .*:\s+([0-9.]+)$", run.stdout, flags=re.M))
    assert set(ratios) == {"3/1", "3/2", "4/3", "5/3"}
    assert all(float(v) > 0 for v in ratios.values())
    assert lines[-4].startswith("3/1")


def test_findings_benchmark_smoke_run() -> None:
    """A few seconds of benchmarks/findings.py (the full run judges the targets)."""
    run = run_script("findings.py", "--smoke", timeout=120)
    assert run.returncode == 0, run.stderr
    assert re.search(r"^healthy jobs: 40; with a warning or worse [0-9.]+%", run.stdout, re.M)
    assert re.search(r"^planted anomalies: 24; recall of those costing", run.stdout, re.M)
    assert re.search(r"^steady runs: 250 in 10 series", run.stdout, re.M)
    assert re.search(r"^sustained 1.8x shifts: 10; flagged within 2 runs", run.stdout, re.M)
    assert "smoke run in" in run.stdout


def test_cpu_benchmark_smoke_run(tmp_path: Path) -> None:
    """A tiny run of benchmarks/cpu.py: its three figures, and a split that adds up."""
    run = run_script(
        "cpu.py",
        "--runs",
        "1",
        "--jobs",
        "3",
        "--small-jobs",
        "12",
        "--split-jobs",
        "6",
        "--work-dir",
        str(tmp_path),
    )
    assert run.returncode == 0, run.stderr
    assert re.search(r"^A 3 jobs x 800 tasks, median of 1: naive [0-9.]+ s", run.stdout, re.M)
    assert re.search(r"^B 12 small jobs, median of 1: [0-9.]+ ms of CPU a job", run.stdout, re.M)
    total = re.search(
        r"^C a small job's map step in 1 process \(6 logs\): ([0-9.]+) ms", run.stdout, re.M
    )
    assert total is not None
    steps = [float(ms) for ms in re.findall(r"^\s+(-?[0-9.]+) ms\s", run.stdout, re.M)]
    assert len(steps) == 17 and steps[0] > 0  # the peek and the read of its bytes too
    assert sum(steps) == pytest.approx(float(total.group(1)), abs=0.02)


def test_cpu_benchmark_against_another_checkout(tmp_path: Path) -> None:
    """Line D alternates two checkouts' builds (here this one twice) and prints their ratio."""
    run = run_script(
        "cpu.py",
        "--jobs",
        "2",
        "--small-jobs",
        "6",
        "--pairs",
        "2",
        "--against",
        str(ROOT),
        "--work-dir",
        str(tmp_path),
    )
    assert run.returncode == 0, run.stderr
    assert f"against {ROOT}, 2 pairs" in run.stdout
    lines = re.findall(
        r"^  (6 small jobs|2 jobs x 800 tasks): CPU a job ([0-9.]+) ms against ([0-9.]+) ms: "
        r"([0-9.]+)x \(pairs: ([0-9.]+), ([0-9.]+);",
        run.stdout,
        re.M,
    )
    assert [line[0] for line in lines] == ["6 small jobs", "2 jobs x 800 tasks"]
    for _, mine, theirs, ratio, *pairs in lines:
        assert float(mine) > 0 and float(theirs) > 0
        assert 0.2 < float(ratio) < 5  # the same code on both sides
        assert min(map(float, pairs)) <= float(ratio) <= max(map(float, pairs))
    assert not re.search(r"^[ABC] ", run.stdout, re.M)  # line D alone


def test_readonce_benchmark_smoke_run(tmp_path: Path) -> None:
    """A tiny run of benchmarks/readonce.py: each log read once by a build in one process."""
    run = run_script("readonce.py", "--jobs", "4", "--tasks", "5", "--work-dir", str(tmp_path))
    assert run.returncode == 0, run.stderr
    ratios = re.findall(
        r"^13 bytes read / bytes of logs, (\w+), 4 jobs, (\d) worker\(s\): ([0-9.]+)",
        run.stdout,
        re.M,
    )
    assert [(kind, workers) for kind, workers, _ in ratios] == [
        ("plain", "1"),
        ("plain", "2"),
        ("gzip", "1"),
        ("gzip", "2"),
    ]
    assert [float(r) for kind, workers, r in ratios if workers == "1"] == [1.0, 1.0]


def test_watch_line_counts_the_steps_of_one_event(tmp_path: Path) -> None:
    """Run line 8w's step counter on 20 jobs: it counts the steps of one event."""
    # A patch of a name the build no longer calls (the state's loader, the plan) counts none,
    # or stops the line with an AttributeError, as it did after builder/ moved.
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); import build; "
        "work = Path(sys.argv[2]); logs = build.corpus(work / 'logs', 20, 2, 10); "
        "site = work / 'site'; build._json_build(logs, site); "
        "print(*build.event_steps(logs, site))"
    )
    run = subprocess.run(
        [sys.executable, "-c", code, str(ROOT / "benchmarks"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    added, removed = map(int, run.stdout.split())
    # The listing diff and the plan visit a few rows an event, never none.
    assert 0 < added < 2_000 and 0 < removed < 2_000, run.stdout
