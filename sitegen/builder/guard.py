"""Checks before a build replaces a published site: leftovers swept, mistakes refused.

Two mistakes would replace a history with nothing useful and look like success: log
directories that hold no logs at all (an unmounted volume, a wrong path), and the bundled
examples (what a build without ``--event-log-dir`` reads) over a site built from real logs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sitegen.builder.state.legacy import built_from
from sitegen.errors import UsageError
from sitegen.eventlog.localdir import LocalDir
from sitegen.examples import EXAMPLE_LOG_DIR
from sitegen.publish.writer import Publication
from sitegen.text.formatting import plural

if TYPE_CHECKING:
    from sitegen.builder.options import BuildOptions


def sweep(options: BuildOptions) -> None:
    """Sweep what killed builds left in the output."""
    # Every build sweeps, also one with nothing to do: else a killed full build's staging
    # directory stays until some log changes.
    Publication(options.output).sweep()


def refuse_mistakes(options: BuildOptions, has_logs: bool) -> None:
    """Refuse a build that would replace a site by mistake."""
    if not has_logs:
        _refuse_empty(options)
    if _reads_examples(options):
        _refuse_examples(options)


def _refuse_empty(options: BuildOptions) -> None:
    """Refuse to replace a site that has jobs with an empty one, unless allowed."""
    built = built_from(options.output)
    jobs = sum(built.values()) if built else 0
    if jobs and not options.allow_empty:
        dirs = ", ".join(str(d) for d in options.log_dirs)
        raise UsageError(
            f"no event logs in {dirs}, but the published site has {plural(jobs, 'job')}: "
            "refusing to replace it with an empty site (an unmounted volume or a wrong path?); "
            "pass --allow-empty to publish an empty site",
            options.output,
        )


def _reads_examples(options: BuildOptions) -> bool:
    """Tell whether this build reads the bundled example logs and nothing else."""
    return [d.resolve() for d in options.log_dirs] == [LocalDir(EXAMPLE_LOG_DIR).resolve()]


def _refuse_examples(options: BuildOptions) -> None:
    """Refuse to replace a site built from other logs with the bundled examples."""
    built = built_from(options.output)
    examples = {p.name for p in EXAMPLE_LOG_DIR.iterdir()}
    others = sorted(set(built or ()) - examples)
    if others:
        raise UsageError(
            f"the site was built from other logs ({others[0]}, …), and no --event-log-dir "
            "was given: refusing to replace it with the bundled examples; pass "
            "--event-log-dir DIR, or another --output for the examples",
            options.output,
        )
