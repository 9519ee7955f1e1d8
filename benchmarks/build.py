"""Benchmark sitegen build against a naive stdlib baseline and a msgspec reading floor.

Run:  python benchmarks/build.py                  (1,000 jobs x 4 stages x 200 tasks, ~430 MB)
      python benchmarks/build.py --jobs 20 --tasks 10 --small-jobs 200   (a quick smoke run)
      python benchmarks/build.py --work-dir /dev/shm/sitegen-bench    (in memory: no disk cost)
      python benchmarks/build.py --scale-jobs 1000,10000,100000   (also line 8: scale)
      python benchmarks/build.py --scale-jobs 10000,100000 --watch-only   (line 8w: --watch)
      python benchmarks/build.py --dask-only     (line 12: Dask against the local pool)
      python benchmarks/build.py --dask-own-core (line 12c: the same, the scheduler on a core of
                                                  its own)
      python benchmarks/build.py --dask-only --dask-big-jobs 1000   (line 12, 1,000 jobs of 800
                                                  tasks: Dask's fixed start weighs 2 %)

Every number comes from this one run on the same corpus; the last lines print the ratios.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import itertools
import json
import math
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple
from unittest import mock

import msgspec

import sitegen
from sitegen.builder.map.jobs import process_log, root_parents
from sitegen.builder.state.identity import log_digest
from sitegen.builder.state.store import open_published
from sitegen.diagnose import analysis
from sitegen.eventlog.discover import discover
from sitegen.eventlog.payload import Stage, TaskSummary
from sitegen.eventlog.rawlog import gzip_chunks, hold
from sitegen.eventlog.reader import read_log
from sitegen.eventlog.schema import Envelope, TaskEnd
from sitegen.examples.generator import BASE_TIME_MS, JobSpec, write_corpus, write_log
from sitegen.layout import PARTS_DIR
from sitegen.render import pages as pages_module
from sitegen.render.fragments import Fragment
from sitegen.render.jobpage import StageInfo, TaskTable
from sitegen.render.pages import PageRenderer
from sitegen.svg import timeline

# The per-cell template loop the issue measured at about 33k rows/s, for comparison: the
# same columns as the stage page's task table, each cell through Jinja.
JINJA_TASK_ROWS = """\
{% for t, e in rows %}<tr><td>{{ t.id }}</td><td><span class="badge {{ t.status|status_class }}">\
{{ t.status }}</span></td><td>{{ t.partition_id }}</td><td>{{ e.executor_id }}</td>\
<td>{{ t.launch_time|timestamp_ms }}</td><td>{{ t.start_exec_time|timestamp_ms }}</td>\
<td>{{ t.end_exec_time|timestamp_ms }}</td><td>{{ t.exec_duration|duration }}</td>\
<td>{{ t.input_rows|number }}</td><td>{{ t.output_rows|number }}</td></tr>
{% endfor %}"""


def map_context(pages: PageRenderer) -> Any:
    """Return what ``process_log`` takes beside a log: the map step's context, of defaults.

    An older checkout (``PYTHONPATH``, to compare against) takes the renderer itself.
    """
    try:
        from sitegen.builder.map.context import MapContext
    except ImportError:
        return pages
    return MapContext(pages)


def naive(log_dir: Path, out: Path) -> None:
    """The straightforward stdlib reference: json.loads every line, json.dump the API."""
    jobs = []
    for path in sorted(log_dir.glob("*.eventlog")):
        job_end = None
        with open(path, encoding="utf-8") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if record.get("ev") == "JobEnd":
                    job_end = record["data"]
        if job_end is None:
            continue
        job_id = job_end["index"]["job_id"]
        for name, payload in (("", "job"), ("stages", "stages"), ("config", "config")):
            target = out / "api" / "job" / job_id / name
            target.mkdir(parents=True, exist_ok=True)
            with open(target / "index.json", "w", encoding="utf-8") as f:
                json.dump(job_end[payload], f, separators=(",", ":"), ensure_ascii=False)
        jobs.append(job_end["index"])
    jobs.sort(key=lambda j: (-j["start_time"], j["job_id"]))
    (out / "api" / "jobs").mkdir(parents=True, exist_ok=True)
    with open(out / "api" / "jobs" / "index.json", "w", encoding="utf-8") as f:
        json.dump(jobs, f, separators=(",", ":"), ensure_ascii=False)


def floor(log_dir: Path) -> int:
    """Decode just the envelope of every line, one process: the least a reader can do."""
    decoder = msgspec.json.Decoder(Envelope)
    records = 0
    for path in sorted(log_dir.glob("*.eventlog")):
        with open(path, "rb") as f:
            for line in f:
                decoder.decode(line)
                records += 1
    return records


def sitegen_reading(log_dir: Path) -> int:
    """Do what sitegen's map step does before it renders: read, hash and gzip each log."""
    # The rest of the budget that 3/2 allows is what is left for rendering and writing.
    records = 0
    for log in discover(log_dir):
        held = hold(log.path, log.size)
        read = read_log(log.path, held)
        log_digest(log.path, held)
        for _ in gzip_chunks(log.path, held):
            pass
        records += len(read.tasks)
    return records


def map_step_cpu(log_dir: Path, out: Path, count: int) -> dict[str, float]:
    """Return the user CPU ms per job of the map step in one process: as built, and what-if.

    "bare" renders no task table rows and no timeline (empty strings in their place):
    the least the map step could cost if that per-task HTML were free, say compiled.
    "findings" and "trace" are the CPU ms per job spent inside the diagnosis and the trace
    during the "as built" runs, timed around those calls in the same runs (a difference
    of two runs drowns in the noise of a shared machine). User time only: the kernel's
    share is creating files, which swings with the disk's load.
    """
    logs = discover(log_dir)[:count]
    pages = PageRenderer()
    pages.warm()
    step = map_context(pages)
    bare_html = (
        mock.patch.object(TaskTable, "rows", lambda self, number=1: Fragment("")),
        mock.patch.object(timeline, "timeline", lambda *args, **kwargs: ""),
    )
    spent = {"findings": 0.0, "trace": 0.0}

    def timing(name: str, fn: Any) -> Any:
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            started = resource.getrusage(resource.RUSAGE_SELF).ru_utime
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += resource.getrusage(resource.RUSAGE_SELF).ru_utime - started

        return timed_call

    as_built = (
        mock.patch.object(analysis, "diagnose", timing("findings", analysis.diagnose)),
        mock.patch.object(pages_module, "trace", timing("trace", pages_module.trace)),
    )

    def run(patches: tuple[Any, ...]) -> float:
        shutil.rmtree(out, ignore_errors=True)
        for parent in root_parents(pages):
            (out / parent).mkdir(parents=True)
        with contextlib.ExitStack() as stack:
            for patch in patches:
                stack.enter_context(patch)
            started = resource.getrusage(resource.RUSAGE_SELF).ru_utime
            for n, log in enumerate(logs):
                process_log(log, out, out / PARTS_DIR / str(n), step)
            user = resource.getrusage(resource.RUSAGE_SELF).ru_utime - started
        return user * 1000 / len(logs)

    # Alternated, best of three each: the machine's speed drifts from minute to minute.
    best: dict[str, float] = {"as built": float("inf"), "bare": float("inf")}
    for _ in range(3):
        spent.update(findings=0.0, trace=0.0)
        took = run(as_built)
        if took < best["as built"]:
            best["as built"] = took
            best.update({k: v * 1000 / len(logs) for k, v in spent.items()})
        best["bare"] = min(best["bare"], run(bare_html))
    shutil.rmtree(out, ignore_errors=True)
    return best


def task_table(rows: int, jinja_rows: int) -> tuple[float, float]:
    """Time the task rows of one stage of ``rows`` tasks (all its pages): sitegen, then Jinja.

    Returns the seconds sitegen takes for all rows, and the rows per second of the Jinja
    loop, measured on the first ``jinja_rows`` (at 33k rows/s all of them would take long).
    """
    start = 1_767_225_600_000
    tasks = [
        TaskSummary(
            id=n, status="Successful", partition_id=n, launch_time=start + n,
            start_exec_time=start + n + 3, end_exec_time=start + n + 250 + n % 97,
            exec_duration=247 + n % 97, input_rows=8_192 * (1 + n % 13), output_rows=1_000 + n,
        )
        for n in range(rows)
    ]  # fmt: skip
    ends = [
        TaskEnd(
            stage_id=1, task_id=t.id or 0, executor_id=f"executor-{n % 8}", status="Successful",
            start_exec_time=t.start_exec_time or 0,
            end_exec_time=t.end_exec_time or 0,
        )
        for n, t in enumerate(tasks)
    ]  # fmt: skip
    info = StageInfo(Stage(stage_id="1", tasks=tasks), "1", 0, None, ends)
    started = time.perf_counter()
    table = TaskTable(info)  # as a build does: every page of the table
    for number in range(1, table.pages + 1):
        table.rows(number)
    ours = time.perf_counter() - started
    template = PageRenderer().env.from_string(JINJA_TASK_ROWS)
    subset = list(zip(tasks[:jinja_rows], ends[:jinja_rows], strict=True))
    started = time.perf_counter()
    template.render(rows=subset)
    return ours, len(subset) / (time.perf_counter() - started)


def _tree_rss(pid: int) -> int:
    """Return the summed RSS (bytes) of a process and all its descendants."""
    total = 0
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            continue
        children.setdefault(ppid, []).append(int(entry))
    stack = [pid]
    while stack:
        p = stack.pop()
        stack.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


Run = tuple[float, int, str]  # what run_build returns: seconds, peak RSS, its output


def _pinned(cpus: set[int] | None) -> Any:
    """Return a ``preexec_fn`` that keeps a child process on ``cpus`` (None: no pin)."""
    if cpus is None:
        return None
    return lambda: os.sched_setaffinity(0, cpus)


def run_build(
    log_dir: Path | str,
    out: Path | str,
    *extra: str,
    cpus: set[int] | None = None,
    checkout: Path | None = None,
) -> Run:
    """Run `sitegen build` as a subprocess (on ``cpus``, if given); return seconds, peak
    tree RSS and its output. ``checkout``: build with that checkout's sitegen."""
    settle()
    cmd = [
        sys.executable,
        "-m",
        "sitegen",
        "build",
        "--event-log-dir",
        str(log_dir),
        "--output",
        str(out),
        *extra,
    ]
    peak = 0
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    # PYTHONSAFEPATH: `-m` would put the working directory first on the path, so a build run
    # from a checkout imported that checkout's sitegen whatever PYTHONPATH named.
    env = {**os.environ, "PYTHONSAFEPATH": "1"}
    if checkout is not None:
        env["PYTHONPATH"] = str(checkout)
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        preexec_fn=_pinned(cpus),
    )
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss(proc.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    output, _ = proc.communicate()
    seconds = time.perf_counter() - started
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"sitegen build failed:\n{output}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    user = after.ru_utime - before.ru_utime
    # Kernel time: on a slow disk, mostly creating the site's files.
    system = after.ru_stime - before.ru_stime
    first = output.strip().splitlines()[0]
    return (
        seconds,
        peak,
        f"CPU {user + system:.2f} s in all processes ({user:.2f} user, {system:.2f} kernel); "
        f"{first}",
    )


def _write_part(args: tuple[Path, int, int, int, int, int]) -> None:
    directory, first, count, stages, tasks, seed = args
    part = directory / f".part-{first}"
    write_corpus(part, jobs=count, stages=stages, tasks_per_stage=tasks, seed=seed + first)
    for path in part.iterdir():
        path.rename(directory / path.name)
    part.rmdir()


def corpus(directory: Path, jobs: int, stages: int, tasks: int) -> Path:
    """Generate (once, cached) a corpus of completed logs with the seeded generator."""
    marker = directory / ".complete"
    if marker.exists():
        return directory
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    step = max(1, jobs // 16)
    parts = [
        (directory, first, min(step, jobs - first), stages, tasks, 7)
        for first in range(0, jobs, step)
    ]
    with ProcessPoolExecutor() as pool:
        list(pool.map(_write_part, parts))
    marker.touch()
    return directory


def create_cost(directory: Path, dirs: int = 100, files: int = 10) -> float:
    """Return the microseconds it takes to create one small file or directory here."""
    # A job's files are mostly small and new: on some disks making them costs more than
    # everything else in the build, so the script says what that costs where it runs.
    probe = directory / ".create-probe"
    shutil.rmtree(probe, ignore_errors=True)
    probe.mkdir(parents=True)
    settle()
    started = time.perf_counter()
    for d in range(dirs):
        sub = probe / str(d)
        sub.mkdir()
        for f in range(files):
            (sub / f"f{f}").write_bytes(b"x" * 1000)
    seconds = time.perf_counter() - started
    shutil.rmtree(probe)
    return seconds / (dirs * (files + 1)) * 1e6


def settle() -> None:
    """Flush dirty pages first, so no step pays for the writes of the one before it."""
    os.sync()
    time.sleep(1)


def timed(fn, *args):  # type: ignore[no-untyped-def]
    settle()
    started = time.perf_counter()
    fn(*args)
    return time.perf_counter() - started


def add_then_rebuild(logs: Path, site: Path, stages: int, tasks: int) -> tuple[Run, Run]:
    """Add one new log and build (incremental), build again (no-op), then remove the log."""
    extra = JobSpec(
        job_id="bench-new-job", job_name="tpch-q99", stages=stages, tasks_per_stage=tasks
    )
    added = write_log(logs, extra, seed=1)
    try:
        return run_build(logs, site), run_build(logs, site)
    finally:
        added.unlink()


def _json_build(logs: Path, site: Path, *extra: str) -> tuple[float, int, dict[str, Any]]:
    """Run a build with ``--format json``: seconds, peak tree RSS and its summary."""
    seconds, peak, line = run_build(logs, site, "--format", "json", *extra)
    cpu, summary = line.split("; ", 1)
    # CPU of all its processes: on a loaded machine wall time says more about the load.
    return seconds, peak, {**json.loads(summary), "cpu": float(cpu.split()[1])}


class Change:
    """What one incremental build did: seconds, peak RSS, files and bytes it wrote."""

    def __init__(self, site: Path, run: tuple[float, int, dict[str, Any]]) -> None:
        self.seconds, self.rss, summary = run
        self.cpu = summary["cpu"]
        self.files = summary["files_written"]
        # /api/jobs aside: Ballista's contract makes it one array of every job.
        self.bytes = summary["bytes_written"] - (site / "api" / "jobs").stat().st_size

    def text(self) -> str:
        """Return the figures as the scale line prints them."""
        return (
            f"{self.seconds:.2f} s (CPU {self.cpu:.2f} s), {self.files} files, "
            f"{self.bytes / 1e3:.0f} kB, {self.rss / 2**20:.0f} MB"
        )


def wait_published(
    proc: subprocess.Popen[str], target: Path, job_id: str, since: float, step: float = 0.002
) -> None:
    """Wait until the watcher ``proc`` has published ``target``: at most 120 s from ``since``."""
    while not target.exists():
        if proc.poll() is not None:
            raise SystemExit(f"the watcher ended: {proc.stderr.read() if proc.stderr else ''}")
        if time.perf_counter() - since > 120:
            raise SystemExit(f"{job_id} not published in 120 s")
        time.sleep(step)


def watch_latency(logs: Path, site: Path, count: int = 20) -> tuple[list[float], int, int]:
    """Run ``sitegen build --watch`` on a built site; time ``count`` logs renamed into place.

    Each log is written as ``<id>.eventlog.running`` (whole), then renamed to ``<id>.eventlog``,
    as Ballista does when a job ends; the clock stops when its ``/api/job/<id>`` file is in
    the output. Returns the latencies, and the watcher's RSS (all its processes) after its
    first publish and after the last.
    """
    settle()
    cmd = [sys.executable, "-m", "sitegen", "build", "--event-log-dir", str(logs)]
    cmd += ["--output", str(site), "--watch", "--format", "json", "--quiet"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    latencies: list[float] = []
    added: list[Path] = []
    rss_first = rss_last = 0
    try:
        time.sleep(3)  # the first build: nothing to do, but the watcher must be watching
        for n in range(count):
            job_id = f"bench-watch-{n}"
            start = BASE_TIME_MS + 10**9 + n * 60_000
            spec = JobSpec(job_id, "tpch-q98", stages=2, tasks_per_stage=10, start_ms=start)
            staging = logs.parent / f"{job_id}.tmp"
            staging.mkdir(exist_ok=True)
            final = write_log(staging, spec, seed=n + 1)
            running = logs / f"{final.name}.running"
            os.rename(final, running)
            staging.rmdir()
            time.sleep(0.2)
            target = site / "api" / "job" / job_id / "index.json"
            began = time.perf_counter()
            os.rename(running, logs / final.name)
            added.append(logs / final.name)
            wait_published(proc, target, job_id, began)
            latencies.append(time.perf_counter() - began)
            if n == 0:
                rss_first = _tree_rss(proc.pid)
            time.sleep(0.5)  # one publish a log, not one for several
        rss_last = _tree_rss(proc.pid)
    finally:
        proc.terminate()
        proc.wait(60)
        for path in added:
            path.unlink()
    return latencies, rss_first, rss_last


def event_steps(logs: Path, site: Path) -> tuple[int, int] | None:
    """Count the SQLite steps a watcher's build takes for one event: a new log, then it gone.

    In this process, as ``--watch`` builds: a first build lists the dirs, a first event (not
    counted: the watcher keeps the logs a build ends with, and a first build with nothing to
    do ended with none), then one build for a log renamed into place and one for its
    removal. Counted: the virtual machine instructions SQLite runs on the state's connection
    (``set_progress_handler`` called at every one) from loading the state to the end of the
    plan: the quick no-op check, the listing diff and the plan (the select, map, reduce and
    publish after it aside). A row a query visits costs a few: a scan of every log's row is
    millions at 100,000. None: this sitegen has no watcher hint (an older one).
    """
    from sitegen.builder import pipeline

    try:
        from sitegen.builder.plan import inputs
        from sitegen.builder.plan.events import Hint
    except ImportError:
        return None
    counted = [0]
    counting = [False]

    def step() -> int:
        if counting[0]:
            counted[0] += 1
        return 0

    # Where the build calls them: the state is loaded with its inputs, the plan in its steps.
    real_load, real_plan = inputs.load, pipeline.plan_changes

    def load(*args: Any) -> Any:
        state = real_load(*args)
        if state is not None:
            state.db.set_progress_handler(step, 1)
        return state

    def plan(run: Any) -> None:
        real_plan(run)
        counting[0] = False

    options = pipeline.BuildOptions(logs, site, workers=1)
    hint = Hint(None)

    def renamed_into_place(n: int) -> Path:
        spec = JobSpec(f"bench-event-{n}", "tpch-q98", 2, 10, start_ms=BASE_TIME_MS + n)
        final = write_log(logs, spec, seed=n + 1)
        return final.rename(logs / f"{final.name}.running").rename(final)

    def event(*paths: Path) -> int:
        counted[0], counting[0] = 0, True
        report = pipeline.build(options, hint=Hint(frozenset(map(str, paths)), hint.kept))
        assert report.listed_from_events, "the event's build listed the dir"
        return counted[0]

    steps: list[int] = []
    with (
        mock.patch.object(inputs, "load", load),
        mock.patch.object(pipeline, "plan_changes", plan),
    ):
        pipeline.build(options, hint=hint)  # lists: the watcher's first build
        first = renamed_into_place(0)
        try:
            # The first event reads the state's logs (a first build that had nothing to do
            # kept none); the watcher keeps them from then on.
            event(first, first.with_name(f"{first.name}.running"))
            second = renamed_into_place(1)
            steps.append(event(second, second.with_name(f"{second.name}.running")))
            second.unlink()
            steps.append(event(second))
        finally:
            first.unlink()
            event(first)
    return steps[0], steps[1]


def watch_only(work: Path, sizes: list[int], runs: int = 3) -> None:
    """Time ``--watch`` alone at each size: SQLite steps of one event, rename-to-published p95.

    The corpus and its site as the scale line makes them (a site kept from an earlier run
    is caught up, not built again); the p95 of 20 logs is taken ``runs`` times, the median
    printed.
    """
    for jobs in sizes:
        logs = corpus(work / f"corpus-{jobs}x2x10", jobs, 2, 10)
        site = work / "out" / f"site-scale-{jobs}"
        _json_build(logs, site)
        steps = event_steps(logs, site)
        p95s, p50s = [], []
        for _ in range(runs):
            latencies, _, _ = watch_latency(logs, site)
            p95s.append(percentile(latencies, 0.95))
            p50s.append(percentile(latencies, 0.5))
            _json_build(logs, site)  # the watched logs are gone again: catch up
        counted = (
            "n/a (no watcher hint here)"
            if steps is None
            else f"{steps[0]:,} for a log renamed into place, {steps[1]:,} for one removed"
        )
        print(
            f"8w at {jobs:,} small jobs, --watch: SQLite steps to plan one event {counted}; "
            f"rename to published p50 {statistics.median(p50s):.2f} s, p95 "
            f"{statistics.median(p95s):.2f} s (medians of {runs} runs of 20 logs: "
            f"{', '.join(f'{p:.2f}' for p in p95s)})"
        )


def percentile(values: list[float], share: float) -> float:
    """Return the nearest-rank percentile of ``values``."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(len(ordered) * share) - 1)] if ordered else 0.0


def scale_run(work: Path, jobs: int, keep: bool = False) -> dict[str, Any]:
    """Build ``jobs`` small jobs, then time each kind of change and a no-op (line 8).

    ``keep``: start from the site an earlier run left at this size (its build is then an
    incremental one that catches up, not the full build, and is printed as such).
    """
    logs = corpus(work / f"corpus-{jobs}x2x10", jobs, 2, 10)
    site = work / "out" / f"site-scale-{jobs}"
    if not keep:
        shutil.rmtree(site, ignore_errors=True)
    full, rss_full, built = _json_build(logs, site)
    # The corpus's 16 parts each start at the base time, one job a minute.
    span = -(-jobs // 16) * 60_000
    middle = BASE_TIME_MS + max(1, jobs // 32) * 60_000 + 123
    newest = BASE_TIME_MS + span + 60_000
    added: list[Path] = []
    changes: dict[str, Change] = {}
    try:

        def add(job_id: str, start_ms: int, name: str = "tpch-q99", seed: int = 0) -> Path:
            spec = JobSpec(job_id, name, stages=2, tasks_per_stage=10, start_ms=start_ms)
            added.append(write_log(logs, spec, seed=seed or len(added)))
            return added[-1]

        # The same removal and the same drop at every size: a run in the middle of its name's
        # five runs (alike, so no regression comes or goes), and the oldest of three runs.
        # A corpus job's neighbours differ with the corpus, and so would the pages they change.
        recurring = [
            add(f"bench-rec-{k}", middle + 3_000 + k * 60_000, "bench-recurring", 5)
            for k in range(5)
        ]
        for k, start in enumerate((BASE_TIME_MS - 3_600_000, middle + 5_000, newest - 30_000)):
            add(f"bench-old-{k}", start, "bench-oldest", 6)
        _json_build(logs, site)
        add("bench-new", newest)
        changes["new"] = Change(site, _json_build(logs, site))
        recurring[2].unlink()
        added.remove(recurring[2])
        changes["removed"] = Change(site, _json_build(logs, site))
        add("bench-middle", middle)
        changes["inserted"] = Change(site, _json_build(logs, site))
        # All of them: the next new job drops the oldest (bench-old-0).
        limit = ("--max-jobs", str(jobs + len(added)))
        _json_build(logs, site, *limit)
        add("bench-newer", newest + 60_000)
        changes["max-jobs"] = Change(site, _json_build(logs, site, *limit))
        noop, rss_noop, idle = _json_build(logs, site, *limit, "--verify-logs")
        # Trusting finished logs (the default): the first build records the listing, the next
        # trusts it.
        _json_build(logs, site, *limit)
        trusted, rss_trusted, idle_trusted = _json_build(logs, site, *limit)
    finally:
        for path in added:
            path.unlink()
    # The watcher: a log renamed from .running into place, until its /api file is published.
    latencies, rss_watch_first, rss_watch_last = watch_latency(logs, site)
    build_site = _json_build(logs, site)  # the watched logs are gone again: catch up
    del build_site
    detail = "; ".join(f"{name} {c.text()}" for name, c in changes.items())
    executors, cells, pooling = fleet_cost(site)
    print(
        f"8 fleet at {jobs:,} small jobs: judging {executors} executors from {cells:,} hourly "
        f"cells took {pooling * 1_000:.1f} ms of each build's reduce (fleet.json and the "
        "Executors page are among the files every change rewrites)"
    )
    kind = "catch-up build of a kept site" if keep else "build"
    print(
        f"8 at {jobs:,} small jobs: {kind} {full:.1f} s (CPU {built['cpu']:.1f} s, "
        f"{rss_full / 2**20:.0f} MB, site {built['site_bytes'] / 1e6:.0f} MB); {detail}; "
        f"no-op --verify-logs {noop:.2f} s (CPU {idle['cpu']:.2f} s, {rss_noop / 2**20:.0f} MB); "
        f"no-op (trusting finished logs) {trusted:.2f} s (CPU {idle_trusted['cpu']:.2f} s, "
        f"{rss_trusted / 2**20:.0f} MB); --watch: rename to published p50 "
        f"{percentile(latencies, 0.5):.2f} s, p95 {percentile(latencies, 0.95):.2f} s, max "
        f"{max(latencies):.2f} s over {len(latencies)} logs, RSS {rss_watch_first / 2**20:.0f} MB "
        f"after the first publish, {rss_watch_last / 2**20:.0f} MB after the last"
    )
    return {
        "jobs": jobs,
        "full": full,
        "rss": rss_full,
        "noop": noop,
        "trusted": trusted,
        "changes": changes,
        "watch_p95": percentile(latencies, 0.95),
    }


def fleet_cost(site: Path) -> tuple[int, int, float]:
    """Time the fleet verdict as the reduce judges it: executors, their cells, seconds."""
    from sitegen.builder.reduce.site import judge_fleet

    state = open_published(site)
    assert state is not None
    try:
        began = time.perf_counter()
        fleet = judge_fleet(state)
        took = time.perf_counter() - began
    finally:
        state.close()
    return len(fleet), sum(len(e.cells) for e in fleet), took


def scale(work: Path, sizes: list[int], keep: bool = False) -> None:
    """Run the scale line at each size, then print how each figure grows between sizes."""
    runs = [scale_run(work, jobs, keep) for jobs in sizes]
    for small, big in itertools.pairwise(runs):
        worst = max(big["changes"].values(), key=lambda c: c.seconds)
        files = {name: c.files for name, c in big["changes"].items()}
        same = all(files[n] == small["changes"][n].files for n in files)
        print(
            f"8 growth {small['jobs']:,} -> {big['jobs']:,} jobs "
            f"({big['jobs'] / small['jobs']:.0f}x): build {big['full'] / small['full']:.2f}x, "
            f"peak RSS {big['rss'] / small['rss']:.2f}x, no-op {big['noop'] / small['noop']:.2f}x "
            f"(trusting finished logs {big['trusted'] / small['trusted']:.2f}x), watch p95 "
            f"{small['watch_p95']:.2f} -> {big['watch_p95']:.2f} s, "
            f"slowest change {worst.seconds:.2f} s; files rewritten per change "
            f"{'the same' if same else 'NOT the same'} ({files})"
        )


def trend_cost(site: Path, workers_dir: Path) -> tuple[int, float, float]:
    """Time the reduce step's trend work on a built site's summaries: analysis, then pages."""
    from sitegen.diagnose import failures, insights, recurring
    from sitegen.publish.writer import SiteWriter
    from sitegen.render import trend_pages

    state = open_published(site)
    assert state is not None
    try:
        jobs = list(state.newest())
    finally:
        state.close()
    started = time.perf_counter()
    found = recurring.trends(jobs)
    by_id = {j.job_id: j for j in jobs}
    recurring.run_contexts(found, by_id)
    failures.failure_groups(jobs)
    insights.worst_jobs(jobs, recurring.all_regressions(jobs))
    insights.flagged_executors(jobs)
    analysis = time.perf_counter() - started
    shutil.rmtree(workers_dir, ignore_errors=True)
    pages = PageRenderer()
    started = time.perf_counter()
    writer = SiteWriter(workers_dir, fresh=True)
    trend_pages.write_names(pages, writer, [trend_pages.name_record(t) for t in found])
    for trend in found:
        trend_pages.write_name_page(pages, writer, trend, by_id)
    trend_pages.write_failures(pages, writer, failures.failure_groups(jobs), by_id)
    regressed = recurring.all_regressions(jobs)
    worst, nodes = insights.worst_jobs(jobs, regressed), insights.flagged_executors(jobs)
    flagged = [(n.executor_id, n.count) for n in nodes]
    trend_pages.write_insights(pages, writer, worst, nodes[: insights.NODES_DETAILED], flagged)
    return len(jobs), analysis, time.perf_counter() - started


def storage_and_dask(work: Path, jobs: int) -> None:
    """Lines 10 and 11: a build from and to object storage (moto's S3 server on loopback)
    against the same from disk, and the map step on 2 Dask workers against the local pool."""
    import logging

    import fsspec
    from distributed import LocalCluster
    from moto.server import ThreadedMotoServer

    logs = corpus(work / f"corpus-{jobs}x2x10", jobs, 2, 10)
    out = work / "out-storage"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    t_disk, _, _ = run_build(logs, out / "disk", "--workers", "2")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    os.environ.update(
        AWS_ENDPOINT_URL=f"http://{host}:{port}",
        AWS_ACCESS_KEY_ID="bench",
        AWS_SECRET_ACCESS_KEY="bench",
        AWS_DEFAULT_REGION="us-east-1",
        XDG_CACHE_HOME=str(out / "cache"),
    )
    try:
        fs = fsspec.filesystem("s3")
        fs.mkdir("bench")
        fs.put([str(p) for p in sorted(logs.glob("*.eventlog"))], "bench/logs/")
        t_s3, _, s3_line = run_build("s3://bench/logs/", "s3://bench/site/", "--workers", "2")
        write_corpus(out / "extra", jobs=1, stages=2, tasks_per_stage=10, seed=99)
        new = next((out / "extra").glob("*.eventlog"))
        fs.put_file(str(new), f"bench/logs/zz-{new.name}")
        t_s3_incr, _, incr_line = run_build(
            "s3://bench/logs/", "s3://bench/site/", "--workers", "2", "--format", "json"
        )
        incr = json.loads(incr_line[incr_line.index("{") :])
        copy = next((out / "cache/sitegen/sites").glob("*/site"))
        copy_bytes = sum(p.stat().st_size for p in copy.rglob("*") if p.is_file())
        # The same to another prefix, mapped on a Dask LocalCluster (its workers reach the
        # local copy and put the new jobs in the bucket themselves).
        with LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster:
            dask = ("--dask-scheduler", cluster.scheduler_address, "--format", "json")
            t_dask_s3, _, line = run_build("s3://bench/logs/", "s3://bench/dask-site/", *dask)
            first = json.loads(line[line.index("{") :])
            write_corpus(out / "extra2", jobs=1, stages=2, tasks_per_stage=10, seed=98)
            other = next((out / "extra2").glob("*.eventlog"))
            fs.put_file(str(other), f"bench/logs/zz2-{other.name}")
            t_dask_incr, _, line = run_build("s3://bench/logs/", "s3://bench/dask-site/", *dask)
            second = json.loads(line[line.index("{") :])
    finally:
        server.stop()
    print(
        f"10 object storage, {jobs:,} small jobs (moto's S3 server on loopback, in this "
        f"process): disk to disk {t_disk:.2f} s; s3 to s3 {t_s3:.2f} s "
        f"({t_s3 / t_disk:.2f}x) [{s3_line}]; one new log s3 to s3 {t_s3_incr:.2f} s, "
        f"{incr['objects_uploaded']} objects uploaded, {incr['objects_hashed_bytes'] / 1e3:.0f} kB "
        f"of the local copy's {copy_bytes / 1e6:.1f} MB read and hashed (phases "
        f"{incr['phases']})"
    )
    print(
        f"10 Dask (LocalCluster of 2) s3 to s3: {t_dask_s3:.2f} s, the workers put up "
        f"{first['objects_uploaded_by_workers']} objects (the jobs), the command "
        f"{first['objects_uploaded']} (listings and site-wide files); one new log "
        f"{t_dask_incr:.2f} s: workers {second['objects_uploaded_by_workers']}, command "
        f"{second['objects_uploaded']}"
    )
    site_bytes = sum(p.stat().st_size for p in (out / "disk").rglob("*") if p.is_file())
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        t_dask, _, dask_line = run_build(
            logs, out / "dask", "--dask-scheduler", cluster.scheduler_address
        )
    t_pool, _, pool_line = run_build(logs, out / "pool", "--workers", "2")
    t_one, _, _ = run_build(logs, out / "one", "--workers", "1")
    print(
        f"11 map step on 2 Dask workers (LocalCluster, 2 processes), {jobs:,} small jobs: "
        f"{t_dask:.2f} s [{dask_line}]; local pool of 2: {t_pool:.2f} s [{pool_line}]; "
        f"1 process: {t_one:.2f} s; per job {t_one * 1000 / jobs:.1f} ms in 1 process, "
        f"{site_bytes / jobs / 1000:.1f} kB of site returned"
    )


def _cpu_seconds(pids: list[int]) -> float:
    """Return the user and kernel CPU seconds the processes used so far (from /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / ticks


# Dask's settings that docs/scale.md recommends for a cluster that builds sites: no statistical
# profiler (it samples every thread each 10 ms) and slower health checks. Idle, a default
# worker spends 6 % of a core on them; with these 0.5 %.
QUIET_DASK = {
    "DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED": "False",
    "DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL": "1s",
    "DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL": "2s",
    "DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL": "1s",
}


def _separate_cluster(
    work: Path,
    workers: int,
    settings: dict[str, str],
    pin: tuple[set[int], set[int]] | None = None,
) -> tuple[str, list[subprocess.Popen[bytes]]]:
    """Start `dask scheduler` and single-thread `dask worker`s as processes of their own.

    ``pin``: the CPUs of the scheduler, and of the workers (None: anywhere).
    """
    scheduler_cpus, worker_cpus = pin if pin is not None else (None, None)
    from distributed import Client

    scheduler_file = work / "scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    quiet: dict[str, Any] = {
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "env": {**os.environ, **settings},
    }
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "distributed.cli.dask_scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(scheduler_file),
            ],
            **quiet,
            preexec_fn=_pinned(scheduler_cpus),
        )
    ]
    while True:  # the scheduler creates its file before it writes it
        try:
            address = json.loads(scheduler_file.read_text())["address"]
            break
        except (OSError, ValueError):
            time.sleep(0.1)
    for _ in range(workers):
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "distributed.cli.dask_worker",
                    "--nthreads",
                    "1",
                    "--no-nanny",
                    "--no-dashboard",
                    "--scheduler-file",
                    str(scheduler_file),
                ],
                **quiet,
                preexec_fn=_pinned(worker_cpus),
            )
        )
    with Client(address) as client:
        client.wait_for_workers(workers, timeout=120)
    return address, procs


class Timed(NamedTuple):
    """One build timed for line 12."""

    seconds: float  # wall
    command: float  # the command's CPU, all of it
    workers: float  # the given processes' CPU (Dask's workers)
    after_map: float  # the wall seconds of the steps after the map (the build's phase timer)
    command_map: float  # the command's CPU in the map step (its own phase timer)


def _timed_build(
    logs: Path, out: Path, pids: list[int], *extra: str, cpus: set[int] | None = None
) -> Timed:
    """Build afresh (the command on ``cpus``, if given) and time it (``Timed``)."""
    shutil.rmtree(out, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    workers_before = _cpu_seconds(pids)
    seconds, _, line = run_build(logs, out, *extra, "--format", "json", cpus=cpus)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    command = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    summary = json.loads(line[line.index("{") :])
    after_map = sum(t for name, t in summary["phases"].items() if name != "map")
    return Timed(
        seconds,
        command,
        _cpu_seconds(pids) - workers_before,
        after_map,
        summary["phases_cpu"]["map"],
    )


def _ratio_lines(
    label: str,
    workers: int,
    work: Path,
    one: Path,
    out: Path,
    pids: list[int],
    dask: tuple[str, ...],
    reps: int,
    cpus: set[int] | None = None,
    big_jobs: int = 200,
) -> float:
    """Print the wall time of Dask's builds against the local build's, of ``workers`` each,
    small jobs and ``big_jobs`` 800-task ones (``one``: the corpus of one log): medians of ``reps`` alternated runs (Dask's
    command on ``cpus``, if given); then the ratio again with Dask's fixed start taken off,
    which a larger corpus (or ``--watch``, which pays it once) spreads over more jobs. Return
    the fastest Dask build of one log."""
    pool_of = ("--workers", str(workers))

    def alternated(logs: Path) -> tuple[list[float], list[float]]:
        """Return the sorted wall times of ``reps`` local and Dask builds of ``logs``, taken
        in turn, so that a drift of the machine's speed hits both."""
        pool, on_dask = [], []
        for _ in range(reps):
            pool.append(_timed_build(logs, out / "pool", [], *pool_of).seconds)
            on_dask.append(_timed_build(logs, out / "dask", pids, *dask, cpus=cpus).seconds)
        return sorted(pool), sorted(on_dask)

    # What a Dask build of one log costs more than a local one, whatever the corpus:
    # importing ``distributed``, connecting, the probe, closing.
    one_local, one_dask = alternated(one)
    local_one, dask_one = statistics.median(one_local), statistics.median(one_dask)
    fixed = dask_one - local_one
    print(
        f"{label} one log: Dask {dask_one:.2f} s, local {local_one:.2f} s: "
        f"Dask's fixed start {fixed:.2f} s a build",
        flush=True,
    )
    small = corpus(work / "corpus-1000x2x10", 1000, 2, 10)
    big = corpus(work / f"corpus-{big_jobs}x1x800", big_jobs, 1, 800)
    # One worker maps in the command itself: no pool, no pipe.
    baseline = "one process" if workers == 1 else f"local pool of {workers}"
    for name, logs in (
        ("1,000 small jobs (2 x 10 tasks)", small),
        (f"{big_jobs:,} jobs x 800 tasks", big),
    ):
        pool, on_dask = alternated(logs)
        p, d = statistics.median(pool), statistics.median(on_dask)
        print(
            f"{label} {name}: Dask of {workers} {d:.2f} s, {baseline} {p:.2f} s: "
            f"{d / p:.2f}x, {(d - fixed) / p:.2f}x without the fixed start (runs: Dask "
            f"{', '.join(f'{t:.2f}' for t in on_dask)}; local {', '.join(f'{t:.2f}' for t in pool)})",
            flush=True,
        )
    return one_dask[0]  # the fastest: the model's T_start


def dask_own_core(work: Path, big_jobs: int, reps: int = 5) -> None:
    """Line 12c: one Dask worker on a core of its own, the scheduler and the command on the
    other, against one process (``--workers 1`` maps in the command, which then has a core to
    itself): what is left of line 12 where the scheduler and the command do not share the
    workers' cores, as on a cluster. With Dask's default settings, then (12cq) quiet ones."""
    if len(os.sched_getaffinity(0)) < 2:
        raise SystemExit("line 12c needs two CPUs")
    first, second, *_ = sorted(os.sched_getaffinity(0))
    one = corpus(work / "corpus-1x2x10", 1, 2, 10)
    out = work / "out-dask"
    for label, settings in (("12c", {}), ("12cq", QUIET_DASK)):
        address, procs = _separate_cluster(work, 1, settings, pin=({first}, {second}))
        pids = [p.pid for p in procs[1:]]
        dask = ("--dask-scheduler", address)
        try:
            _timed_build(one, out / "dask", pids, *dask, cpus={first})
            _ratio_lines(label, 1, work, one, out, pids, dask, reps, {first}, big_jobs)
        finally:
            for proc in procs:
                proc.kill()
                proc.wait()


def dask_scaling(work: Path, big_jobs: int, reps: int = 5) -> None:
    """Line 12: the Dask map step against the local pool, with Dask's default settings, then
    (12q) with those docs/scale.md recommends."""
    for label, settings in (("12", {}), ("12q", QUIET_DASK)):
        dask_line(work, label, settings, big_jobs, reps)


def dask_line(work: Path, label: str, settings: dict[str, str], big_jobs: int, reps: int) -> None:
    """Run line 12: the Dask map step (a scheduler and 2 single-thread workers, separate
    processes, started with ``settings`` in their environment) against the local pool of 2,
    median of ``reps`` alternated runs; the command's and workers' CPU per job."""
    small = corpus(work / "corpus-1000x2x10", 1000, 2, 10)
    half = corpus(work / "corpus-500x2x10", 500, 2, 10)
    one = corpus(work / "corpus-1x2x10", 1, 2, 10)
    out = work / "out-dask"
    address, procs = _separate_cluster(work, 2, settings)
    pids = [p.pid for p in procs[1:]]
    dask = ("--dask-scheduler", address)
    try:
        # The workers import sitegen at their first task: not a cost of the runs compared.
        _timed_build(one, out / "dask", pids, *dask)
        t_start = _ratio_lines(label, 2, work, one, out, pids, dask, reps, big_jobs=big_jobs)
        # Back-to-back pairs of 500 and 1,000 jobs, each pair's slope: a drift of the
        # machine's speed between pairs does not enter a slope.
        pairs = [
            (
                _timed_build(half, out / "dask", pids, *dask),
                _timed_build(small, out / "dask", pids, *dask),
            )
            for _ in range(reps)
        ]
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()

    def slope(figure: str) -> float:
        """Return the median over the pairs of ``figure``'s growth per job, 500 -> 1,000."""
        grown: float = statistics.median(
            (getattr(full, figure) - getattr(half, figure)) / 500 for half, full in pairs
        )
        return grown

    # The command's CPU per job: all of it (the definition), and in the map step alone
    # (the model's c_c: what bounds the map's pace; the rest is the reduce's, in T_reduce).
    c_whole, c_c, c_w = slope("command"), slope("command_map"), slope("workers")
    # T_reduce from the build's own phase timer (the steps after the map), as a fixed part and
    # a part per job, not a residual of the wall time.
    per_job = max(0.0, slope("after_map"))
    t_reduce = statistics.median(full.after_map for _, full in pairs)
    at_half = statistics.median(half.after_map for half, _ in pairs)
    fixed = max(0.0, t_reduce - 1000 * per_job)
    jobs, workers = 100_000, 16
    scaled_reduce = fixed + per_job * jobs
    predicted = t_start + scaled_reduce + jobs * max(c_w / workers, c_c)
    alone = t_start + scaled_reduce + jobs * c_w
    print(
        f"{label} model: the command's CPU per job (slope 500 -> 1,000 small jobs) "
        f"{c_whole * 1000:.2f} ms, of it in the map step (c_c) {c_c * 1000:.2f} ms "
        f"(target <= 0.5); c_w (the workers' CPU per job) {c_w * 1000:.2f} ms; "
        f"T_start (a Dask build of one log) {t_start:.2f} s; T_reduce (the build's phases after "
        f"the map) {t_reduce:.2f} s at 1,000 jobs, {at_half:.2f} s at 500: {fixed:.2f} s + "
        f"{per_job * 1000:.2f} ms a job; at {jobs:,} jobs on {workers} workers the model predicts "
        f"{predicted:.0f} s against {alone:.0f} s in one process: {alone / predicted:.1f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--stages", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=200, help="tasks per stage")
    parser.add_argument(
        "--small-jobs", type=int, default=10_000, help="jobs in the small-job corpus (2 x 10)"
    )
    parser.add_argument(
        "--scale-jobs",
        default="",
        help="also build this many small jobs (a comma list: 1000,10000,100000) and time a new, "
        "a removed, an inserted log, one under --max-jobs, and a no-op (line 8)",
    )
    parser.add_argument(
        "--table-rows", type=int, default=800_000, help="tasks in the one-stage task table timed"
    )
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=Path(".bench"),
        help="where the corpora and outputs go (git-ignored; put it on the disk the site lives on)",
    )
    parser.add_argument(
        "--scale-only", action="store_true", help="run only the scale line (8) of --scale-jobs"
    )
    parser.add_argument(
        "--watch-only",
        action="store_true",
        help="run only --watch at each of --scale-jobs: the SQLite steps one event's plan takes "
        "and rename-to-published p95, medians of 3 (line 8w)",
    )
    parser.add_argument(
        "--scale-keep-site",
        action="store_true",
        help="time the changes on the sites an earlier scale run left (no full build)",
    )
    parser.add_argument(
        "--storage-jobs",
        type=int,
        default=0,
        help="also build this many small jobs from and to moto's S3 server, and on 2 Dask "
        "workers (lines 10 and 11; needs sitegen[s3,dask] and moto[server])",
    )
    parser.add_argument(
        "--storage-only", action="store_true", help="run only lines 10 and 11 (--storage-jobs)"
    )
    parser.add_argument(
        "--dask-own-core",
        action="store_true",
        help="run only line 12c: one Dask worker on a core of its own, the scheduler and the "
        "command on another, against one process (needs sitegen[dask], 2 CPUs)",
    )
    parser.add_argument(
        "--dask-only",
        action="store_true",
        help="run only line 12: Dask of 2 separate worker processes against the local pool "
        "(needs sitegen[dask])",
    )
    parser.add_argument(
        "--dask-big-jobs",
        type=int,
        default=200,
        help="lines 12 and 12c: how many 800-task jobs the second corpus holds (Dask's fixed "
        "start weighs less in a larger one)",
    )
    args = parser.parse_args()

    work = args.work_dir
    if args.dask_own_core:
        compileall.compile_dir(Path(sitegen.__file__).parent, quiet=1)
        dask_own_core(work, args.dask_big_jobs)
        return
    if args.dask_only:
        compileall.compile_dir(Path(sitegen.__file__).parent, quiet=1)
        dask_scaling(work, args.dask_big_jobs)
        return
    if args.storage_only:
        compileall.compile_dir(Path(sitegen.__file__).parent, quiet=1)
        storage_and_dask(work, args.storage_jobs or 1000)
        return
    if args.watch_only:
        compileall.compile_dir(Path(sitegen.__file__).parent, quiet=1)
        watch_only(work, [int(n) for n in args.scale_jobs.split(",")])
        return
    if args.scale_only:
        compileall.compile_dir(Path(sitegen.__file__).parent, quiet=1)
        scale(work, [int(n) for n in args.scale_jobs.split(",")], args.scale_keep_site)
        return
    logs = corpus(
        work / f"corpus-{args.jobs}x{args.stages}x{args.tasks}", args.jobs, args.stages, args.tasks
    )
    small = corpus(work / f"corpus-{args.small_jobs}x2x10", args.small_jobs, 2, 10)
    # The issue bounds the small corpus's memory by that of one a tenth its size.
    tenth = max(1, args.small_jobs // 10)
    small_tenth = corpus(work / f"corpus-{tenth}x2x10", tenth, 2, 10)
    size = sum(p.stat().st_size for p in logs.glob("*.eventlog"))
    print(
        f"corpus: {args.jobs} jobs x {args.stages} stages x {args.tasks} tasks, {size / 1e6:.0f} MB"
    )

    out = work / "out"
    print(
        f"disk: creating a small file or directory in {work} takes "
        f"{create_cost(work):.0f} µs (a job writes 17 files in 7 directories)"
    )
    for d in ("naive", "site", "site-small", "site-small-tenth"):
        shutil.rmtree(out / d, ignore_errors=True)
    floor(logs)  # warm the page cache so every contestant reads from memory
    # As `pip install` does: write sitegen's bytecode, so that each timed run imports it
    # instead of compiling every module again (PYTHONDONTWRITEBYTECODE, or an editable
    # checkout never imported before, would leave it to compile on every run).
    compileall.compile_dir(Path(sitegen.__file__).parent, quiet=1)
    t_naive = timed(naive, logs, out / "naive")
    print(f"1 naive (json.loads + json.dump, API JSON only): {t_naive:8.2f} s")
    t_floor = timed(floor, logs)
    print(f"2 floor (msgspec envelope of every line, 1 process): {t_floor:8.2f} s")
    t_read = timed(sitegen_reading, logs)
    workers = os.cpu_count() or 1
    print(
        f"  sitegen's reading alone (read, hash, gzip each log; 1 process): {t_read:.2f} s = "
        f"{t_read / t_floor:.1f}x floor, of the {3 * workers}x floor of CPU that 3/2 <= 3 "
        f"allows on {workers} cores for reading, rendering and writing"
    )
    t_full, rss_full, line = run_build(logs, out / "site")
    print(f"3 sitegen build, from scratch (JSON + HTML): {t_full:8.2f} s   [{line}]")
    (t_incr, _, incr_line), (t_noop, _, noop_line) = add_then_rebuild(
        logs, out / "site", args.stages, args.tasks
    )
    print(f"4 incremental, one new log: {t_incr:8.2f} s   [{incr_line}]")
    print(f"5 no-op, nothing changed: {t_noop:8.2f} s   [{noop_line}]")
    t_python = timed(subprocess.run, [sys.executable, "-c", "pass"])
    print(f"  (a bare `python -c pass` takes {t_python:.2f} s on this machine: part of 4 and 5)")
    t_small, rss_small, line = run_build(small, out / "site-small")
    _, rss_tenth, _ = run_build(small_tenth, out / "site-small-tenth")
    print(
        f"6 peak RSS: {rss_full / 2**20:.0f} MB ({args.jobs}-job corpus), "
        f"{rss_small / 2**20:.0f} MB ({args.small_jobs} small jobs, built in {t_small:.2f} s), "
        f"{rss_tenth / 2**20:.0f} MB ({tenth} small jobs): "
        f"{rss_small / rss_tenth:.2f}x for {args.small_jobs // tenth}x the jobs"
    )
    t_table, jinja_rate = task_table(args.table_rows, min(args.table_rows, 100_000))
    print(
        f"7 task table of {args.table_rows:,} rows: {t_table:.2f} s "
        f"({args.table_rows / t_table / 1000:.0f}k rows/s); a Jinja loop per cell: "
        f"{jinja_rate / 1000:.0f}k rows/s, {args.table_rows / t_table / jinja_rate:.1f}x slower"
    )
    per_log = t_floor * 1000 / args.jobs
    cpu = map_step_cpu(logs, out / "map-step", min(args.jobs, 100))
    as_built, bare = cpu["as built"], cpu["bare"]
    print(
        f"  user CPU per job in 1 process ({min(args.jobs, 100)} logs): map step {as_built:.2f} ms "
        f"({as_built / per_log:.1f}x floor); without task rows and timeline {bare:.2f} ms "
        f"({bare / per_log:.1f}x floor)"
    )
    findings, traced = cpu["findings"], cpu["trace"]
    print(
        f"  findings and trace per job: map step {as_built:.2f} ms, of which findings "
        f"{findings:.2f} ms and trace {traced:.2f} ms: findings {findings / as_built:.1%}, "
        f"trace {traced / as_built:.1%}, together {(findings + traced) / as_built:.1%} of the "
        "map step (target: findings at most 10%)"
    )
    count, analysis, trend_html = trend_cost(out / "site-small", out / "trend-pages")
    print(
        f"9 trends at {count:,} small jobs (reduce step, 1 process): analysis "
        f"{analysis * 1000:.0f} ms, pages and JSON {trend_html * 1000:.0f} ms: "
        f"{(analysis + trend_html) / t_small:.3f} of that build"
    )
    if args.scale_jobs:
        scale(work, [int(n) for n in args.scale_jobs.split(",")])
    if args.storage_jobs:
        storage_and_dask(work, args.storage_jobs)
    print(f"3/1 full build / naive:       {t_full / t_naive:.3f}")
    print(f"3/2 full build / floor:       {t_full / t_floor:.3f}")
    print(f"4/3 incremental / full build: {t_incr / t_full:.3f}")
    print(f"5/3 no-op / full build:       {t_noop / t_full:.3f}")


if __name__ == "__main__":
    main()
