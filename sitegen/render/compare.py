"""Two runs of one name side by side: a run and its previous successful run (``compare.html``).

Made from what the job page already has: this run's summary and config, and its run context
(the baseline's stage figures and config). The baseline's findings are not in it: a baseline
published by the same build was only peeked at (not diagnosed) when the page was made, and a
page must not depend on which build made it. So the page lists this run's findings, and its
script pairs them with the baseline's ``findings.json`` where the site is served
(``finding_changes`` is the rule, and ``static/compare.js`` follows it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sitegen.diagnose.counting import shared
from sitegen.diagnose.recurring import RunContext
from sitegen.finding import Finding, most_severe_first
from sitegen.model import JobSummary
from sitegen.render.runs import StageChange, compare


def _about(f: Finding) -> tuple[str, int | None, str | None]:
    """Return what a finding is about: its kind, stage and executor (not its figures)."""
    return (str(f.kind), f.stage_id, f.executor_id)


@dataclass(frozen=True)
class ConfigChange:
    """One config key whose value differs (None: the run lacks the key)."""

    key: str
    now: str | None
    before: str | None


@dataclass(frozen=True)
class FindingChanges:
    """The findings that appeared in this run, went since the baseline, and stayed."""

    appeared: list[Finding]
    went: list[Finding]
    stayed: list[Finding]


@dataclass
class Comparison:
    """What ``compare.html`` shows: two runs, stage by stage, findings and config."""

    now: JobSummary
    baseline: str
    context: RunContext
    stages: list[StageChange]
    rows_comparable: bool
    # This run's findings (the page pairs them with the baseline's in the browser).
    findings: list[Finding]
    config: list[ConfigChange] = field(default_factory=list)
    # Whether either run's config was too large to keep (then the diff is not shown).
    config_dropped: bool = False


def finding_changes(now: Sequence[Finding], before: Sequence[Finding]) -> FindingChanges:
    """Pair two runs' findings by what they are about: appeared, went, stayed."""
    seen = {_about(f) for f in before}
    here = {_about(f) for f in now}
    return FindingChanges(
        appeared=most_severe_first(f for f in now if _about(f) not in seen),
        went=most_severe_first(f for f in before if _about(f) not in here),
        stayed=most_severe_first(f for f in now if _about(f) in seen),
    )


def config_changes(now: Mapping[str, str], before: Mapping[str, str]) -> list[ConfigChange]:
    """Return the keys whose values differ (or that one run lacks), sorted by key."""
    return [
        ConfigChange(key, now.get(key), before.get(key))
        for key in sorted(now.keys() | before.keys())
        if now.get(key) != before.get(key)
    ]


def comparison(
    summary: JobSummary, config: Mapping[str, str], context: RunContext
) -> Comparison | None:
    """Return a run against its baseline (None: no previous successful run to compare with)."""
    if context.baseline is None:
        return None
    # Its regression is the reduce's finding (the trend's), kept in the context, not the summary.
    now = [*summary.findings, *([context.regression] if context.regression else [])]
    dropped = context.baseline_config_dropped or summary.config_dropped
    return Comparison(
        now=summary,
        baseline=context.baseline,
        context=context,
        stages=compare(summary.stages, context.baseline_stages),
        rows_comparable=shared(summary.counting, context.baseline_counting),
        findings=most_severe_first(now),
        config=[] if dropped else config_changes(config, context.baseline_config),
        config_dropped=dropped,
    )
