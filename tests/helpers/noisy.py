"""Jobs with realistic noise, and planted anomalies of known cost (tests and the benchmark).

Task durations are log-normal around each stage's median; tasks run in waves on executor
slots (each task on the first slot free); stages form a chain, with a join now and then.
A planted anomaly's cost is known by construction: the same job is simulated again without
it, with the same random draws, and the difference in run time is its cost.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, field
from typing import Literal

from sitegen.diagnose.diagnosis import JobFacts
from sitegen.eventlog.payload import Stage, TaskSummary
from sitegen.eventlog.schema import TaskEnd

Kind = Literal["straggler", "data-skew", "slow-executor", "failed-attempts", "queued", "idle"]
KINDS: tuple[Kind, ...] = (
    "straggler",
    "data-skew",
    "slow-executor",
    "failed-attempts",
    "queued",
    "idle",
)
T0 = 1_767_225_600_000
ROWS = 500_000


@dataclass(frozen=True)
class Shape:
    """What one job looks like before any anomaly is planted."""

    sigma: float
    executors: int
    slots: int
    # Per stage: tasks and median task time (ms); stages are numbered from 1.
    tasks: list[int]
    medians: list[int]
    edges: list[tuple[int, int]]


@dataclass(frozen=True)
class Plant:
    """One anomaly: its kind, where (stage, task, executor) and how strong."""

    kind: Kind
    stage: int | None = None
    task: int | None = None
    executor: str | None = None
    factor: float = 1.0
    # Failed attempts: how many tasks of the stage had one; idle and queued: ms.
    count: int = 0
    ms: int = 0
    # A straggler or skewed task: exactly ``factor`` times its stage's median time, not
    # ``factor`` times its own noisy draw (which can land it anywhere from 2x to 12x at 5x).
    exact: bool = False


@dataclass
class Sim:
    """A simulated job: its facts for the diagnosis, and its run time."""

    facts: JobFacts
    run_ms: int
    waited_ms: int = 0
    plant: Plant | None = None
    cost_ms: int = 0
    stage_tasks: dict[int, list[int]] = field(default_factory=dict)


def draw_shape(
    rng: random.Random,
    sigma: tuple[float, float] = (0.2, 0.6),
    tasks: tuple[int, int] = (4, 500),
    executors: tuple[int, int] = (2, 16),
    stages: tuple[int, int] = (2, 6),
) -> Shape:
    """Draw a job's shape: spread, executors and slots, stages with tasks and median times."""
    count = rng.randint(*stages)
    lo, hi = math.log(tasks[0]), math.log(tasks[1])
    edges = [(s, s + 1) for s in range(1, count)]
    if count >= 3 and rng.random() < 0.3:  # stages 1 and 2 both feed stage 3
        edges = [(1, 3), (2, 3)] + [(s, s + 1) for s in range(3, count)]
    return Shape(
        sigma=rng.uniform(*sigma),
        executors=rng.randint(*executors),
        slots=rng.choice((1, 2, 4, 4, 8)),
        tasks=[round(math.exp(rng.uniform(lo, hi))) for _ in range(count)],
        medians=[
            round(math.exp(rng.uniform(math.log(200), math.log(20_000)))) for _ in range(count)
        ],
        edges=edges,
    )


def draw_one_wave(
    rng: random.Random,
    sigma: tuple[float, float] = (0.3, 0.5),
    stages: tuple[int, int] = (1, 4),
) -> Shape:
    """Draw a job of stages that each run in one wave: no more tasks than slots, in a chain.

    Every task of a stage starts at once, so its slowest task ends it: on a small job, what
    replaying that task at the median saves is a large share of the run by chance (issue 37).
    """
    count = rng.randint(*stages)
    slots = rng.choice((1, 2, 4, 4, 8))
    executors = max(rng.randint(2, 16), -(-4 // slots))  # room for 4 tasks at once
    lo, hi = math.log(4), math.log(executors * slots)
    return Shape(
        sigma=rng.uniform(*sigma),
        executors=executors,
        slots=slots,
        tasks=[round(math.exp(rng.uniform(lo, hi))) for _ in range(count)],
        medians=[
            round(math.exp(rng.uniform(math.log(200), math.log(20_000)))) for _ in range(count)
        ],
        edges=[(s, s + 1) for s in range(1, count)],
    )


def draw_sized(rng: random.Random, size: tuple[int, int], one_wave: bool, sigma: float) -> Shape:
    """Draw a job of 2-5 stages whose every stage has a task count within ``size``."""
    count = rng.randint(2, 5)
    tasks = [rng.randint(*size) for _ in range(count)]
    slots = rng.choice((1, 2, 4, 4, 8))
    if one_wave:
        executors = max(-(-max(tasks) // slots), rng.randint(2, 16))
    else:
        executors = rng.randint(2, max(2, min(16, max(tasks) // (2 * slots))))
    edges = [(s, s + 1) for s in range(1, count)]
    if count >= 3 and rng.random() < 0.3:
        edges = [(1, 3), (2, 3)] + [(s, s + 1) for s in range(3, count)]
    return Shape(
        sigma=sigma,
        executors=executors,
        slots=slots,
        tasks=tasks,
        medians=[round(math.exp(rng.uniform(math.log(200), math.log(20_000)))) for _ in tasks],
        edges=edges,
    )


def simulate(shape: Shape, seed: int, plant: Plant | None = None) -> Sim:
    """Run the job on its slots and record it as the diagnosis reads a log."""
    rng = random.Random(seed)
    names = [f"exec-{n + 1}" for n in range(shape.executors)]
    free = [(0, e, s) for e in range(shape.executors) for s in range(shape.slots)]
    heapq.heapify(free)
    producers: dict[int, list[int]] = {}
    for a, b in shape.edges:
        producers.setdefault(b, []).append(a)
    stage_end: dict[int, int] = {}
    ends: list[TaskEnd] = []
    stages: list[tuple[Stage, list[TaskEnd]]] = []
    run_end = 0
    for sid, (count, med) in enumerate(zip(shape.tasks, shape.medians, strict=True), 1):
        ready = max((stage_end[p] for p in producers.get(sid, ())), default=0)
        ready += rng.randint(5, 50)
        if plant is not None and plant.kind == "idle" and plant.stage == sid:
            ready += plant.ms
        failing = set()
        if plant is not None and plant.kind == "failed-attempts" and plant.stage == sid:
            picker = random.Random(seed * 1_000 + sid)  # the job's own draws stay the same
            failing = set(picker.sample(range(count), min(count, plant.count)))
        mine: list[TaskEnd] = []
        rows: list[TaskSummary] = []
        last = ready
        for tid in range(count):
            took = med * math.exp(rng.gauss(0.0, shape.sigma))
            n_rows = round(ROWS * math.exp(rng.gauss(0.0, 0.15)))
            jitter = rng.randint(0, 20)
            fail_at = rng.uniform(0.2, 1.0)
            planted_here = plant is not None and (plant.stage, plant.task) == (sid, tid)
            if planted_here and plant is not None and plant.kind in ("straggler", "data-skew"):
                took = (med if plant.exact else took) * plant.factor
                if plant.kind == "data-skew":
                    n_rows = round(n_rows * plant.factor)
            tries = 2 if tid in failing else 1
            begin = ready + jitter
            for attempt in range(tries):
                at, e, s = heapq.heappop(free)
                start = max(at, begin)
                length = took
                if (
                    plant is not None
                    and plant.kind == "slow-executor"
                    and names[e] == plant.executor
                ):
                    length *= plant.factor
                ok = attempt + 1 == tries
                if not ok:
                    length *= fail_at
                end = start + max(1, round(length))
                heapq.heappush(free, (end, e, s))
                begin = end
                status: object = "Successful"
                if not ok:
                    status = {"Failed": {"reason": "ExecutionError", "error": "fetch failed"}}
                record = TaskEnd(sid, tid, names[e], status, T0 + start, T0 + end)
                mine.append(record)
                rows.append(
                    TaskSummary(
                        id=tid + attempt * count,
                        status=status,
                        partition_id=[tid],
                        start_exec_time=T0 + start,
                        end_exec_time=T0 + end,
                        exec_duration=end - start,
                        input_rows=n_rows if ok else 0,
                        output_rows=n_rows // 10 if ok else 0,
                    )
                )
                last = max(last, end)
        stage_end[sid] = last
        run_end = max(run_end, last)
        ends.extend(mine)
        stage = Stage(
            stage_id=str(sid),
            stage_status="Successful",
            input_rows=sum(r.input_rows or 0 for r in rows),
            output_rows=sum(r.output_rows or 0 for r in rows),
            tasks=rows,
        )
        stages.append((stage, mine))
    run_end += rng.randint(5, 30)
    waited = rng.randint(5, 400)
    if plant is not None and plant.kind == "queued":
        waited += plant.ms
    facts = JobFacts(
        job_id=f"noisy-{seed}",
        failed=False,
        queued_at=T0 - waited,
        started_at=T0,
        completed_at=T0 + run_end,
        tasks=ends,
        stages=stages,
        stage_edges=[(str(a), str(b)) for a, b in shape.edges],
    )
    return Sim(facts, run_end, waited, plant)


def planted(shape: Shape, seed: int, kind: Kind, rng: random.Random) -> Sim:
    """Simulate the job with one anomaly of ``kind``; its cost is against the same job without."""
    sid = rng.randint(1, len(shape.tasks))
    plant: Plant
    if kind == "straggler":
        plant = Plant(kind, sid, rng.randrange(shape.tasks[sid - 1]), factor=_factor(rng, 3, 40))
    elif kind == "data-skew":
        plant = Plant(kind, sid, rng.randrange(shape.tasks[sid - 1]), factor=_factor(rng, 3, 30))
    elif kind == "slow-executor":
        executor = f"exec-{rng.randint(1, shape.executors)}"
        plant = Plant(kind, executor=executor, factor=_factor(rng, 1.5, 6))
    elif kind == "failed-attempts":
        plant = Plant(kind, sid, count=rng.randint(1, max(1, shape.tasks[sid - 1] // 4)))
    elif kind == "idle":
        plant = Plant(kind, sid, ms=round(_factor(rng, 1_000, 120_000)))
    else:
        plant = Plant(kind, ms=round(_factor(rng, 1_000, 300_000)))
    base = simulate(shape, seed)
    sim = simulate(shape, seed, plant)
    if kind == "queued":
        sim.cost_ms = sim.waited_ms - base.waited_ms
    else:
        sim.cost_ms = max(0, sim.run_ms - base.run_ms)
    return sim


def _factor(rng: random.Random, lo: float, hi: float) -> float:
    """Draw log-uniformly from [lo, hi]."""
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


@dataclass(frozen=True)
class FleetJob:
    """One job of a simulated fleet: when it started, and its facts on named nodes."""

    start_ms: int
    facts: JobFacts


def _renamed(facts: JobFacts, names: dict[str, str], few: str | None) -> JobFacts:
    """Return the facts with executors renamed (``few``: the one attempt given to that node)."""
    import msgspec

    stages = []
    given = few is None
    for stage, ends in facts.stages:
        mine = []
        for end in ends:
            name = names.get(end.executor_id, end.executor_id)
            if not given and end.status == "Successful":
                name, given = few or name, True
            mine.append(msgspec.structs.replace(end, executor_id=name))
        stages.append((stage, mine))
    tasks = [end for _, ends in stages for end in ends]
    return JobFacts(
        facts.job_id,
        facts.failed,
        facts.queued_at,
        facts.started_at,
        facts.completed_at,
        tasks,
        stages,
        facts.stage_edges,
    )


def fleet(
    seed: int,
    jobs: int = 30,
    nodes: int = 10,
    slow: tuple[int, int] | None = None,
    factor: float = 1.5,
    every_ms: int = 900_000,
) -> list[FleetJob]:
    """Simulate a fleet: ``jobs`` jobs every ``every_ms`` on ``nodes`` shared nodes.

    ``node-00`` is slow by ``factor`` in jobs ``slow[0]`` to ``slow[1] - 1`` (it runs in each
    of them); ``busy`` runs two executors' share of each job at normal speed, and ``few``
    runs a single attempt of each job; the rest are healthy, with log-normal noise.
    """
    rng = random.Random(seed)
    found = []
    for n in range(jobs):
        shape = draw_shape(rng, tasks=(12, 80), executors=(4, 7), stages=(2, 4))
        pool = [f"node-{k:02d}" for k in range(1, nodes)]
        rng.shuffle(pool)
        bad = slow is not None and slow[0] <= n < slow[1]
        chosen = (["node-00"] if bad else []) + pool[: shape.executors - (3 if bad else 2)]
        names = {f"exec-{k + 1}": name for k, name in enumerate(chosen)}
        names[f"exec-{shape.executors}"] = "busy"
        names[f"exec-{shape.executors - 1}"] = "busy"
        plant = Plant("slow-executor", executor="exec-1", factor=factor) if bad else None
        sim = simulate(shape, seed * 10_000 + n, plant)
        facts = _renamed(sim.facts, names, "few")
        found.append(FleetJob(T0 + n * every_ms, facts))
    return found
