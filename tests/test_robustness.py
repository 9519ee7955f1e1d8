"""Short runs of benchmarks/robustness.py, so its figures stay true (the long run is documented)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import require

# Fuzzing, an XSS corpus in a browser, killed builds and huge inputs: about a minute in all.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks/robustness.py"


def _run(part: str, *extra: str, timeout: int = 900) -> str:
    run = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--only", part, *extra],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.rstrip().endswith("all targets met: yes"), run.stdout
    return run.stdout


def test_fuzzing_escapes_nothing() -> None:
    out = _run("fuzz", "--fuzz-seconds", "4", "--render-every", "50")
    found = re.search(r"^fuzz: ([\d,]+) executions .*; (\d+) through the whole map step\), "
                      r"escaped exceptions: 0$", out, flags=re.M)  # fmt: skip
    assert found, out
    assert int(found[1].replace(",", "")) > 100 and int(found[2]) > 0
    assert "fuzz: target 0 escaped: met" in out


def test_xss_corpus_neither_executes_nor_injects_markup() -> None:
    require("nginx")
    require("chromium")
    out = _run("xss")
    found = re.search(r"^xss: (\d+) payloads .*?(\d+) page loads .*: executions 0, "
                      r"unescaped markup 0, HTTP errors 0$", out, flags=re.M)  # fmt: skip
    assert found, out
    assert int(found[1]) >= 150 and int(found[2]) > 100
    # The detector is live: the same payloads raw on a page are seen.
    control = re.search(r"^xss: detector control .*: executions (\d+), unescaped markup (\d+)$",
                        out, flags=re.M)  # fmt: skip
    assert control and int(control[1]) > 0 and int(control[2]) > 0


def test_killed_builds_recover_and_leave_nothing() -> None:
    require("nginx")
    out = _run("kill")
    found = re.search(
        r"^kill: 20 kill -9 points \((\d+) landed.*?([\d,]+) polled requests against nginx: "
        r"broken 0, recovered byte for byte 20/20, leftover processes 0, leftover dirs 0$",
        out,
        flags=re.M,
    )
    assert found, out
    assert int(found[1]) >= 15 and int(found[2].replace(",", "")) > 0


@pytest.mark.parametrize(
    "case",
    [
        "JobEnd line",
        "TaskEnd lines",
        " stages (",
        "dense DAG, ",
        "layout of a 1,000-stage DAG",
        "layout of a dense DAG of 299 stages, 12,800 edges",
    ],
)
def test_resource_cases_finish_and_say_what_they_cut(case: str, resources_out: str) -> None:
    (line,) = [
        line
        for line in resources_out.splitlines()
        if line.startswith("resources:") and case in line
    ]
    assert line.endswith(": met"), line
    if case == "JobEnd line":
        assert "the page cut the plan at 200,000 characters" in line and ", whole" in line
    if case == "dense DAG, ":
        assert "Picture simplified" in line
    if case.startswith("layout of a dense"):
        assert "(simplified)" in line


@pytest.fixture(scope="module")
def resources_out() -> str:
    return _run("resources")


@pytest.mark.slow
def test_hostile_logs_never_take_a_build_down() -> None:
    out = _run("hostile")
    lines = [line for line in out.splitlines() if line.startswith("hostile: ")]
    assert len(lines) == 12, out
    assert all(line.endswith(": met") for line in lines), out
    bombs = [line for line in lines if " bomb, " in line]
    assert len(bombs) == 6 and all("exit 0" in line for line in bombs)
    assert sum("line 2 is longer than 256 MiB" in line for line in bombs) == 2
    assert "30 id-collision warnings" in out
