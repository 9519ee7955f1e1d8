"""The findings on jobs with realistic noise: silent on healthy jobs, finding what costs time.

Every draw is seeded (and hypothesis derandomized): a bound asserted here holds on these
exact jobs, so it cannot flake. ``benchmarks/findings.py`` runs the same jobs by the
thousand for the figures in docs/findings.md.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.diagnose.diagnosis import diagnose
from sitegen.finding import FindingKind
from tests.helpers.noisy import (
    KINDS,
    Plant,
    draw_one_wave,
    draw_shape,
    draw_sized,
    planted,
    simulate,
)

# Healthy jobs with a warning or worse: at most this share (issue 26).
HEALTHY_WARNING_BOUND = 0.02
JOBS_PER_SPREAD = 150


@pytest.mark.parametrize("sigma", [0.2, 0.3, 0.4, 0.5, 0.6])
def test_healthy_jobs_with_log_normal_noise_rarely_warn(sigma: float) -> None:
    rng = random.Random(int(sigma * 100))
    warned = 0
    for n in range(JOBS_PER_SPREAD):
        shape = draw_shape(rng, sigma=(sigma, sigma), tasks=(4, 200), executors=(2, 12))
        found = diagnose(simulate(shape, 7_000 + n).facts)
        warned += any(f.severity.rank >= 1 for f in found.findings)
        # Whatever is found, its cost is a figure within the run.
        for f in found.findings:
            assert f.impact_ms is None or f.impact_ms >= 0
    assert warned / JOBS_PER_SPREAD <= HEALTHY_WARNING_BOUND


# Jobs whose stages each run in one wave (issue 37): a stage's slowest task always ends it,
# so on a small job it costs a large share of the run by chance, and a warning needs it far
# out against its stage's spread as well. Measured on the three batches of 1,000 jobs drawn
# here: 0.6%, 1.2% and 0.9% warned (4.1%, 5.2% and 4.0% when the cost alone made a warning,
# which fails this test); benchmarks/findings.py: 0.8% of 2,000 (3.15% before).
ONE_WAVE_JOBS = 1_000


@settings(max_examples=3, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6))
def test_healthy_jobs_of_one_wave_rarely_warn(seed: int) -> None:
    rng = random.Random(seed)
    warned = 0
    for n in range(ONE_WAVE_JOBS):
        shape = draw_one_wave(rng, sigma=(0.3, 0.5))
        found = diagnose(simulate(shape, seed + n).facts)
        warned += any(f.severity.rank >= 1 for f in found.findings)
    assert warned / ONE_WAVE_JOBS <= HEALTHY_WARNING_BOUND


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6), sigma=st.floats(0.2, 0.6), kind=st.sampled_from(KINDS))
def test_every_cost_is_within_the_run(seed: int, sigma: float, kind: str) -> None:
    rng = random.Random(seed)
    shape = draw_shape(rng, sigma=(sigma, sigma), tasks=(4, 120), stages=(2, 4))
    sim = planted(shape, seed, kind, rng)  # type: ignore[arg-type]
    found = diagnose(sim.facts)
    run = sim.facts.completed_at - sim.facts.started_at
    for f in found.findings:
        if f.kind is FindingKind.QUEUED:
            assert f.impact_ms == sim.facts.started_at - sim.facts.queued_at
        elif f.kind is not FindingKind.REGRESSION:
            assert f.impact_ms is not None and 0 <= f.impact_ms <= run
        # Cheap findings are never more than info.
        if f.impact_ms is not None and f.impact_ms < 1_000 and f.impact_ms < 0.05 * run:
            assert f.severity.rank == 0
    assert found.what_if is not None
    assert found.what_if.floor_ms <= found.what_if.double_ms <= found.what_if.half_ms


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 10**6), sigma=st.floats(0.2, 0.6), share=st.floats(0.3, 0.7))
def test_an_executor_running_more_tasks_at_normal_speed_is_never_slow(
    seed: int, sigma: float, share: float
) -> None:
    """Tasks drawn alike for every executor, one executor given most of them: never slow."""
    rng = random.Random(seed)
    shape = draw_shape(rng, sigma=(sigma, sigma), tasks=(20, 200), executors=(3, 8), stages=(2, 3))
    facts = simulate(shape, seed).facts
    # Hand a share of every stage's tasks to exec-1 (at the speed they ran): it "ran more".
    for _, ends in facts.stages:
        for end in ends:
            if rng.random() < share:
                end.executor_id = "exec-1"
    found = diagnose(facts)
    assert not [f for f in found.findings if f.kind is FindingKind.SLOW_EXECUTOR]


# Of each kind's first COSTLY_CASES planted anomalies that cost at least a fifth of the run
# (and a second), at least COSTLY_FOUND are found in the right place (the benchmark's recall
# target is 95% over all kinds; fixed seeds, so this holds or fails on these very jobs).
COSTLY_CASES = 20
COSTLY_FOUND = 18


@pytest.mark.parametrize("kind", KINDS)
def test_costly_planted_anomalies_are_found_in_noise(kind: str) -> None:
    rng = random.Random(26)
    cases = found = 0
    for n in range(2_000):
        shape = draw_shape(rng, sigma=(0.2, 0.6), tasks=(4, 150))
        sim = planted(shape, 9_000 + n, kind, rng)  # type: ignore[arg-type]
        whole = sim.run_ms + (sim.waited_ms if kind == "queued" else 0)
        if sim.cost_ms < 0.2 * whole or sim.cost_ms < 1_000:
            continue
        plant = sim.plant
        assert plant is not None
        hits = [f for f in diagnose(sim.facts).findings if f.kind is FindingKind(kind)]
        cases += 1
        found += any(_at(plant, f.stage_id, f.task_id, f.executor_id) for f in hits)
        if cases == COSTLY_CASES:
            break
    assert cases == COSTLY_CASES
    assert found >= COSTLY_FOUND


def _at(plant: Plant, stage: int | None, task: int | None, executor: str | None) -> bool:
    """Tell whether a finding is where the anomaly was planted."""
    if plant.kind == "straggler":
        return (stage, task) == (plant.stage, plant.task)
    if plant.kind in ("data-skew", "failed-attempts"):
        return stage == plant.stage
    if plant.kind == "slow-executor":
        return executor == plant.executor
    return True


# Issue 51: by stage size, one wave and several (benchmarks/stragglers.py runs the same jobs
# by the hundred for docs/findings.md). Healthy jobs: a straggler warning in at most 2%.
# Costly plants of one task at 15x its stage's median (sigma <= 0.6): at least STRAGGLER_FLOOR
# of them a warning on that task, what these seeds reach (the 100% is not: see the
# Calibration section), never a message that calls it chance.
SIZED_JOBS = 150
SIZED_PLANTS = 40
STRAGGLER_FLOOR = {(6, 10): 0.85, (11, 50): 0.95}


@pytest.mark.parametrize("size", [(4, 5), (6, 10), (11, 50)])
@pytest.mark.parametrize("one_wave", [True, False])
def test_healthy_jobs_by_stage_size_rarely_get_a_straggler_warning(
    size: tuple[int, int], one_wave: bool
) -> None:
    rng = random.Random(size[0] * 10 + one_wave)
    warned = 0
    for n in range(SIZED_JOBS):
        shape = draw_sized(rng, size, one_wave, rng.uniform(0.2, 0.6))
        found = diagnose(simulate(shape, 51_000 + n).facts).findings
        warned += any(f.kind is FindingKind.STRAGGLER and f.severity.rank >= 1 for f in found)
    assert warned / SIZED_JOBS <= HEALTHY_WARNING_BOUND


@pytest.mark.parametrize("size", sorted(STRAGGLER_FLOOR))
@pytest.mark.parametrize("one_wave", [True, False])
def test_costly_stragglers_by_stage_size_are_warnings(
    size: tuple[int, int], one_wave: bool
) -> None:
    rng = random.Random(size[0] * 10 + one_wave + 1)
    kept = found = 0
    for n in range(SIZED_PLANTS * 20):
        shape = draw_sized(rng, size, one_wave, rng.uniform(0.2, 0.6))
        stage = rng.randint(1, len(shape.tasks))
        plant = Plant(
            "straggler", stage, rng.randrange(shape.tasks[stage - 1]), factor=15, exact=True
        )
        base, sim = simulate(shape, 52_000 + n), simulate(shape, 52_000 + n, plant)
        if sim.run_ms - base.run_ms < 0.2 * sim.run_ms:
            continue  # costs under a fifth of the run
        if shape.medians[stage - 1] * 14 < 1_000:
            continue  # under STRAGGLER_MIN_EXCESS_MS past its median
        kept += 1
        hits = [
            f
            for f in diagnose(sim.facts).findings
            if f.kind is FindingKind.STRAGGLER and (f.stage_id, f.task_id) == (stage, plant.task)
        ]
        found += bool(hits) and hits[0].severity.rank >= 1
        assert all("chance" not in f.message for f in hits)
        if kept == SIZED_PLANTS:
            break
    assert kept == SIZED_PLANTS
    assert found / kept >= STRAGGLER_FLOOR[size]
