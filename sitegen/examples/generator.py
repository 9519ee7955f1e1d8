"""Generate realistic, deterministic Ballista event logs (seeded) for examples, tests, benchmarks.

The output follows Ballista's v1 schema and serde_json's byte conventions, so a log
written here is indistinguishable in shape from one a scheduler wrote.

Regenerate the bundled examples with ``python -m sitegen.examples.generator``.
"""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import msgspec

# "unrecorded": the job ends, but its log holds no JobEnd (it ended unrecorded).
Outcome = Literal["succeeded", "failed", "cancelled", "running", "unrecorded"]
# How a log counts a stage's rows (Ballista PR #2435, the spec's section 1): "2435", a stage's
# input is what its scans and shuffle readers produced and its output what its writer wrote;
# "before", input rows only the writer's input and output rows every operator's output.
Counting = Literal["2435", "before"]

BASE_TIME_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: fixed so output never depends on "now"
QUERY_NAMES = [f"tpch-q{n}" for n in range(1, 23)]
OPERATORS = [
    ("ProjectionExec", "expr=[l_returnflag@0 as l_returnflag, sum(l_quantity)@1 as sum_qty]"),
    ("AggregateExec", "mode=FinalPartitioned, gby=[l_returnflag@0, l_linestatus@1]"),
    ("FilterExec", "l_shipdate@6 <= 1998-09-02 AND l_discount@2 > 0.05"),
    ("HashJoinExec", "mode=Partitioned, join_type=Inner, on=[(o_orderkey@0, l_orderkey@0)]"),
    ("SortExec", "TopK(fetch=10), expr=[revenue@1 DESC]"),
    ("CoalesceBatchesExec", "target_batch_size=8192"),
    ("RepartitionExec", "partitioning=Hash([o_orderkey@0], 16), input_partitions=4"),
]
ERRORS = [
    "Arrow error: Divide by zero error",
    "Execution error: Failed to fetch partition from executor: connection reset by peer",
    "Resources exhausted: Failed to allocate additional 512.0 MB for HashJoinInput",
]
# How much the planted anomalies stand out (see JobSpec and PLANTED).
STRAGGLER_FACTOR = 15
SKEW_FACTOR = 8
SLOW_EXECUTOR_FACTOR = 3
_encode = msgspec.json.Encoder().encode


def _line(kind: str, data: Any) -> bytes:
    """Encode one record the way Ballista's writer does (compact, UTF-8, newline)."""
    return b'{"ev":"%s","version":1,"data":%s}\n' % (kind.encode(), _encode(data))


def job_id_for(rng: random.Random) -> str:
    """Return a Ballista-style default id: seven random alphanumerics."""
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(7))


def _percentiles(values: list[int]) -> dict[str, int]:
    """Return min/p25/median/p75/max as Ballista's stage summary reports them."""
    s = sorted(values) or [0]

    def pick(q: float) -> int:
        return s[min(len(s) - 1, int(q * (len(s) - 1) + 0.5))]

    return {"min": s[0], "p25": pick(0.25), "median": pick(0.5), "p75": pick(0.75), "max": s[-1]}


@dataclass
class JobSpec:
    """What to generate for one job."""

    job_id: str
    job_name: str
    stages: int = 3
    tasks_per_stage: int = 8
    executors: int = 3
    outcome: Outcome = "succeeded"
    start_ms: int = BASE_TIME_MS
    retries: int = 0
    extra_config: dict[str, str] = field(default_factory=dict)
    # The knobs below plant anomalies; their defaults write the same bytes as before they
    # existed (the bundled examples and the tests' logs must not change).
    # Task times (ms) and input rows are drawn from these ranges.
    spread: tuple[int, int] = (20, 400)
    rows: tuple[int, int] = (10_000, 2_000_000)
    # Task 0 of stage 1 runs 6x longer in every job (the straggler the issue found in tpch-q9).
    stage1_straggler: bool = True
    # Every task time is multiplied by this (a run that regressed).
    scale: float = 1.0
    # (stage, task) that runs STRAGGLER_FACTOR times longer on typical input rows.
    straggler: tuple[int, int] | None = None
    # (stage, task) that reads SKEW_FACTOR times the rows and takes as much longer.
    skewed: tuple[int, int] | None = None
    # An executor whose every task takes SLOW_EXECUTOR_FACTOR times longer (a bad node).
    slow_executor: str | None = None
    # Wait between queued and started (ms); None: a few hundred ms at most.
    queued_ms: int | None = None
    # (stage, ms): nothing runs for ms before this stage starts.
    idle: tuple[int, int] | None = None
    # Error texts of failed attempts, formatted with stage, task, executor and attempt.
    errors: tuple[str, ...] = ()
    # What today's scheduler writes (the spec's section 1): no StageStart or StageEnd records,
    # the stages payload in its hash map's order (not by stage id) with the stages that never
    # started, and a failed job's failing stage still Running in the payload and the DOT (the
    # JobEnd is written before the stage is marked failed), listing the tasks it was running.
    upstream: bool = False
    # A stage an adaptive replan dropped (Ballista #2192): its TaskEnd records are written,
    # but the final stages payload, the DOT and the job's stage counts no longer name it.
    replanned: int | None = None
    # How the rows are counted (``Counting``); None: each task's rows drawn on their own, a
    # stage's input unrelated to what it reads (the bytes written before this knob existed).
    counting: Counting | None = None


def _recount(counting: Counting, read: int | None, ends: list[tuple[dict[str, Any], Any]]) -> int:
    """Count a stage's rows as ``counting`` does; return the rows its writer wrote.

    ``ends`` holds each attempt's TaskEnd metrics and, for a final attempt, its task summary.
    The drawn rows are the rows that flowed; a stage reading others (``read``: what their
    writers wrote) shares those rows among its tasks in proportion to the drawn ones (a
    skewed task stays skewed), each keeping its drawn output ratio.
    """
    finals = [(m, t) for m, t in ends if t is not None and m["input_rows"]]
    if read is not None and finals:
        weights = [m["input_rows"] for m, _ in finals]
        whole, given = sum(weights), 0
        for n, (m, t) in enumerate(finals):
            share = read - given if n + 1 == len(finals) else read * weights[n] // whole
            given += share
            out = share * m["output_rows"] // m["input_rows"]
            for figures in (m, t):
                figures["input_rows"], figures["output_rows"] = share, out
    wrote: int = sum(m["output_rows"] for m, _ in finals)
    if counting == "before":
        # Input rows: the shuffle writer's input only; output rows: the scan or readers',
        # the operator's and the writer's output, summed.
        for m, t in finals:
            flowed_in, flowed_out = m["input_rows"], m["output_rows"]
            for figures in (m, t):
                figures["input_rows"] = flowed_out
                figures["output_rows"] = flowed_in + 2 * flowed_out
    return wrote


def _stage_number(summary: dict[str, Any]) -> int:
    """Return a stage summary's stage id as a number (the payload writes it as a string)."""
    return int(summary["stage_id"])


def _parents(stage: int) -> list[int]:
    """Return the stages a stage reads from: a chain, with a join into stage 3."""
    if stage == 1:
        return []
    if stage == 3:
        return [1, 2]
    if stage == 2:
        return []
    return [stage - 1]


def _dot(spec: JobSpec, statuses: dict[int, str], rng: random.Random) -> str:
    """Write the stage DAG the way Ballista's ExecutionGraphDot does."""
    out = ["digraph G {"]
    links = []
    kept = [sid for sid in range(1, spec.stages + 1) if sid != spec.replanned]
    for cluster, sid in enumerate(kept):
        out.append(f"\tsubgraph cluster{cluster} {{")
        out.append(f'\t\tlabel = "Stage {sid} [{statuses[sid]}]";')
        writer = f"stage_{sid}_0"
        parts = spec.tasks_per_stage
        out.append(f'\t\t{writer} [shape=box, label="ShuffleWriterExec\n{parts} partitions"]')
        node = writer
        op, detail = OPERATORS[(sid + len(spec.job_name)) % len(OPERATORS)]
        child = f"{node}_0"
        out.append(f'\t\t{child} [shape=box, label="{op}\n{detail}"]')
        out.append(f"\t\t{child} -> {node}")
        for j, parent in enumerate(p for p in _parents(sid) if p != spec.replanned):
            reader = f"{child}_{j}"
            out.append(f'\t\t{reader} [shape=box, label="ShuffleReaderExec\nstage={parent}"]')
            out.append(f"\t\t{reader} -> {child}")
            links.append(f"stage_{parent}_0 -> {reader}")
        if not _parents(sid):
            scan = f"{child}_0"
            out.append(f'\t\t{scan} [shape=box, label="DataSourceExec\nfile_groups={{4 groups}}"]')
            out.append(f"\t\t{scan} -> {child}")
        out.append("\t}")
    out.extend(f"\t{link}" for link in sorted(links))
    out.append("}")
    return "\n".join(out) + "\n"


def generate_job(spec: JobSpec, seed: int) -> Iterator[bytes]:
    """Yield the lines of one job's event log."""
    rng = random.Random(seed)
    executors = [f"executor-{i + 1}" for i in range(spec.executors)]
    logical = f"Sort: revenue DESC\n  Projection: {spec.job_name}\n    TableScan: lineitem"
    physical = "SortPreservingMergeExec: [revenue@1 DESC]\n  " + OPERATORS[0][0]
    queued = spec.start_ms - rng.randint(5, 400)
    if spec.queued_ms is not None:
        queued = spec.start_ms - spec.queued_ms
    yield _line(
        "JobStart",
        {
            "job_id": spec.job_id,
            "job_name": spec.job_name,
            "queued_at": queued,
            "submitted_at": spec.start_ms,
            "logical_plan": logical,
            "physical_plan": physical,
        },
    )
    now = spec.start_ms + rng.randint(2, 20)
    stage_summaries: list[dict[str, Any]] = []
    statuses: dict[int, str] = {}
    total_out = 0
    wrote: dict[int, int] = {}  # the rows each stage's writer wrote (with ``counting``)
    failed_error: str | None = None
    # A failed job fails in its last stage; a cancelled one stops half-way.
    last_stage = spec.stages
    if spec.outcome == "cancelled":
        last_stage = max(1, spec.stages // 2)
    if spec.outcome == "running":
        last_stage = max(1, spec.stages - 1)
    for sid in range(1, last_stage + 1):
        if spec.idle is not None and spec.idle[0] == sid:
            now += spec.idle[1]
        if not spec.upstream:
            yield _line("StageStart", {"stage_id": sid, "partitions": spec.tasks_per_stage})
        fail_here = spec.outcome == "failed" and sid == spec.stages
        tasks: list[dict[str, Any]] = []
        stage_end = now
        durations: list[int] = []
        inputs: list[int] = []
        # Each attempt's TaskEnd, and the final attempt's task summary: written once the
        # stage's rows are counted (``_recount``).
        ends: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        for tid in range(spec.tasks_per_stage):
            attempts = 1 + (1 if rng.random() < spec.retries / max(1, spec.tasks_per_stage) else 0)
            for attempt in range(attempts):
                executor = executors[(tid + attempt + sid) % len(executors)]
                launch = now + rng.randint(0, 30)
                start = launch + rng.randint(1, 5)
                skew = 6 if tid == 0 and sid == 1 and spec.stage1_straggler else 1
                took = rng.randint(*spec.spread) * skew
                in_rows = rng.randint(*spec.rows)
                out_rows = in_rows // rng.randint(2, 50)
                factor = spec.scale
                if spec.straggler == (sid, tid):
                    factor *= STRAGGLER_FACTOR
                if spec.skewed == (sid, tid):
                    factor *= SKEW_FACTOR
                    in_rows *= SKEW_FACTOR
                if executor == spec.slow_executor:
                    factor *= SLOW_EXECUTOR_FACTOR
                end = start + (took if factor == 1.0 else round(took * factor))
                failed = (fail_here and tid % 3 == 1) or attempt + 1 < attempts
                status: Any = "Successful"
                if failed:
                    error = ERRORS[(tid + sid) % len(ERRORS)]
                    if spec.errors:
                        error = spec.errors[(tid + sid) % len(spec.errors)].format(
                            stage=sid, task=tid, executor=executor, attempt=attempt
                        )
                    status = {"Failed": {"reason": "ExecutionError", "error": error}}
                    failed_error = failed_error or error
                    in_rows = out_rows = 0
                # Upstream, the stage the job fails in lists the tasks it was running: no
                # TaskEnd (only terminal statuses are recorded), no end, no rows.
                cut = spec.upstream and fail_here and tid % 3 == 2 and attempt + 1 == attempts
                if cut:
                    tasks.append(
                        {
                            "id": tid + attempt * spec.tasks_per_stage,
                            "status": "Running",
                            "partition_id": [tid],
                            "scheduled_time": launch - 2,
                            "launch_time": launch,
                            "start_exec_time": start,
                            "end_exec_time": 0,
                            "exec_duration": 0,
                            "finish_time": 0,
                            "input_rows": 0,
                            "output_rows": 0,
                        }
                    )
                    stage_end = max(stage_end, start + 1)
                    continue
                metrics = {
                    "input_rows": in_rows,
                    "output_rows": out_rows,
                    "elapsed_compute_nanos": (end - start) * 900_000,
                }
                record = {
                    "stage_id": sid,
                    "task_id": tid,
                    "executor_id": executor,
                    "status": status,
                    "launch_time": launch,
                    "start_exec_time": start,
                    "end_exec_time": end,
                    "metrics": metrics,
                }
                ends.append((record, None))
                stage_end = max(stage_end, end)
                if attempt + 1 == attempts:
                    durations.append(end - start)
                    inputs.append(in_rows)
                    tasks.append(
                        {
                            "id": tid + attempt * spec.tasks_per_stage,
                            "status": status,
                            "partition_id": [tid],
                            "scheduled_time": launch - 2,
                            "launch_time": launch,
                            "start_exec_time": start,
                            "end_exec_time": end,
                            "exec_duration": end - start,
                            "finish_time": end + 1,
                            "input_rows": in_rows,
                            "output_rows": out_rows,
                        }
                    )
                    ends[-1] = (record, tasks[-1])
        if spec.counting is not None:
            parents = _parents(sid)
            read = sum(wrote.get(p, 0) for p in parents) if parents else None
            pairs = [(r["metrics"], t) for r, t in ends]
            wrote[sid] = _recount(spec.counting, read, pairs)
            inputs = [t["input_rows"] for _, t in ends if t is not None]
        for record, _ in ends:
            yield _line("TaskEnd", record)
        stage_status = "Failed" if fail_here else "Successful"
        if (spec.outcome == "running" and sid == last_stage) or (fail_here and spec.upstream):
            stage_status = "Running"
        if sid == spec.replanned:  # the final plan no longer has it: its TaskEnds stay
            now = stage_end + rng.randint(1, 15)
            continue
        statuses[sid] = stage_status
        if stage_status != "Running" and not spec.upstream:
            yield _line("StageEnd", {"stage_id": sid, "status": stage_status})
        in_total = sum(t["input_rows"] for t in tasks)
        out_total = sum(t["output_rows"] for t in tasks)
        # The rows the job produced: what its last stage's writer wrote.
        total_out = wrote.get(sid, out_total)
        stage_summaries.append(
            {
                "stage_id": str(sid),
                "stage_status": stage_status,
                "input_rows": in_total,
                "output_rows": out_total,
                "elapsed_compute": f"{sum(durations) * 9 // 10}ms",
                "stage_plan": f"ShuffleWriterExec: partitions={spec.tasks_per_stage}\n  "
                + OPERATORS[sid % len(OPERATORS)][0],
                "task_duration_percentiles": _percentiles(durations),
                "task_input_percentiles": _percentiles(inputs),
                "tasks": tasks,
            }
        )
        now = stage_end + rng.randint(1, 15)
    if spec.outcome in ("running", "unrecorded"):
        return
    for sid in range(last_stage + 1, spec.stages + 1):
        statuses[sid] = "Unresolved"
        if spec.upstream:  # listed with no figures, as a stage that never started is
            stage_summaries.append(
                {
                    "stage_id": str(sid),
                    "stage_status": "Unresolved",
                    "input_rows": 0,
                    "output_rows": 0,
                    "elapsed_compute": None,
                    "tasks": [],
                }
            )
    if spec.upstream and len(stage_summaries) > 1:
        # The payload iterates a hash map: stage 2 first, stage 1 last (as a job's may read).
        stage_summaries = stage_summaries[1:] + stage_summaries[:1]
    end_ms = now
    elapsed = end_ms - spec.start_ms
    completed = sum(1 for s in statuses.values() if s == "Successful")
    if spec.outcome == "succeeded":
        end_status: Any = "Succeeded"
        word = "Completed"
        verbose = (
            f"Completed. Produced {spec.tasks_per_stage} partitions containing "
            f"{total_out} rows. Elapsed time: {elapsed} ms."
        )
    elif spec.outcome == "failed":
        message = f"Job failed due to stage {spec.stages} failed: {failed_error}"
        if spec.upstream:
            message += "\n"  # as the scheduler words it, newline included
        end_status = {"Failed": message}
        word = "Failed"
        verbose = f"Failed: {message}"
    else:
        end_status = "Cancelled"
        word = "Cancelled"
        verbose = "Cancelled"
        queued = 0
    # Upstream records a cancel before the graph ends: end_time 0 in index and job (the
    # cancel time is completed_at).
    listed_end = 0 if spec.outcome == "cancelled" and spec.upstream else end_ms
    planned = spec.stages - (spec.replanned is not None)
    percent = completed * 100 // planned
    index = {
        "job_id": spec.job_id,
        "job_name": spec.job_name,
        "status": word,
        "job_status": verbose,
        "start_time": spec.start_ms,
        "end_time": listed_end,
        "num_stages": planned,
        "completed_stages": completed,
        "percent_complete": percent,
    }
    job = {
        "job_id": spec.job_id,
        "job_name": spec.job_name,
        "job_status": verbose,
        "status": word,
        "num_stages": planned,
        "completed_stages": completed,
        "percent_complete": percent,
        "start_time": spec.start_ms,
        "end_time": listed_end,
        "logical_plan": logical,
        "physical_plan": physical,
        "stage_plan": "\n".join(
            s["stage_plan"] for s in sorted(stage_summaries, key=_stage_number) if "stage_plan" in s
        ),
    }
    config = {
        "ballista.job.name": spec.job_name,
        "datafusion.execution.batch_size": "8192",
        "datafusion.execution.target_partitions": str(spec.tasks_per_stage),
        **spec.extra_config,
    }
    yield _line(
        "JobEnd",
        {
            "status": end_status,
            "queued_at": queued,
            "started_at": spec.start_ms,
            "completed_at": end_ms,
            "index": index,
            "job": job,
            "stages": {"stages": stage_summaries},
            "config": dict(sorted(config.items())),
            "dot": _dot(spec, statuses, rng),
        },
    )


def write_log(directory: Path, spec: JobSpec, seed: int, name: str | None = None) -> Path:
    """Write one job's log into ``directory`` and return its path."""
    suffix = ".eventlog.running" if spec.outcome == "running" else ".eventlog"
    path = directory / (name or spec.job_id + suffix)
    with path.open("wb") as out:
        out.writelines(generate_job(spec, seed))
    return path


def write_corpus(
    directory: Path,
    jobs: int,
    stages: int,
    tasks_per_stage: int,
    seed: int = 7,
    executors: int = 8,
) -> list[Path]:
    """Write ``jobs`` completed logs of the given shape (the benchmark corpus)."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    paths = []
    for n in range(jobs):
        spec = JobSpec(
            job_id=job_id_for(rng),
            job_name=QUERY_NAMES[n % len(QUERY_NAMES)],
            stages=stages,
            tasks_per_stage=tasks_per_stage,
            executors=executors,
            outcome="failed" if n % 17 == 5 else "succeeded",
            start_ms=BASE_TIME_MS + n * 60_000 + rng.randint(0, 50_000),
            retries=1,
        )
        paths.append(write_log(directory, spec, seed * 100_003 + n))
    return paths


def write_examples(directory: Path) -> list[Path]:
    """Write the bundled example set: a dozen jobs plus running, corrupt and unrecorded logs."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(2026)
    shapes: list[tuple[str, int, int, Outcome]] = [
        ("tpch-q1", 2, 16, "succeeded"),
        ("tpch-q3", 4, 24, "succeeded"),
        ("tpch-q5", 5, 12, "succeeded"),
        ("tpch-q6", 1, 32, "succeeded"),
        ("tpch-q9", 5, 16, "failed"),
        ("tpch-q10", 4, 8, "succeeded"),
        ("tpch-q12", 3, 20, "succeeded"),
        ("tpch-q14", 3, 16, "cancelled"),
        ("tpch-q18", 4, 40, "succeeded"),
        ("tpch-q19", 3, 12, "succeeded"),
        ('daily revenue <report> & "audit"', 3, 10, "succeeded"),
        ("tpch-q21", 5, 24, "succeeded"),
        ("tpch-q22", 3, 16, "running"),
    ]
    paths = []
    for n, (name, stages, tasks, outcome) in enumerate(shapes):
        spec = JobSpec(
            replanned=REPLANNED_STAGE if name == REPLANNED_NAME else None,
            job_id=job_id_for(rng),
            job_name=name,
            stages=stages,
            tasks_per_stage=tasks,
            executors=4,
            outcome=outcome,
            start_ms=BASE_TIME_MS + n * 3_600_000 + rng.randint(0, 600_000),
            retries=2,
            upstream=True,  # as today's scheduler writes them (the planted jobs keep Stage records)
            counting="2435",
        )
        paths.append(write_log(directory, spec, 1000 + n))
    # A log whose JobEnd was damaged on disk: reported with its line number.
    broken = JobSpec(
        job_id=job_id_for(rng), job_name="tpch-q7", stages=2, tasks_per_stage=4, counting="2435"
    )
    lines = list(generate_job(broken, 99))
    lines[-1] = lines[-1].replace(b'"index":{', b'"index":{"num_stages":"two",', 1)
    corrupt = directory / f"{broken.job_id}.eventlog"
    corrupt.write_bytes(b"".join(lines))
    paths.append(corrupt)
    paths += write_recurring(directory)
    paths += write_planted(directory)
    paths.append(write_unrecorded(directory))
    return paths


# The example whose stage 2 an adaptive replan dropped (Ballista #2192): its final plan reads
# stage 1 alone into stage 3, and stage 2's attempts stay in the log.
REPLANNED_NAME = "tpch-q12"
REPLANNED_STAGE = 2


# A recurring job in the examples: daily runs; run 4 fails, run 7 regresses (3x slower).
RECURRING_NAME = "nightly-etl"
RECURRING_RUNS = 7
RECURRING_FAILED_RUN = 4
RECURRING_SLOW_SCALE = 3.0
# Its scheduler was upgraded past Ballista #2435 before this run: the runs before it count
# rows the old way, this one and later the new way (the regression comes right after).
RECURRING_COUNTING_RUN = 6
# Each failed run of it fails on a spill file whose path and size vary from run to run:
# one failure group once masked.
SPILL_ERROR = (
    "IO error: could not write spill file /var/lib/ballista/spill/job-{stage}{task}/"
    "part-{task}.arrow: 5{task}.5 MB left on device"
)
FETCH_ERROR = (
    "Execution error: Failed to fetch partition {task} of stage {stage} from {executor} "
    "at 10.0.{stage}.{task}:50051: connection reset by peer"
)


def write_recurring(directory: Path) -> list[Path]:
    """Write the runs of ``RECURRING_NAME``: a day apart, one failed, the last regressed."""
    rng = random.Random(2027)
    paths = []
    for run in range(1, RECURRING_RUNS + 1):
        spec = JobSpec(
            job_id=job_id_for(rng),
            job_name=RECURRING_NAME,
            stages=4,
            tasks_per_stage=12,
            executors=3,
            outcome="failed" if run == RECURRING_FAILED_RUN else "succeeded",
            start_ms=BASE_TIME_MS - (RECURRING_RUNS - run) * 86_400_000 - 7_200_000,
            spread=(250, 350),
            stage1_straggler=False,
            scale=RECURRING_SLOW_SCALE if run == RECURRING_RUNS else 1.0,
            errors=(SPILL_ERROR,),
            counting="2435" if run >= RECURRING_COUNTING_RUN else "before",
        )
        paths.append(write_log(directory, spec, 3000 + run))
    return paths


# One job per per-job finding kind, each with exactly one planted anomaly (and tasks
# otherwise within 180-220 ms (900-1,100 ms for the slow executor's job) and 400K-600K
# input rows, so nothing else stands out):
# name, what is planted, and where (stage, task, executor). Job ids: ``planted-<kind>``.
PLANTED: list[tuple[str, str]] = [
    ("straggler", f"stage 2, task 5: {STRAGGLER_FACTOR}x the stage's time on typical rows"),
    ("data-skew", f"stage 3, task 2: {SKEW_FACTOR}x the rows, and as much longer"),
    ("slow-executor", f"executor-2: every task {SLOW_EXECUTOR_FACTOR}x slower, in every stage"),
    ("failed-attempts", "retried task attempts in every stage, the error varies per task"),
    ("queued", "queued 30 s before it started (the job ran about 1 s)"),
    ("idle", "nothing ran for 20 s before stage 3"),
]


def write_planted(directory: Path) -> list[Path]:
    """Write one job per per-job finding kind, its anomaly as ``PLANTED`` describes it."""
    knobs: dict[str, dict[str, Any]] = {
        "straggler": {"straggler": (2, 5)},
        "data-skew": {"skewed": (3, 2)},
        # Tasks of about 1 s, so the slow node is seconds behind its peers, not milliseconds
        # (diagnose.thresholds.EXECUTOR_MIN_EXCESS_MS: a few hundred ms is no bad node).
        "slow-executor": {"slow_executor": "executor-2", "spread": (900, 1100)},
        "failed-attempts": {"retries": 6, "errors": (FETCH_ERROR,)},
        "queued": {"queued_ms": 30_000},
        "idle": {"idle": (3, 20_000)},
    }
    paths = []
    for n, (kind, _) in enumerate(PLANTED):
        spec = JobSpec(
            job_id=f"planted-{kind}",
            job_name=f"planted {kind}",
            stages=4,
            tasks_per_stage=16,
            executors=4,
            start_ms=BASE_TIME_MS + 14 * 3_600_000 + n * 600_000,
            **{
                "spread": (180, 220),
                "rows": (400_000, 600_000),
                "stage1_straggler": False,
                "counting": "2435",
                **knobs[kind],
            },
        )
        paths.append(write_log(directory, spec, 4000 + n))
    return paths


# A job that ended without its JobEnd (a Snowflake id, as today's scheduler gives): its log
# was renamed to ``.eventlog`` as the job ended, in a dir that holds a ``.running`` log.
UNRECORDED_ID = "0382W2C5NR000"


def write_unrecorded(directory: Path) -> Path:
    """Write the log of a job that ended unrecorded: JobStart and TaskEnd records, no JobEnd."""
    spec = JobSpec(
        job_id=UNRECORDED_ID,
        job_name="tpch-q15",
        stages=3,
        tasks_per_stage=8,
        executors=4,
        outcome="unrecorded",
        start_ms=BASE_TIME_MS + 15 * 3_600_000,
        upstream=True,
        counting="2435",
    )
    return write_log(directory, spec, 5000)


if __name__ == "__main__":
    from sitegen.examples import EXAMPLE_LOG_DIR

    for old in EXAMPLE_LOG_DIR.glob("*.eventlog*"):
        old.unlink()
    for written in write_examples(EXAMPLE_LOG_DIR):
        print(written.name)
